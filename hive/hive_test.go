package hive

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

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

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func open(t *testing.T, dir string, agents ...string) *Hive {
	t.Helper()
	h, err := Open(dir, agents)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Open refuses a bad pattern as agentglob.Check does.
func TestOpenChecksPatterns(t *testing.T) {
	if _, err := Open(t.TempDir(), []string{"bots/*", "/abs"}); err == nil || !strings.HasPrefix(err.Error(), `agents: pattern "/abs" is absolute`) {
		t.Errorf("Open with an absolute pattern: %v", err)
	}
}

func TestParseConflictName(t *testing.T) {
	at := func(y int, mo time.Month, d, h, mi, s int) time.Time {
		return time.Date(y, mo, d, h, mi, s, 0, time.Local)
	}
	tests := []struct {
		name   string
		in     string
		want   ConflictName
		wantOK bool
	}{
		{"markdown", "memory.sync-conflict-20240131-093000-ABCDEFG.md",
			ConflictName{"memory.md", at(2024, 1, 31, 9, 30, 0), "ABCDEFG"}, true},
		{"device with digits outside base32", "memory.sync-conflict-20261201-095500-ABCDEF1.md",
			ConflictName{"memory.md", at(2026, 12, 1, 9, 55, 0), "ABCDEF1"}, true},
		{"no device (older Syncthing)", "memory.sync-conflict-20261201-095500.md",
			ConflictName{"memory.md", at(2026, 12, 1, 9, 55, 0), ""}, true},
		{"no device, no extension", "Makefile.sync-conflict-20261201-095500",
			ConflictName{"Makefile", at(2026, 12, 1, 9, 55, 0), ""}, true},
		{"no extension", "Makefile.sync-conflict-20231224-235959-Z234567",
			ConflictName{"Makefile", at(2023, 12, 24, 23, 59, 59), "Z234567"}, true},
		{"dots in name", "notes.v2.final.sync-conflict-20250601-120000-QWERTYU.md",
			ConflictName{"notes.v2.final.md", at(2025, 6, 1, 12, 0, 0), "QWERTYU"}, true},
		{"dotfile", ".sync-conflict-20250601-120000-QWERTYU.bashrc",
			ConflictName{".bashrc", at(2025, 6, 1, 12, 0, 0), "QWERTYU"}, true},
		{"trailing dot", "odd.sync-conflict-20250601-120000-QWERTYU.",
			ConflictName{"odd.", at(2025, 6, 1, 12, 0, 0), "QWERTYU"}, true},
		{"unknown modifier", "memory.sync-conflict-20240131-093000-.md",
			ConflictName{"memory.md", at(2024, 1, 31, 9, 30, 0), ""}, true},
		{"conflict of a conflict", "memory.sync-conflict-20240131-093000-ABCDEFG.sync-conflict-20240201-101010-HIJKLMN.md",
			ConflictName{"memory.sync-conflict-20240131-093000-ABCDEFG.md", at(2024, 2, 1, 10, 10, 10), "HIJKLMN"}, true},
		{"spaces and unicode", "Mëine Notizen.sync-conflict-20240131-093000-ABCDEFG.txt",
			ConflictName{"Mëine Notizen.txt", at(2024, 1, 31, 9, 30, 0), "ABCDEFG"}, true},

		{"plain file", "memory.md", ConflictName{}, false},
		{"empty", "", ConflictName{}, false},
		{"merely contains the words", "how-to-fix-sync-conflict-errors.md", ConflictName{}, false},
		{"marker without stamp", "memory.sync-conflict-.md", ConflictName{}, false},
		{"marker only", ".sync-conflict-", ConflictName{}, false},
		{"short date", "memory.sync-conflict-2024013-093000-ABCDEFG.md", ConflictName{}, false},
		{"letters in stamp", "memory.sync-conflict-2024AB31-093000-ABCDEFG.md", ConflictName{}, false},
		{"month 13", "memory.sync-conflict-20241331-093000-ABCDEFG.md", ConflictName{}, false},
		{"hour 25", "memory.sync-conflict-20240131-253000-ABCDEFG.md", ConflictName{}, false},
		{"missing dash", "memory.sync-conflict-20240131093000-ABCDEFG.md", ConflictName{}, false},
		{"lower-case device", "memory.sync-conflict-20240131-093000-abcdefg.md", ConflictName{}, false},
		{"device too long", "memory.sync-conflict-20240131-093000-ABCDEFGH.md", ConflictName{}, false},
		{"device too short", "memory.sync-conflict-20240131-093000-ABCDEF.md", ConflictName{}, false},
		{"device without dash", "memory.sync-conflict-20240131-093000ABCDEFG.md", ConflictName{}, false},
		{"two extensions after device", "memory.sync-conflict-20240131-093000-ABCDEFG.tar.gz", ConflictName{}, false},
		{"junk after device", "memory.sync-conflict-20240131-093000-ABCDEFG-copy.md", ConflictName{}, false},
		{"path, not base name", "agents/x/memory.sync-conflict-20240131-093000-ABCDEFG.md", ConflictName{}, false},
		{"no dot before marker", "memorysync-conflict-20240131-093000-ABCDEFG.md", ConflictName{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseConflictName(tt.in)
			if ok != tt.wantOK {
				t.Fatalf("ParseConflictName(%q) ok = %v, want %v (got %+v)", tt.in, ok, tt.wantOK, got)
			}
			if got.Original != tt.want.Original || !got.Time.Equal(tt.want.Time) || got.ShortDevice != tt.want.ShortDevice {
				t.Errorf("ParseConflictName(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			// The one parser decides for every caller: a conflict copy is
			// never memory and never an agent directory.
			if tt.in != "" && !strings.Contains(tt.in, "/") {
				if IsConflictCopy(tt.in) != tt.wantOK {
					t.Errorf("IsConflictCopy(%q) disagrees with ParseConflictName", tt.in)
				}
				if IsConflictCopy("agents/pam/"+tt.in) != tt.wantOK {
					t.Errorf("IsConflictCopy of a path ending in %q disagrees with ParseConflictName", tt.in)
				}
				if IsMarkdown(tt.in) && !IsHidden(tt.in) && IsMemoryFile(tt.in) == tt.wantOK {
					t.Errorf("IsMemoryFile(%q) = %v, want the opposite of a conflict copy", tt.in, !tt.wantOK)
				}
				if excluded(tt.in) != (tt.wantOK || IsHidden(tt.in)) {
					t.Errorf("excluded(%q) disagrees with ParseConflictName", tt.in)
				}
			}
		})
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		name                   string
		hidden, markdown, file bool
	}{
		{"memory.md", false, true, true},
		{"MEMORY.MD", false, true, true},
		{"notes.markdown", false, true, true},
		{"notes.txt", false, false, false},
		{".draft.md", true, true, false},
		{".git", true, false, false},
		{"memory.sync-conflict-20261201-095500.md", false, true, false},
		{"memory.sync-conflict-20261201-095500-ABCDEF1.md", false, true, false},
		{"how-to-fix-sync-conflict-errors.md", false, true, true},
		{"agents/pam/memory.md", false, true, true},
	}
	for _, tt := range tests {
		if got := IsHidden(filepath.Base(tt.name)); got != tt.hidden {
			t.Errorf("IsHidden(%q) = %v, want %v", tt.name, got, tt.hidden)
		}
		if got := IsMarkdown(tt.name); got != tt.markdown {
			t.Errorf("IsMarkdown(%q) = %v, want %v", tt.name, got, tt.markdown)
		}
		if got := IsMemoryFile(tt.name); got != tt.file {
			t.Errorf("IsMemoryFile(%q) = %v, want %v", tt.name, got, tt.file)
		}
	}
	for rel, want := range map[string]bool{
		"memory.md": false, "notes/a.md": false, ".git/x.md": true, "notes/.old/a.md": true,
		filepath.Join("notes", ".old", "a.md"): true, "": false, "a/.b": true,
	} {
		if got := IsHiddenPath(rel); got != want {
			t.Errorf("IsHiddenPath(%q) = %v, want %v", rel, got, want)
		}
	}
	for _, name := range []string{"memory.md", "Memory.MD"} {
		if !IsMainMemoryFile(name) {
			t.Errorf("IsMainMemoryFile(%q) = false", name)
		}
	}
	if IsMainMemoryFile("memory.markdown") || IsMainMemoryFile("notes.md") {
		t.Error("isMainMemory takes another file for memory.md")
	}
}

func TestNormalizeWingID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Pam", "pam"},
		{" dwight ", "dwight"},
		{"db-2.x_y", "db-2.x_y"},
		{"", ""},
		{"bad name", ""},
		{"..", ""},
		{"a..b", ""},
		{"-x", ""},
		{strings.Repeat("a", 65), ""},
	}
	for _, tt := range tests {
		got, err := NormalizeWingID(tt.in)
		if got != tt.want || (tt.want == "") != errors.Is(err, ErrBadWingID) {
			t.Errorf("NormalizeWingID(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// findHive builds the hive TestFind and TestAgents look at, and returns it
// with the real paths of its two symlinks' targets.
func findHive(t *testing.T) (hive, outside, inside string) {
	tmp := t.TempDir()
	hive = filepath.Join(tmp, "hive")
	mkdirs(t, hive,
		"agents/pam", "agents/dwight", "agents/.trash", "agents/jim.sync-conflict-20240131-093000-ABCDEFG",
		"agents/toby.sync-conflict-20261201-095500", "agents/notes.md",
		"bots/kevin", "bots/pam", "bots/readme.md", "bots/Bad Name",
		"teams/red/agents/oscar", "teams/red/readme.md", "teams/.old/agents/toby",
		"crew/x/sub/y",
		"elsewhere-target/z",
	)
	mkdirs(t, tmp, "outside/creed", "outside/agents/angela")
	symlink(t, filepath.Join(tmp, "outside", "creed"), filepath.Join(hive, "bots", "creed"))
	symlink(t, filepath.Join(tmp, "outside"), filepath.Join(hive, "teams", "blue"))
	symlink(t, filepath.Join(hive, "elsewhere-target", "z"), filepath.Join(hive, "bots", "sam"))
	symlink(t, filepath.Join(hive, "agents", "pam"), filepath.Join(hive, "bots", "angie"))
	symlink(t, filepath.Join(hive, "missing"), filepath.Join(hive, "bots", "broken"))
	var err error
	if outside, err = filepath.EvalSymlinks(filepath.Join(tmp, "outside", "creed")); err != nil {
		t.Fatal(err)
	}
	if inside, err = filepath.EvalSymlinks(filepath.Join(hive, "elsewhere-target", "z")); err != nil {
		t.Fatal(err)
	}
	return hive, outside, inside
}

var findGlobs = []string{"bots/*", "teams/*/agents/*", "crew/*", "crew/*/sub/*", "bots/*"}

func TestFind(t *testing.T) {
	hive, outside, inside := findHive(t)
	h := open(t, hive, findGlobs...)
	got, err := h.Find()
	if err != nil {
		t.Fatal(err)
	}
	realPam, _ := filepath.EvalSymlinks(filepath.Join(hive, "agents", "pam"))
	want := []Match{
		{Rel: "agents/dwight"},
		{Rel: "agents/pam"},
		{Rel: "bots/Bad Name"},
		{Rel: "bots/angie", Link: true, Target: realPam},
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
		want[i].Canonical = ResolveParent(want[i].Path)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Find:\n got %+v\nwant %+v", got, want)
	}
	if got, err := open(t, hive).Find(); err != nil || len(got) != 2 {
		t.Fatalf("Default alone found %+v, %v; want agents/* alone", got, err)
	}
	if got, err := open(t, filepath.Join(hive, "nope"), findGlobs...).Find(); err != nil || len(got) != 0 {
		t.Fatalf("Find in a missing hive: %+v, %v", got, err)
	}

	parents, err := h.Parents()
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

	// A file where a pattern wants a directory is reported with what was
	// found elsewhere.
	other := t.TempDir()
	mkdirs(t, other, "agents/pam")
	if err := os.WriteFile(filepath.Join(other, "bots"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = open(t, other, "bots/*").Find()
	if !errors.Is(err, syscall.ENOTDIR) || len(got) != 1 || got[0].Rel != "agents/pam" {
		t.Fatalf("Find with a file bots = %+v, %v; want agents/pam and ENOTDIR", got, err)
	}
}

func TestAgents(t *testing.T) {
	hive, _, _ := findHive(t)
	h := open(t, hive, findGlobs...)
	agents, skipped, err := h.Agents()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range agents {
		got = append(got, a.Rel+"="+a.Wing)
	}
	want := []string{"agents/dwight=dwight", "agents/pam=pam", "bots/kevin=kevin", "bots/sam=sam",
		"teams/blue/agents/angela=angela", "teams/red/agents/oscar=oscar", "crew/x=x"}
	if !slices.Equal(got, want) {
		t.Errorf("Agents = %q\nwant %q", got, want)
	}
	for _, a := range agents {
		if a.Rel == "bots/sam" && a.Root() != a.Target {
			t.Errorf("a symlinked agent's Root = %s, want its target %s", a.Root(), a.Target)
		}
		if a.Rel == "agents/pam" && a.Root() != a.Path {
			t.Errorf("agents/pam's Root = %s, want %s", a.Root(), a.Path)
		}
	}
	wantSkipped := []struct {
		rel    string
		reason SkipReason
		msg    string
	}{
		{"bots/Bad Name", BadName, `wing id "Bad Name" is not valid`},
		{"bots/angie", Aliased, "which is, holds or lies in agent directory agents/pam"},
		{"bots/creed", OutsideHive, "outside the hive"},
		{"bots/pam", SameWing, `wing id "pam" is taken by agent directory agents/pam`},
		{"crew/x/sub/y", Nested, "inside agent directory crew/x"},
	}
	if len(skipped) != len(wantSkipped) {
		t.Fatalf("skipped %+v, want %d", skipped, len(wantSkipped))
	}
	for i, w := range wantSkipped {
		s := skipped[i]
		if s.Rel != w.rel || s.Reason != w.reason || !strings.Contains(s.Err.Error(), w.msg) {
			t.Errorf("skipped[%d] = %s %d %v; want %s %d %q", i, s.Rel, s.Reason, s.Err, w.rel, w.reason, w.msg)
		}
	}
	if !errors.Is(skipped[0].Err, ErrBadWingID) {
		t.Errorf("a bad name's error %v does not match ErrBadWingID", skipped[0].Err)
	}

	// A link to the directory holding it aliases every agent there.
	self := t.TempDir()
	mkdirs(t, self, "agents/pam")
	symlink(t, filepath.Join(self, "agents"), filepath.Join(self, "agents", "all"))
	if _, skipped, _ := open(t, self).Agents(); len(skipped) != 1 || skipped[0].Reason != Aliased ||
		!strings.Contains(skipped[0].Err.Error(), "the directory holding the link") {
		t.Errorf("a link to agents/ inside it: skipped %+v", skipped)
	}

	a, err := h.WingDir("kevin")
	if err != nil || a.Rel != "bots/kevin" {
		t.Errorf("WingDir(kevin) = %+v, %v", a, err)
	}
	if a, err := h.WingDir("pam"); err != nil || a.Rel != "agents/pam" {
		t.Errorf("WingDir(pam) = %+v, %v; want the first directory with the wing", a, err)
	}
	if _, err := h.WingDir("creed"); !errors.Is(err, ErrNoAgentDir) {
		t.Errorf("WingDir of a link leading out = %v, want ErrNoAgentDir", err)
	}
}

func TestAgentOfAndParent(t *testing.T) {
	g, err := NewGlobs([]string{"bots/*", "teams/*/agents/*", "crew/*", "crew/*/sub/*"})
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
		{"agents/pam.sync-conflict-20261201-095500/a.md", "", "", false, false},
		{"agents/pam.sync-conflicts/a.md", "agents/pam.sync-conflicts", "a.md", true, false},
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
		dir, below, ok := g.AgentOf(tt.rel)
		if dir != tt.dir || below != tt.below || ok != tt.ok {
			t.Errorf("AgentOf(%q) = %q, %q, %t; want %q, %q, %t", tt.rel, dir, below, ok, tt.dir, tt.below, tt.ok)
		}
		if got := g.Parent(tt.rel); got != tt.parent {
			t.Errorf("Parent(%q) = %t, want %t", tt.rel, got, tt.parent)
		}
	}
	// A glob never takes agents/ itself for an agent.
	g, _ = NewGlobs([]string{"*"})
	if dir, below, ok := g.AgentOf("agents/pam/memory.md"); dir != "agents/pam" || below != "memory.md" || !ok {
		t.Errorf("with agents *: AgentOf(agents/pam/memory.md) = %q, %q, %v", dir, below, ok)
	}
}

func TestLocate(t *testing.T) {
	const cp = "memory.sync-conflict-20240131-093000-ABCDEFG.md"
	globs := []string{"bots/*", "teams/*/agents/*"}
	tests := []struct {
		rel    string
		agents []string
		wing   string
		dir    string
		below  string
		err    error
	}{
		{"agents/dwight/" + cp, nil, "dwight", "agents/dwight", cp, nil},
		{"agents/Dwight/notes/x.md", nil, "dwight", "agents/Dwight", "notes/x.md", nil},
		{"agents/dwight", nil, "dwight", "agents/dwight", "", nil},
		{"agents/dwight/.git/x", nil, "dwight", "agents/dwight", ".git/x", nil},
		{"agents/" + cp, nil, "", "", "", ErrNoAgentDir},
		{"shared/readme.md", nil, "", "", "", ErrNoAgentDir},
		{"agents/bad name/" + cp, nil, "", "agents/bad name", cp, ErrBadWingID},
		{"agents/.hidden/" + cp, nil, "", "", "", ErrNoAgentDir},
		// Directories the agents globs match are agent directories too.
		{"bots/kevin/" + cp, nil, "", "", "", ErrNoAgentDir},
		{"bots/kevin/" + cp, globs, "kevin", "bots/kevin", cp, nil},
		{"bots/Kevin/notes/" + cp, globs, "kevin", "bots/Kevin", "notes/" + cp, nil},
		{"teams/red/agents/oscar/" + cp, globs, "oscar", "teams/red/agents/oscar", cp, nil},
		{"teams/red/" + cp, globs, "", "", "", ErrNoAgentDir},
		{"bots/.hidden/" + cp, globs, "", "", "", ErrNoAgentDir},
		// A directory whose wing id agents/pam has is pam's too.
		{"bots/pam/" + cp, globs, "pam", "bots/pam", cp, nil},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		loc := open(t, dir, tt.agents...).Locate(filepath.Join(dir, filepath.FromSlash(tt.rel)))
		if loc.Wing != tt.wing || loc.AgentDir != tt.dir || loc.Rel != tt.below || !errors.Is(loc.Err, tt.err) || (tt.err == nil) != (loc.Err == nil) {
			t.Errorf("Locate(%q) with agents %q = %+v; want wing %q, dir %q, rel %q, err %v", tt.rel, tt.agents, loc, tt.wing, tt.dir, tt.below, tt.err)
		}
	}
	dir := t.TempDir()
	if loc := open(t, dir).Locate(filepath.Join(t.TempDir(), "agents", "pam", "memory.md")); !errors.Is(loc.Err, ErrOutsideHive) || loc.Wing != "" {
		t.Errorf("Locate outside the hive = %+v", loc)
	}
}

func TestRel(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	mkdirs(t, real, "agents/dwight")
	link := filepath.Join(dir, "link")
	symlink(t, real, link)
	symlink(t, filepath.Join(real, "agents"), filepath.Join(dir, "agentslink"))
	h := open(t, link)
	const cp = "memory.sync-conflict-20240131-093000-ABCDEFG.md"
	want := filepath.Join("agents", "dwight", cp)
	tests := []struct {
		path string
		ok   bool
	}{
		{filepath.Join(link, want), true},
		{filepath.Join(real, want), true}, // Syncthing may know the folder by its real path
		{filepath.Join(dir, "agentslink", "..", "real", want), true},
		{filepath.Join(dir, "elsewhere", cp), false},
		{link, false},
		{filepath.Join(dir, "linkx", cp), false},
	}
	for _, tt := range tests {
		rel, ok := h.Rel(tt.path)
		if ok != tt.ok || (ok && rel != want) {
			t.Errorf("Rel(%s) = %q, %v; want %v", tt.path, rel, ok, tt.ok)
		}
	}
	if !h.Contains(filepath.Join(link, want)) || h.Contains(filepath.Join(real, want)) {
		t.Error("Contains goes by the hive as given")
	}

	// A path reached through a link leading out of the hive lies outside.
	out := t.TempDir()
	mkdirs(t, out, "creed/memory.md")
	symlink(t, filepath.Join(out, "creed"), filepath.Join(real, "agents", "creed"))
	if !h.LeadsOut(filepath.Join(link, "agents", "creed", "memory.md")) {
		t.Error("LeadsOut of a file behind a link out of the hive = false")
	}
	if h.LeadsOut(filepath.Join(link, "agents", "dwight")) || h.LeadsOut(filepath.Join(link, "agents", "gone.md")) {
		t.Error("LeadsOut of a path inside the hive, or of one that is gone = true")
	}
}

func TestWings(t *testing.T) {
	hv := t.TempDir()
	mkdirs(t, hv, "agents/pam", "agents/dwight", "agents/Jim", "agents/jim", "agents/.hidden", "agents/bad name", "agents/notes.md")
	symlink(t, filepath.Join(hv, "agents", "pam"), filepath.Join(hv, "agents", "angela"))
	symlink(t, filepath.Join(hv, "nowhere"), filepath.Join(hv, "agents", "kevin"))
	empty := t.TempDir()
	tests := []struct {
		dir  string
		want []string
	}{
		{hv, []string{"angela", "dwight", "jim", "pam"}},
		{empty, nil},
		{filepath.Join(empty, "missing"), nil},
	}
	for _, tt := range tests {
		got, err := open(t, tt.dir).Wings()
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Wings(%s) = %v, %v; want %v", tt.dir, got, err, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	tmp := t.TempDir()
	t.Chdir(tmp)
	mkdirs(t, tmp,
		"hive/agents/pam/memory.md",
		"hive/agents/jim/notes.md",
		"readme/README.md",
		"docs/guide/intro.md",
		"loose/memory.md",
		"team/pam/memory.md",
		"wide/agents/.hidden/memory.md",
		"conflicted/memory.sync-conflict-20261201-095500.md",
		"empty", "new/agents",
	)
	tests := []struct {
		dir    string
		agents []string
		looks  Resemblance // 0 when the hive passes
		meant  string
		msg    string
	}{
		{"hive", nil, 0, "", ""},
		{"empty", nil, 0, "", ""},
		{"new", nil, 0, "", ""},
		{"readme", nil, 0, "", ""},
		{"docs", nil, 0, "", ""},
		{"wide/agents", nil, 0, "", ""},
		{"conflicted", nil, 0, "", ""},
		{"team", []string{"*"}, 0, "", ""}, // directories the agents globs match make a hive too
		{"hive/agents", nil, AgentsDirectory, "hive", "hive/agents has no agents/ directory; it looks like the agents directory of hive hive"},
		{"hive/agents/", nil, AgentsDirectory, "hive", "hive/agents/ has no agents/ directory"},
		{"hive/agents/pam", nil, AgentDirectory, "hive", "hive/agents/pam has no agents/ directory; it looks like an agent directory of hive hive"},
		{"hive/agents/jim", nil, AgentDirectory, "hive", ""},
		{filepath.Join(tmp, "hive", "agents"), nil, AgentsDirectory, filepath.Join(tmp, "hive"), ""},
		{"loose", nil, HoldsMemory, filepath.Join("loose", "agents", "<id>"), "loose has no agents/ directory but holds memory.md, like an agent directory: a hive keeps each agent in agents/<id>/ below it; move the files to loose/agents/<id>"},
		{"team", nil, SubdirsHoldMemory, filepath.Join("team", "agents"), "team has no agents/ directory but its subdirectories hold memory.md, like agent directories: a hive keeps them in agents/<id>/; move them into team/agents"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			err := open(t, tt.dir, tt.agents...).Check()
			if tt.looks == 0 {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			var nh *NotHiveError
			if !errors.Is(err, ErrNotHive) || !errors.As(err, &nh) || nh.Dir != tt.dir || nh.Looks != tt.looks || nh.Meant != tt.meant || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Check: %#v (%v); want %d, meant %q, %q", err, err, tt.looks, tt.meant, tt.msg)
			}
			if strings.Contains(err.Error(), "--") {
				t.Errorf("Check's error gives CLI advice: %v", err)
			}
		})
	}
	// From inside the agents directory there is no relative parent.
	t.Chdir(filepath.Join(tmp, "hive", "agents"))
	var nh *NotHiveError
	if err := open(t, ".").Check(); !errors.As(err, &nh) || nh.Meant != filepath.Join(tmp, "hive") {
		t.Fatalf("Check(.): %v", err)
	}
}

func TestUpDir(t *testing.T) {
	tests := []struct {
		given, abs string
		n          int
		want       string
	}{
		{"hive/agents", "/w/hive/agents", 1, "hive"},
		{"agents", "/w/agents", 1, "."},
		{".", "/w/agents", 1, "/w"},
		{"pam", "/w/agents/pam", 2, "/w"},
		{"../agents/pam", "/r/agents/pam", 2, ".."},
		{"..", "/a/b", 1, "/a"},
		{"/w/hive/agents/pam", "/w/hive/agents/pam", 2, "/w/hive"},
		{"/", "/", 1, "/"},
	}
	for _, tt := range tests {
		if got := upDir(tt.given, tt.abs, tt.n); got != tt.want {
			t.Errorf("upDir(%q, %q, %d) = %q, want %q", tt.given, tt.abs, tt.n, got, tt.want)
		}
	}
}

func TestMinedAsHive(t *testing.T) {
	tmp := t.TempDir()
	mkdirs(t, tmp, "hive/agents/pam/memory.md", "hive/agents/pam/sub/x/memory.md", "team/bots/kevin/memory.md", "plain/notes.md")
	real := func(p string) string {
		r, err := filepath.EvalSymlinks(filepath.Join(tmp, p))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	bots, _ := NewGlobs([]string{"bots/*"})
	deep, _ := NewGlobs([]string{"sub/*"})
	tests := []struct {
		root       string
		globs      Globs
		configured string
		want       string // the hive, relative to tmp; "" when none
	}{
		{"hive", Globs{}, "", "hive"},
		{"hive/agents", Globs{}, "", "hive"},
		{"hive/agents/pam", Globs{}, "", ""},
		{"hive/agents/pam", deep, "", ""},                         // an agent directory is never a hive
		{"hive/agents/pam", deep, filepath.Join(tmp, "hive"), ""}, // known from the configured hive
		{"team", bots, "", "team"},
		{"team", Globs{}, "", ""},
		{"plain", bots, "", ""},
		{"plain/notes.md", Globs{}, "", ""},
	}
	for _, tt := range tests {
		root := real(tt.root)
		info, err := os.Stat(root)
		if err != nil {
			t.Fatal(err)
		}
		h, ok := MinedAsHive(root, info, tt.globs, tt.configured)
		switch {
		case tt.want == "" && ok:
			t.Errorf("MinedAsHive(%s) = %s, want none", tt.root, h.Dir())
		case tt.want != "" && (!ok || h.Dir() != real(tt.want)):
			t.Errorf("MinedAsHive(%s) = %v, %v; want %s", tt.root, h, ok, tt.want)
		}
	}
}

func TestScanConflicts(t *testing.T) {
	root := t.TempDir()
	mkdirs(t, root,
		"agents/dwight/memory.md",
		"agents/dwight/memory.sync-conflict-20240131-093000-ABCDEFG.md",
		"agents/jim/memory.sync-conflict-20240201-101010-HIJKLMN.md",
		"agents/jim/memory.md",
		"agents/kevin/memory.sync-conflict-20261201-095500.md",
		"agents/oscar/memory.sync-conflict-20261201-095500-ABCDEF1.md",
		"agents/pam/sync-conflict-howto.md",
		".stversions/agents/x/memory.sync-conflict-20240131-093000-ABCDEFG.md",
		".stfolder/ignored.sync-conflict-20240131-093000-ABCDEFG.md",
		// A directory with a conflict-like name is not a file conflict.
		"dir.sync-conflict-20240131-093000-ABCDEFG",
	)
	got, err := ScanConflicts(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ path, original, short string }{
		{"agents/dwight/memory.sync-conflict-20240131-093000-ABCDEFG.md", "agents/dwight/memory.md", "ABCDEFG"},
		{"agents/jim/memory.sync-conflict-20240201-101010-HIJKLMN.md", "agents/jim/memory.md", "HIJKLMN"},
		{"agents/kevin/memory.sync-conflict-20261201-095500.md", "agents/kevin/memory.md", ""},
		{"agents/oscar/memory.sync-conflict-20261201-095500-ABCDEF1.md", "agents/oscar/memory.md", "ABCDEF1"},
	}
	if len(got) != len(want) {
		t.Fatalf("ScanConflicts found %d conflicts, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Path != filepath.Join(root, filepath.FromSlash(w.path)) {
			t.Errorf("conflict %d path = %s, want %s", i, got[i].Path, w.path)
		}
		if got[i].Original != filepath.Join(root, filepath.FromSlash(w.original)) {
			t.Errorf("conflict %d original = %s, want %s", i, got[i].Original, w.original)
		}
		if got[i].Name.ShortDevice != w.short || got[i].ModTime.IsZero() {
			t.Errorf("conflict %d = %+v, want short %s and a mod time", i, got[i], w.short)
		}
	}

	// A root that is a symlink is followed, and paths stay below it.
	link := filepath.Join(t.TempDir(), "link")
	symlink(t, filepath.Join(root, "agents", "kevin"), link)
	if got, err := ScanConflicts(context.Background(), link); err != nil || len(got) != 1 || filepath.Dir(got[0].Path) != link {
		t.Errorf("ScanConflicts of a link = %+v, %v", got, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ScanConflicts(ctx, root); err == nil {
		t.Error("ScanConflicts with a cancelled context returned no error")
	}
	if _, err := ScanConflicts(context.Background(), filepath.Join(root, "missing")); err == nil {
		t.Error("ScanConflicts of a missing root returned no error")
	}
}

func TestConflictCopies(t *testing.T) {
	tmp := t.TempDir()
	hv := filepath.Join(tmp, "hive")
	const old, bare = "memory.sync-conflict-20261201-095500.md", "memory.sync-conflict-20261201-095500-ABCDEF1.md"
	mkdirs(t, hv,
		"agents/pam/memory.md", "agents/pam/"+old,
		"bots/pam/"+bare, // pam's wing id is taken; the copy still counts for pam
		"agents/jim/notes/"+bare,
		"shared/"+old,
		"elsewhere/oscar/"+bare,
	)
	mkdirs(t, tmp, "outside/creed/"+old)
	symlink(t, filepath.Join(hv, "elsewhere", "oscar"), filepath.Join(hv, "agents", "oscar"))
	symlink(t, filepath.Join(tmp, "outside", "creed"), filepath.Join(hv, "agents", "creed"))
	h := open(t, hv, "bots/*")
	got := func(wing string) []string {
		t.Helper()
		copies, err := h.ConflictCopies(context.Background(), wing)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range copies {
			rel, _ := filepath.Rel(hv, c.Path)
			out = append(out, filepath.ToSlash(rel)+"="+c.Wing)
		}
		slices.Sort(out)
		return out
	}
	all := []string{
		"agents/jim/notes/" + bare + "=jim",
		"agents/oscar/" + bare + "=oscar", // reached by the walk and through the link: once, with its wing
		"agents/pam/" + old + "=pam",
		"bots/pam/" + bare + "=pam",
		"shared/" + old + "=",
	}
	if g := got(""); !slices.Equal(g, all) {
		t.Errorf("ConflictCopies of the hive = %q\nwant %q", g, all)
	}
	if g, w := got("pam"), []string{"agents/pam/" + old + "=pam", "bots/pam/" + bare + "=pam"}; !slices.Equal(g, w) {
		t.Errorf("ConflictCopies of pam = %q, want %q", g, w)
	}
	if g := got("creed"); len(g) != 0 {
		t.Errorf("ConflictCopies of a link leading out of the hive = %q, want none", g)
	}
	if g := got("nobody"); len(g) != 0 {
		t.Errorf("ConflictCopies of an unknown wing = %q", g)
	}
}

func TestInAgentDir(t *testing.T) {
	tmp := t.TempDir()
	mkdirs(t, tmp, "hive/agents/pam/notes/a.md", "hive/bots/kevin/x.md", "loose/memory.md", "plain/notes.md")
	hv, err := filepath.EvalSymlinks(filepath.Join(tmp, "hive"))
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(hv)
	bots, _ := NewGlobs([]string{"bots/*"})
	tests := []struct {
		dir          string
		globs        Globs
		configured   string
		inside, self bool
	}{
		{"hive/agents/pam", Globs{}, "", true, true},
		{"hive/agents/pam/notes", Globs{}, "", false, false}, // no hive configured: only agents/<id> itself is known
		{"hive/agents/pam/notes", Globs{}, hv, true, false},
		{"hive/bots/kevin", bots, hv, true, true},
		{"hive/bots/kevin", Globs{}, hv, false, false},
		{"loose", Globs{}, "", false, true}, // holds memory.md
		{"plain", Globs{}, "", false, false},
	}
	for _, tt := range tests {
		inside, self := InAgentDir(filepath.Join(root, filepath.FromSlash(tt.dir)), tt.globs, tt.configured)
		if inside != tt.inside || self != tt.self {
			t.Errorf("InAgentDir(%s, configured %q) = %v, %v; want %v, %v", tt.dir, tt.configured, inside, self, tt.inside, tt.self)
		}
	}
}

// FuzzParseConflictName: the parser never panics; what it accepts is a
// base name holding the marker, whose Original is a plain base name that
// is itself no conflict copy of the same form, and whose ShortDevice is
// empty or seven characters.
func FuzzParseConflictName(f *testing.F) {
	for _, s := range []string{
		"memory.sync-conflict-20240131-093000-ABCDEFG.md",
		"memory.sync-conflict-20240131-093000-.md",
		"memory.sync-conflict-20240131-093000.md",
		"notes.sync-conflict-20240131-093000-ABCDEFG.sync-conflict-20240201-101010-HIJKLMN.md",
		"Makefile.sync-conflict-20231231-235959-ZZZZZZZ",
		".sync-conflict-20240131-093000-ABCDEFG.md",
		"a.sync-conflict-20241399-250000-ABCDEFG.md",
		"sync-conflict",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		cn, ok := ParseConflictName(name)
		if !ok {
			if cn != (ConflictName{}) {
				t.Fatalf("rejected %q but returned %+v", name, cn)
			}
			return
		}
		if !strings.Contains(name, "sync-conflict-") || strings.ContainsAny(name, `/\`) {
			t.Fatalf("accepted %q", name)
		}
		if cn.Original == "" || cn.Original == "." || cn.Original == ".." || strings.ContainsAny(cn.Original, `/\`) {
			t.Fatalf("%q: Original %q", name, cn.Original)
		}
		if len(cn.Original) >= len(name) {
			t.Fatalf("%q: Original %q is not shorter", name, cn.Original)
		}
		if cn.ShortDevice != "" && len(cn.ShortDevice) != 7 {
			t.Fatalf("%q: ShortDevice %q", name, cn.ShortDevice)
		}
		if !IsConflictCopy(name) {
			t.Fatalf("ParseConflictName accepts %q, IsConflictCopy does not", name)
		}
	})
}
