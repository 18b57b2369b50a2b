package agentglob

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		pattern string
		want    string // "" when valid
	}{
		{"bots/*", ""},
		{"teams/*/agents/*", ""},
		{"./bots/[a-m]*", ""},
		{"", `pattern "" is empty`},
		{"  ", `pattern "  " is empty`},
		{"/srv/bots/*", `pattern "/srv/bots/*" is absolute`},
		{"../other/*", `pattern "../other/*" has a ".." element`},
		{"bots/../x/*", `pattern "bots/../x/*" has a ".." element`},
		{"bots/[a-", `pattern "bots/[a-" is malformed: syntax error in pattern`},
		{`bots/x\`, `pattern "bots/x\\" is malformed`},
		{".stversions/*", `pattern ".stversions/*" names a hidden directory`},
		{".", `pattern "." matches the hive itself`},
	}
	for _, tt := range tests {
		err := Check(tt.pattern)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Check(%q) = %v, want nil", tt.pattern, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Check(%q) = %v, want %q", tt.pattern, err, tt.want)
		}
	}
	if err := Check("bots/["); !errors.Is(err, filepath.ErrBadPattern) {
		t.Errorf("Check of a malformed pattern = %v, want ErrBadPattern", err)
	}
	if _, err := New([]string{"bots/*", "/abs"}); err == nil || !strings.HasPrefix(err.Error(), `agents: pattern "/abs" is absolute`) {
		t.Errorf("New with an absolute pattern: %v", err)
	}
}

// mkdirs creates directories (and, for names ending in .md, files) below root.
func mkdirs(t *testing.T, root string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		full := filepath.Join(root, filepath.FromSlash(p))
		dir := full
		if strings.HasSuffix(p, ".md") {
			dir = filepath.Dir(full)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if dir != full {
			if err := os.WriteFile(full, []byte("- x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestFind(t *testing.T) {
	tmp := t.TempDir()
	hive := filepath.Join(tmp, "hive")
	mkdirs(t, hive,
		"agents/pam", "agents/dwight", "agents/.trash", "agents/jim.sync-conflict-20240131-093000-ABCDEFG",
		"agents/notes.md",
		"bots/kevin", "bots/pam", "bots/readme.md",
		"teams/red/agents/oscar", "teams/red/readme.md", "teams/.old/agents/toby",
		"crew/x/sub/y",
		"elsewhere-target/z",
	)
	mkdirs(t, tmp, "outside/creed")
	if err := os.Symlink(filepath.Join(tmp, "outside", "creed"), filepath.Join(hive, "bots", "creed")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(tmp, "outside"), filepath.Join(hive, "teams", "blue")); err != nil {
		t.Fatal(err)
	}
	mkdirs(t, tmp, "outside/agents/angela")
	if err := os.Symlink(filepath.Join(hive, "elsewhere-target", "z"), filepath.Join(hive, "bots", "sam")); err != nil {
		t.Fatal(err)
	}
	outside, err := filepath.EvalSymlinks(filepath.Join(tmp, "outside", "creed"))
	if err != nil {
		t.Fatal(err)
	}
	inside, err := filepath.EvalSymlinks(filepath.Join(hive, "elsewhere-target", "z"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(hive, "missing"), filepath.Join(hive, "bots", "broken")); err != nil {
		t.Fatal(err)
	}
	s, err := New([]string{"bots/*", "teams/*/agents/*", "crew/*", "crew/*/sub/*", "bots/*"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Find(hive)
	if err != nil {
		t.Fatal(err)
	}
	want := []Match{
		{Rel: "agents/dwight"},
		{Rel: "agents/pam"},
		{Rel: "bots/creed", Link: true, Target: outside, Outside: true},
		{Rel: "bots/kevin"},
		{Rel: "bots/pam"},
		{Rel: "bots/sam", Link: true, Target: inside},
		{Rel: "teams/blue/agents/angela", ViaLink: true},
		{Rel: "teams/red/agents/oscar"},
		{Rel: "crew/x"},
		{Rel: "crew/x/sub/y", Inside: "crew/x"},
	}
	for i := range want {
		want[i].Path = filepath.Join(hive, filepath.FromSlash(want[i].Rel))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Find:\n got %+v\nwant %+v", got, want)
	}
	if got, err := (Set{}).Find(hive); err != nil || len(got) != 2 {
		t.Fatalf("the zero Set found %+v, %v; want agents/* alone", got, err)
	}
	if got, err := s.Find(filepath.Join(tmp, "nope")); err != nil || len(got) != 0 {
		t.Fatalf("Find in a missing hive: %+v, %v", got, err)
	}

	parents, err := s.Parents(hive)
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, p := range parents {
		rels = append(rels, p.Rel)
	}
	wantParents := []string{"agents", "bots", "teams", "teams/blue", "teams/blue/agents", "teams/red", "teams/red/agents", "crew", "crew/x", "crew/x/sub"}
	if !slices.Equal(rels, wantParents) {
		t.Fatalf("Parents = %q, want %q", rels, wantParents)
	}
}

// TestFindReportsNonDirectory: a file where a pattern wants a directory is
// reported with what was found elsewhere.
func TestFindReportsNonDirectory(t *testing.T) {
	hive := t.TempDir()
	mkdirs(t, hive, "agents/pam")
	if err := os.WriteFile(filepath.Join(hive, "bots"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := New([]string{"bots/*"})
	got, err := s.Find(hive)
	if !errors.Is(err, syscall.ENOTDIR) || len(got) != 1 || got[0].Rel != "agents/pam" {
		t.Fatalf("Find with a file bots = %+v, %v; want agents/pam and ENOTDIR", got, err)
	}
}

func TestAgentOfAndParent(t *testing.T) {
	s, err := New([]string{"bots/*", "teams/*/agents/*", "crew/*", "crew/*/sub/*"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rel, dir, below string
		ok, parent      bool
	}{
		{"", "", "", false, true},
		{"agents", "", "", false, true},
		{"agents/pam", "agents/pam", "", true, false},
		{"agents/pam/notes/a.md", "agents/pam", "notes/a.md", true, false},
		{"agents/.trash/a.md", "", "", false, false},
		{"agents/pam.sync-conflict-20240131-093000-ABCDEFG/a.md", "", "", false, false},
		{"bots", "", "", false, true},
		{"bots/kevin/memory.md", "bots/kevin", "memory.md", true, false},
		{"teams/red", "", "", false, true},
		{"teams/red/agents/oscar/memory.md", "teams/red/agents/oscar", "memory.md", true, false},
		{"teams/red/readme.md", "", "", false, false},
		{"crew/x/sub/y/memory.md", "crew/x", "sub/y/memory.md", true, false},
		{"crew/x/sub", "crew/x", "sub", true, true},
		{"shared/readme.md", "", "", false, false},
		{"README.md", "", "", false, false},
	}
	for _, tt := range tests {
		dir, below, ok := s.AgentOf(tt.rel)
		if dir != tt.dir || below != tt.below || ok != tt.ok {
			t.Errorf("AgentOf(%q) = %q, %q, %t; want %q, %q, %t", tt.rel, dir, below, ok, tt.dir, tt.below, tt.ok)
		}
		if got := s.Parent(tt.rel); got != tt.parent {
			t.Errorf("Parent(%q) = %t, want %t", tt.rel, got, tt.parent)
		}
	}
}
