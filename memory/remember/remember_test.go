package remember

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/memory/memfile"
	"github.com/memminer/memminer/palace"
)

var day = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

type fixture struct {
	hive string
	p    *palace.Palace
	opts Options
}

func newFixture(t testing.TB, files map[string]string) *fixture {
	t.Helper()
	hive := t.TempDir()
	for rel, content := range files {
		path := filepath.Join(hive, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := palace.Open(context.Background(), t.TempDir(), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return &fixture{hive: hive, p: p, opts: Options{Hive: hive, Machine: "laptop", Now: func() time.Time { return day }}}
}

func (f *fixture) remember(t *testing.T, req Request) (Result, error) {
	t.Helper()
	return Remember(context.Background(), f.p, req, f.opts)
}

func (f *fixture) read(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.hive, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func (f *fixture) search(t *testing.T, q string) []palace.Hit {
	t.Helper()
	hits, err := f.p.Search(context.Background(), q, palace.SearchOptions{Results: 5})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

func TestRememberCreatesAndIsSearchable(t *testing.T) {
	f := newFixture(t, nil)
	res, err := f.remember(t, Request{Wing: "Dwight", Text: "The beet harvest starts in October", Heading: "Farm", Tags: []string{"#beets"}})
	if err != nil {
		t.Fatal(err)
	}
	want := OwnedFileStart + "# dwight's memory\n\n## Farm\n- The beet harvest starts in October #beets (added 2026-12-01)\n"
	if got := f.read(t, "agents/dwight/memory.laptop.md"); got != want {
		t.Errorf("memory.laptop.md = %q, want %q", got, want)
	}
	if res.Wing != "dwight" || res.File != "agents/dwight/memory.laptop.md" || res.Line != 7 || !res.Added || res.ID == "" || res.DuplicateOf != nil {
		t.Errorf("result = %+v", res)
	}
	if n := len(f.p.Notes("dwight")); n != 1 {
		t.Errorf("%d notes mined, want 1: the frontmatter that says the file is remember's is no note", n)
	}
	if hits := f.search(t, "beet harvest"); len(hits) == 0 || hits[0].ID != res.ID {
		t.Errorf("search right after remember: %+v, want note %s first", hits, res.ID)
	}
	if res.Hash != hashOf(t, filepath.Join(f.hive, "agents/dwight/memory.laptop.md")) {
		t.Errorf("hash %s is not the file's", res.Hash)
	}
}

func hashOf(t *testing.T, path string) string {
	t.Helper()
	s, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return memfile.Hash(s)
}

func TestRememberDuplicate(t *testing.T) {
	f := newFixture(t, map[string]string{"agents/pam/memory.md": "# Pam\n\n- Aisle seats preferred on all flights (added 2026-05-17)\n"})
	res, err := f.remember(t, Request{Wing: "pam", Text: "aisle seats preferred on all flights"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Added || res.DuplicateOf == nil || res.DuplicateOf.Line != 3 || res.DuplicateOf.File != "agents/pam/memory.md" || res.Line != 3 {
		t.Fatalf("duplicate: %+v (duplicate_of %+v)", res, res.DuplicateOf)
	}
	if got := f.read(t, "agents/pam/memory.md"); strings.Count(got, "Aisle") != 1 {
		t.Errorf("a duplicate was written: %q", got)
	}
	res, err = f.remember(t, Request{Wing: "pam", Text: "aisle seats preferred on all flights", AllowDuplicate: true})
	if err != nil || !res.Added || res.Line != 7 || res.File != "agents/pam/memory.laptop.md" {
		t.Fatalf("allowed duplicate: %+v, %v", res, err)
	}
}

func TestRememberSupersede(t *testing.T) {
	f := newFixture(t, map[string]string{
		"agents/dwight/memory.md":                        "# Dwight\n\n- The primary database is db-2\n- Standup is at 9\n",
		"agents/dwight/ops.md":                           "- Backups run at 02:00\n",
		"agents/dwight/claude-code-memory.laptop/vpn.md": "- Staging deploys need the office VPN\n",
	})
	// Mine first, so the note id is known, as an agent gets it from search.
	first, err := f.remember(t, Request{Wing: "dwight", Text: "Lunch is at noon"})
	if err != nil {
		t.Fatal(err)
	}
	var oldID string
	for _, n := range f.p.Notes("dwight") {
		if strings.Contains(n.Text, "db-2") {
			oldID = n.ID
		}
	}
	res, err := f.remember(t, Request{Wing: "dwight", Text: "The primary database is db-3", Supersedes: []string{oldID, "ops.md:1"}})
	if err != nil {
		t.Fatal(err)
	}
	// A hive from before machine files: memory.md keeps its notes and
	// gets only the mark; the new notes go to the machine's file.
	if got, want := f.read(t, "agents/dwight/memory.md"), "# Dwight\n\n- The primary database is db-2 (superseded 2026-12-01)\n- Standup is at 9\n"; got != want {
		t.Errorf("memory.md = %q, want %q", got, want)
	}
	want := OwnedFileStart + "# dwight's memory\n\n## Notes\n- Lunch is at noon (added 2026-12-01)\n- The primary database is db-3 (added 2026-12-01)\n"
	if got := f.read(t, "agents/dwight/memory.laptop.md"); got != want {
		t.Errorf("memory.laptop.md = %q, want %q", got, want)
	}
	if got := f.read(t, "agents/dwight/ops.md"); got != "- Backups run at 02:00 (superseded 2026-12-01)\n" {
		t.Errorf("ops.md = %q", got)
	}
	if len(res.Superseded) != 2 || res.Superseded[0].ID != oldID || res.Superseded[1].File != "agents/dwight/ops.md" {
		t.Errorf("superseded = %+v", res.Superseded)
	}
	if res.Line != first.Line+1 || !res.Added {
		t.Errorf("result = %+v", res)
	}
	// Search leaves the superseded notes out.
	for _, h := range f.search(t, "primary database backups") {
		if h.ID == oldID || strings.Contains(h.Text, "db-2") || strings.Contains(h.Text, "Backups") {
			t.Errorf("search found superseded note %s: %q", h.ID, h.Text)
		}
	}
	if hits := f.search(t, "primary database"); len(hits) == 0 || hits[0].ID != res.ID {
		t.Errorf("search for the new fact: %+v, want note %s first", hits, res.ID)
	}
	// Marked once: a second supersede of it is refused.
	if _, err := f.remember(t, Request{Wing: "dwight", Text: "The primary database is db-4", Supersedes: []string{"memory.md:3"}}); !errors.Is(err, ErrBadRequest) {
		t.Errorf("superseding a superseded note: %v, want ErrBadRequest", err)
	}
	// A client's own memory is the client's: never marked.
	_, err = f.remember(t, Request{Wing: "dwight", Text: "Staging deploys no longer need a VPN", Supersedes: []string{"claude-code-memory.laptop/vpn.md:1"}})
	var re *RefError
	if !errors.As(err, &re) || re.Kind != RefClientMemory || re.Client != "claude-code" || !strings.Contains(err.Error(), "claude-code's own memory") {
		t.Errorf("superseding Claude Code's note: %v, want a RefError of kind %s", err, RefClientMemory)
	}
	if got := f.read(t, "agents/dwight/claude-code-memory.laptop/vpn.md"); got != "- Staging deploys need the office VPN\n" {
		t.Errorf("Claude Code's file = %q", got)
	}
	for ref, kind := range map[string]string{"memory.md:4000": RefNoLine, "0123456789abcdef0123456789abcdef": RefNoID, "nonsense": RefMalformed, "memory.md:3": RefSuperseded} {
		_, err := f.remember(t, Request{Wing: "dwight", Text: "Another fact entirely " + ref, Supersedes: []string{ref}})
		var re *RefError
		if !errors.Is(err, ErrBadRequest) || !errors.As(err, &re) || re.Kind != kind || re.Ref != ref {
			t.Errorf("supersedes %s: %v, want a RefError of kind %s, matching ErrBadRequest", ref, err, kind)
		}
	}
}

func TestRememberRefuses(t *testing.T) {
	const memory = "# Pam\r\n\r\n- one"
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "memory.md"), []byte("- outside\n"), 0o644)
	tests := []struct {
		name  string
		files map[string]string
		setup func(t *testing.T, hive string)
		req   Request
		opts  func(*Options)
		err   error
	}{
		{name: "empty", req: Request{Wing: "pam", Text: ""}, err: ErrBadRequest},
		{name: "whitespace", req: Request{Wing: "pam", Text: " \n\t "}, err: ErrBadRequest},
		{name: "NUL", req: Request{Wing: "pam", Text: "a\x00b"}, err: ErrBadRequest},
		{name: "invalid UTF-8", req: Request{Wing: "pam", Text: "caf\xe9"}, err: ErrBadRequest},
		{name: "too long", req: Request{Wing: "pam", Text: strings.Repeat("x", DefaultMaxNoteBytes+1)}, err: ErrBadRequest},
		{name: "over max_note_bytes", req: Request{Wing: "pam", Text: "twelve bytes"}, opts: func(o *Options) { o.MaxNoteBytes = 11 }, err: ErrBadRequest},
		{name: "bad wing", req: Request{Wing: "../pam", Text: "x"}, err: ErrBadRequest},
		{name: "no wing", req: Request{Text: "x"}, err: ErrBadRequest},
		{name: "bad tag", req: Request{Wing: "pam", Text: "x", Tags: []string{"two words"}}, err: ErrBadRequest},
		{name: "bad heading", req: Request{Wing: "pam", Text: "x", Heading: "a\nb"}, err: ErrBadRequest},
		{name: "file not UTF-8", files: map[string]string{"agents/pam/memory.laptop.md": "caf\xe9\n"}, req: Request{Wing: "pam", Text: "x"}},
		{name: "file too large", req: Request{Wing: "pam", Text: "x"}, opts: func(o *Options) { o.Mine.MaxFileBytes = 10 }},
		{name: "would grow too large", req: Request{Wing: "pam", Text: "a longer note"}, opts: func(o *Options) { o.Mine.MaxFileBytes = int64(len(memory)) + 10 }, err: ErrBadRequest},
		{name: "conflict copy", files: map[string]string{"agents/pam/memory.sync-conflict-20261201-101010-ABCDEFG.md": "- other\n"},
			req: Request{Wing: "pam", Text: "x"}, err: ErrConflict},
		{name: "expect-hash", req: Request{Wing: "pam", Text: "x", ExpectHash: memfile.Hash([]byte("old"))}, err: ErrHashMismatch},
		{name: "agent directory leads out", req: Request{Wing: "eve", Text: "x"}, err: ErrOutsideHive,
			setup: func(t *testing.T, hive string) { os.Symlink(outside, filepath.Join(hive, "agents", "eve")) }},
		{name: "memory file leads out", req: Request{Wing: "eve", Text: "x"}, err: ErrOutsideAgentDir,
			setup: func(t *testing.T, hive string) {
				os.MkdirAll(filepath.Join(hive, "agents", "eve"), 0o755)
				os.Symlink(filepath.Join(outside, "memory.md"), filepath.Join(hive, "agents", "eve", "memory.laptop.md"))
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"agents/pam/memory.laptop.md": memory}
			for k, v := range tt.files {
				files[k] = v
			}
			f := newFixture(t, files)
			if tt.setup != nil {
				tt.setup(t, f.hive)
			}
			if tt.opts != nil {
				tt.opts(&f.opts)
			}
			before := snapshotHive(t, f.hive)
			_, err := f.remember(t, tt.req)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.err != nil && !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if after := snapshotHive(t, f.hive); after != before {
				t.Errorf("the hive changed:\n%s\nwant\n%s", after, before)
			}
			if data, _ := os.ReadFile(filepath.Join(outside, "memory.md")); string(data) != "- outside\n" {
				t.Errorf("the file outside the hive changed: %q", data)
			}
		})
	}
}

func TestRememberForce(t *testing.T) {
	f := newFixture(t, map[string]string{
		"agents/pam/memory.md": "- one\n",
		"agents/pam/memory.sync-conflict-20261201-101010-ABCDEFG.md": "- other\n",
	})
	res, err := f.remember(t, Request{Wing: "pam", Text: "two", Force: true})
	if err != nil || !res.Added || len(res.ForcedPast) != 1 {
		t.Fatalf("--force: %+v, %v", res, err)
	}
}

func TestRememberExpectHash(t *testing.T) {
	f := newFixture(t, map[string]string{"agents/pam/memory.laptop.md": "- one\n"})
	h := hashOf(t, filepath.Join(f.hive, "agents/pam/memory.laptop.md"))
	res, err := f.remember(t, Request{Wing: "pam", Text: "two", ExpectHash: h})
	if err != nil {
		t.Fatal(err)
	}
	// The hash printed is the one the next write expects.
	if _, err := f.remember(t, Request{Wing: "pam", Text: "three", ExpectHash: res.Hash}); err != nil {
		t.Fatal(err)
	}
	var hm *HashMismatchError
	if _, err := f.remember(t, Request{Wing: "pam", Text: "four", ExpectHash: res.Hash}); !errors.As(err, &hm) || hm.Want != res.Hash {
		t.Fatalf("stale hash: %v", err)
	}
}

func TestRememberAgentGlob(t *testing.T) {
	f := newFixture(t, map[string]string{"bots/kevin/notes.md": "- chili\n"})
	f.opts.Agents = []string{"bots/*"}
	res, err := f.remember(t, Request{Wing: "kevin", Text: "M&Ms in the vending machine"})
	if err != nil {
		t.Fatal(err)
	}
	if res.File != "bots/kevin/memory.laptop.md" {
		t.Errorf("file = %s, want the glob's directory", res.File)
	}
}

// snapshotHive lists every path below hive with its content.
func snapshotHive(t *testing.T, hive string) string {
	t.Helper()
	var b strings.Builder
	filepath.Walk(hive, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(hive, path)
		b.WriteString(rel)
		if info.Mode().IsRegular() {
			data, _ := os.ReadFile(path)
			b.WriteString(" " + string(data))
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

// TestRememberWithoutHeading: a note without a heading goes under
// ## Notes, a section of its own, whatever section ends the file: never
// into an identity (wake-up would read it as the agent's identity), a
// governed one (it would be hidden at once) or any other.
func TestRememberWithoutHeading(t *testing.T) {
	const note = "- The ferret is now white (added 2026-12-01)\n"
	tests := []struct {
		name, before, want string
	}{
		{"new file", "", OwnedFileStart + "# a's memory\n\n## Notes\n" + note},
		{"identity last", "# A\n## Identity\n- I am the ops agent\n", "# A\n## Identity\n- I am the ops agent\n\n## Notes\n" + note},
		{"role last", "# A\n## Role\nRuns the backups.\n", "# A\n## Role\nRuns the backups.\n\n## Notes\n" + note},
		{"decisions last", "# A\n## Decisions\n- Use Postgres\n", "# A\n## Decisions\n- Use Postgres\n\n## Notes\n" + note},
		{"notes before identity", "# A\n## Notes\n- x\n\n## Identity\n- I am A\n", "# A\n## Notes\n- x\n" + note + "\n## Identity\n- I am A\n"},
		{"notes last", "# A\n## Notes\n- x\n", "# A\n## Notes\n- x\n" + note},
		{"no heading", "- x\n", "- x\n\n## Notes\n" + note},
	}
	for _, last := range []string{"Superseded", "Archive", "Done", "Deprecated"} {
		before := "# A\n## Facts\n- x\n## " + last + "\n- y\n"
		tests = append(tests, struct{ name, before, want string }{last + " last", before, before + "\n## Notes\n" + note})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"agents/a/memory.md": "# A\n"}
			if tt.before != "" {
				files["agents/a/memory.laptop.md"] = tt.before
			}
			f := newFixture(t, files)
			res, err := f.remember(t, Request{Wing: "a", Text: "The ferret is now white"})
			if err != nil {
				t.Fatal(err)
			}
			if got := f.read(t, "agents/a/memory.laptop.md"); got != tt.want {
				t.Errorf("memory.laptop.md = %q, want %q", got, tt.want)
			}
			if hits := f.search(t, "ferret white"); len(hits) == 0 || hits[0].ID != res.ID || hits[0].Heading != "Notes" && !strings.HasSuffix(hits[0].Heading, "> Notes") {
				t.Errorf("search: %+v, want note %s first, under Notes", hits, res.ID)
			}
		})
	}
}

func TestRememberDuplicateOfOwnWriteInSmallWing(t *testing.T) {
	f := newFixture(t, map[string]string{"agents/jim/memory.md": "- seed\n"})
	req := Request{Wing: "jim", Text: "The quokka count is 12"}
	first, err := f.remember(t, req)
	if err != nil || !first.Added {
		t.Fatalf("first: %+v, %v", first, err)
	}
	second, err := f.remember(t, req)
	if err != nil {
		t.Fatal(err)
	}
	if second.Added || second.DuplicateOf == nil || second.DuplicateOf.ID != first.ID {
		t.Errorf("second: %+v (duplicate_of %+v), want a duplicate of %s", second, second.DuplicateOf, first.ID)
	}
	if got := f.read(t, "agents/jim/memory.laptop.md"); strings.Count(got, "quokka") != 1 {
		t.Errorf("memory.md = %q", got)
	}
}
