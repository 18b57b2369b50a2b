package mine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/govern"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/markdown"
	"github.com/memminer/memminer/palace"
)

// writeFile writes content to dir/rel, creating directories.
func writeFile(t *testing.T, dir, rel, content string) string {
	t.Helper()
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// bump moves a file's mtime forward so a same-size edit is noticed.
func bump(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	later := fi.ModTime().Add(2 * time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
}

func openPalace(t *testing.T, dir string, e embed.Embedder) *palace.Palace {
	t.Helper()
	p, err := palace.Open(context.Background(), dir, palace.Options{Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func mineT(t *testing.T, p *palace.Palace, path string, opts Options) Summary {
	t.Helper()
	s, err := Mine(context.Background(), p, path, opts)
	if err != nil {
		t.Fatalf("mine %s: %v", path, err)
	}
	return s
}

const dwightMemory = `# Memory

## Infra
- Production Postgres runs on db-2.
- pgbouncer runs in transaction mode.
- Deploys go from the release branch.

## API
Versioned under /v2/.
`

func TestMineIsIncremental(t *testing.T) {
	hive := t.TempDir()
	mem := writeFile(t, hive, "agents/dwight/memory.md", dwightMemory)
	emb := &embedtest.Hashing{}
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), emb)

	s := mineT(t, p, filepath.Join(hive, "agents/dwight"), Options{})
	if s.NotesAdded != 4 || s.FilesChanged != 1 || emb.Texts() != 4 || len(s.Wings) != 1 || s.Wings[0] != "dwight" {
		t.Fatalf("first mine: %+v, embedded %d", s, emb.Texts())
	}

	emb.Reset()
	s = mineT(t, p, filepath.Join(hive, "agents/dwight"), Options{})
	if emb.Calls() != 0 || s.NotesUnchanged != 4 || s.FilesUnchanged != 1 || s.NotesAdded != 0 {
		t.Fatalf("re-mine of unchanged file: %+v, embed calls %d", s, emb.Calls())
	}

	// Touched but identical content: still nothing embedded.
	bump(t, mem)
	s = mineT(t, p, filepath.Join(hive, "agents/dwight"), Options{})
	if emb.Calls() != 0 || s.FilesUnchanged != 1 {
		t.Fatalf("touched file: %+v, embed calls %d", s, emb.Calls())
	}

	// Edit one bullet: exactly one note re-embedded.
	writeFile(t, hive, "agents/dwight/memory.md", strings.Replace(dwightMemory, "transaction mode", "session mode", 1))
	bump(t, mem)
	s = mineT(t, p, filepath.Join(hive, "agents/dwight"), Options{})
	if emb.Texts() != 1 || s.NotesAdded != 1 || s.NotesRemoved != 1 || s.NotesUnchanged != 3 {
		t.Fatalf("edit one bullet: %+v, embedded %d texts", s, emb.Texts())
	}

	// Remove a bullet: it leaves the palace.
	emb.Reset()
	writeFile(t, hive, "agents/dwight/memory.md", strings.Replace(dwightMemory, "- Deploys go from the release branch.\n", "", 1))
	bump(t, mem)
	s = mineT(t, p, filepath.Join(hive, "agents/dwight"), Options{})
	if s.NotesRemoved != 2 || s.NotesAdded != 1 || emb.Texts() != 1 {
		// the edited bullet reverts to its original text (1 added, 1 removed) and the deploy bullet goes
		t.Fatalf("remove bullet: %+v", s)
	}
	hits, err := p.Search(context.Background(), "release branch deploys", palace.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if strings.Contains(h.Text, "release branch") {
			t.Fatalf("removed bullet still found: %+v", h)
		}
	}
}

func TestRemovedFileLeavesOnNextMine(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/pam/memory.md", "- keep me\n")
	gone := writeFile(t, hive, "agents/pam/old.md", "- drop me\n")
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	mineT(t, p, filepath.Join(hive, "agents/pam"), Options{})
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	s := mineT(t, p, filepath.Join(hive, "agents/pam"), Options{})
	if s.FilesRemoved != 1 || s.NotesRemoved != 1 {
		t.Fatalf("summary %+v", s)
	}
	if ws := p.Wings(); ws[0].Notes != 1 || ws[0].Sources != 1 {
		t.Fatalf("wings %+v", ws)
	}
	// Mining a single file of the wing never removes its siblings.
	writeFile(t, hive, "agents/pam/other.md", "- other\n")
	mineT(t, p, filepath.Join(hive, "agents/pam"), Options{})
	s = mineT(t, p, filepath.Join(hive, "agents/pam/memory.md"), Options{})
	if s.FilesRemoved != 0 || p.Wings()[0].Sources != 2 {
		t.Fatalf("single-file mine removed siblings: %+v", s)
	}
}

func TestNeverMined(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/jim/memory.md", "- real memory\n")
	writeFile(t, hive, "agents/jim/memory.sync-conflict-20261129-101010-ABCDEF1.md", "- conflicting copy\n")
	writeFile(t, hive, "agents/jim/.stversions/memory.md", "- old version\n")
	writeFile(t, hive, "agents/jim/.hidden.md", "- hidden file\n")
	writeFile(t, hive, "agents/jim/notes.txt", "not markdown\n")
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	s := mineT(t, p, filepath.Join(hive, "agents/jim"), Options{})
	if s.FilesSeen != 1 || s.NotesAdded != 1 {
		t.Fatalf("summary %+v", s)
	}
	_, err := Mine(context.Background(), p, filepath.Join(hive, "agents/jim/memory.sync-conflict-20261129-101010-ABCDEF1.md"), Options{})
	if err == nil || !strings.Contains(err.Error(), "conflict copy") {
		t.Fatalf("mining a conflict copy by name: %v", err)
	}
}

func TestBadInputsAreSkippedAndKept(t *testing.T) {
	hive := t.TempDir()
	outside := writeFile(t, t.TempDir(), "secret.md", "- outside the hive\n")
	dir := filepath.Join(hive, "agents/angela")
	writeFile(t, hive, "agents/angela/memory.md", "- good note\n")
	binary := writeFile(t, hive, "agents/angela/binary.md", "- was text\n")
	invalid := writeFile(t, hive, "agents/angela/latin1.md", "- was utf-8\n")
	huge := writeFile(t, hive, "agents/angela/huge.md", "- was small\n")
	if err := os.Symlink(outside, filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	opts := Options{MaxFileBytes: 1 << 10}
	first := mineT(t, p, dir, opts)
	if first.NotesAdded != 4 || len(first.Problems) != 1 || !strings.Contains(first.Problems[0].Err, "outside") {
		t.Fatalf("first mine: %+v", first)
	}

	// Now each file goes bad in its own way.
	writeFile(t, hive, "agents/angela/binary.md", "\x00\x01\x02binary")
	writeFile(t, hive, "agents/angela/latin1.md", "- caf\xe9\n")
	writeFile(t, hive, "agents/angela/huge.md", strings.Repeat("- line\n", 500))
	for _, f := range []string{binary, invalid, huge} {
		bump(t, f)
	}
	s := mineT(t, p, dir, opts)
	want := map[string]string{
		binary:                        "binary",
		invalid:                       "UTF-8",
		huge:                          "limit",
		filepath.Join(dir, "link.md"): "outside",
	}
	if len(s.Problems) != len(want) {
		t.Fatalf("problems %+v", s.Problems)
	}
	for _, pr := range s.Problems {
		if !strings.Contains(pr.Err, want[pr.Path]) {
			t.Errorf("problem for %s: %q, want it to mention %q", pr.Path, pr.Err, want[pr.Path])
		}
	}
	// Nothing was lost: the earlier notes of the bad files stay.
	if s.NotesRemoved != 0 || p.Wings()[0].Notes != 4 {
		t.Fatalf("notes lost: %+v, wings %+v", s, p.Wings())
	}
	hits, err := p.Search(context.Background(), "outside hive", palace.SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if strings.Contains(h.Text, "outside the hive") {
			t.Fatal("symlink target outside the hive was mined")
		}
	}
}

func TestWingIDs(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/Dwight/memory.md", "- fact\n")
	writeFile(t, hive, "weird name/memory.md", "- fact\n")
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	ctx := context.Background()
	for _, bad := range []string{"../x", "a/b", "..", ".x"} {
		if _, err := Mine(ctx, p, filepath.Join(hive, "agents/Dwight"), Options{Wing: bad}); err == nil {
			t.Errorf("wing %q accepted", bad)
		}
	}
	if _, err := Mine(ctx, p, filepath.Join(hive, "weird name"), Options{}); !errors.Is(err, errBadWingID) {
		t.Errorf("unusable directory name: %v", err)
	}
	s := mineT(t, p, filepath.Join(hive, "agents/Dwight/memory.md"), Options{})
	if s.Wings[0] != "dwight" {
		t.Fatalf("wing %v, want case-folded dwight", s.Wings)
	}
	if len(p.Wings()) != 1 {
		t.Fatalf("bad wing ids created wings: %+v", p.Wings())
	}
}

func TestHiveMinesOneWingPerAgent(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/a/memory.md", "- one\n")
	writeFile(t, hive, "agents/b/memory.md", "- two\n")
	writeFile(t, hive, "agents/.trash/memory.md", "- hidden\n")
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	s := mineT(t, p, hive, Options{})
	if strings.Join(s.Wings, ",") != "a,b" || s.NotesAdded != 2 {
		t.Fatalf("summary %+v", s)
	}
	roots := p.Wings()[0].Roots
	if len(roots) != 1 || roots[0] != filepath.Join(hive, "agents/a") {
		t.Fatalf("roots %v", roots)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/a/memory.md", "- one\n- two\n")
	dir := filepath.Join(t.TempDir(), "palace")
	p := openPalace(t, dir, nil)
	s := mineT(t, p, hive, Options{DryRun: true})
	if s.NotesAdded != 2 || !s.DryRun || len(p.Wings()) != 0 {
		t.Fatalf("dry run: %+v, wings %+v", s, p.Wings())
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dry run wrote the manifest: %v", err)
	}
}

func TestCorruptWingIsRebuiltFromMarkdown(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/a/memory.md", dwightMemory)
	writeFile(t, hive, "agents/b/memory.md", "- other wing\n")
	dir := filepath.Join(t.TempDir(), "palace")
	ctx := context.Background()
	p, err := palace.Open(ctx, dir, palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mineT(t, p, hive, Options{})
	p.Close()
	wingFile := filepath.Join(dir, "wings", "a.wing")
	if err := os.Truncate(wingFile, 40); err != nil {
		t.Fatal(err)
	}

	p = openPalace(t, dir, nil)
	if len(p.Damaged()) != 1 {
		t.Fatalf("damage not detected: %+v", p.Damaged())
	}
	s := mineT(t, p, filepath.Join(hive, "agents/b"), Options{})
	if len(s.Repaired) != 1 || s.Repaired[0].Wing != "a" || s.Repaired[0].Notes != 4 || !s.Repaired[0].Saved || s.Repaired[0].Err != nil {
		t.Fatalf("repair: %+v", s.Repaired)
	}
	p.Close()
	q := openPalace(t, dir, nil)
	if len(q.Damaged()) != 0 {
		t.Fatalf("still damaged after rebuild: %+v", q.Damaged())
	}
	hits, err := q.Search(ctx, "db-2", palace.SearchOptions{Wings: []string{"a"}})
	if err != nil || len(hits) == 0 {
		t.Fatalf("rebuilt wing search: %v %v", hits, err)
	}
}

func TestModelChangeReembeds(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/a/memory.md", dwightMemory)
	dir := filepath.Join(t.TempDir(), "palace")
	p, err := palace.Open(context.Background(), dir, palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mineT(t, p, hive, Options{})
	p.Close()

	emb := &embedtest.Hashing{ID: "model-b"}
	q := openPalace(t, dir, emb)
	var told []string
	s := mineT(t, q, hive, Options{OnReembed: func(w, from, to string, n int) { told = append(told, w, from, to) }})
	if s.Reembedded != 4 || emb.Texts() != 4 || strings.Join(told, " ") != "a lexical model-b" {
		t.Fatalf("summary %+v, embedded %d, told %v", s, emb.Texts(), told)
	}
	if m, _ := q.ModelOf("a"); m != "model-b" {
		t.Fatalf("wing model %s", m)
	}
}

func TestCancelledMineKeepsWholeFiles(t *testing.T) {
	hive := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		writeFile(t, hive, "agents/w/"+n+".md", "- note "+n+"\n")
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	s, err := Mine(ctx, p, filepath.Join(hive, "agents/w"), Options{Progress: func(done, total int) {
		if done == 1 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || s.NotesAdded != 1 {
		t.Fatalf("cancelled mine: %+v, %v", s, err)
	}
	if ws := p.Wings(); ws[0].Notes != 1 || ws[0].Sources != 1 {
		t.Fatalf("wings %+v", ws)
	}
}

func TestNoteIDStable(t *testing.T) {
	a := NoteID("w", "memory.md", "H", "text", 0)
	if a != NoteID("w", "memory.md", "H", "text", 0) || len(a) != 32 {
		t.Fatalf("id %q not stable", a)
	}
	for _, other := range []string{
		NoteID("v", "memory.md", "H", "text", 0),
		NoteID("w", "notes/y.md", "H", "text", 0),
		NoteID("w", "memory.md", "G", "text", 0),
		NoteID("w", "memory.md", "H", "text!", 0),
		NoteID("w", "memory.md", "H", "text", 1),
	} {
		if other == a {
			t.Fatal("distinct notes share an id")
		}
	}
}

// Identical notes of a file are numbered in order, whatever notes share
// the four bytes of their hash that occurrences keys them by.
func TestOccurrencesCountEqualNotes(t *testing.T) {
	sum := func(prefix, rest byte) [16]byte { return [16]byte{prefix, 0, 0, 0, rest} }
	notes := []struct {
		sum           [16]byte
		heading, text string
		want          int
	}{
		{sum(1, 1), "H", "a", 0},
		{sum(2, 2), "H", "b", 0},
		{sum(1, 1), "H", "a", 1},
		{sum(1, 3), "H", "c", 0}, // prefix of "a", another note
		{sum(1, 4), "G", "a", 0}, // the same text under another heading
		{sum(1, 3), "H", "c", 1},
		{sum(1, 1), "H", "a", 2},
		{sum(2, 2), "H", "b", 1},
		{sum(1, 4), "G", "a", 1},
	}
	occ := newOccurrences()
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	held := p.NewNoteSet("w")
	for i, n := range notes {
		if got := occ.count(held, n.sum, n.heading, n.text); got != n.want {
			t.Errorf("note %d (%s: %s) is occurrence %d, want %d", i, n.heading, n.text, got, n.want)
		}
		held.Add(&palace.Note{ID: fmt.Sprint(i), Heading: n.heading, Text: n.text})
	}
}

func TestBrokenFrontmatterIsAWarning(t *testing.T) {
	var huge strings.Builder
	huge.WriteString("---\n")
	for i := range markdown.MaxFrontmatterKeys + 1 {
		fmt.Fprintf(&huge, "k%d: v\n", i)
	}
	huge.WriteString("---\n- still mined\n")
	for name, content := range map[string]string{
		"invalid":  "---\nrole: [unclosed\n---\n- still mined\n",
		"too many": huge.String(),
	} {
		t.Run(name, func(t *testing.T) {
			hive := t.TempDir()
			path := writeFile(t, hive, "agents/a/memory.md", content)
			p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
			s := mineT(t, p, filepath.Join(hive, "agents/a"), Options{})
			if s.NotesAdded != 1 || len(s.Warnings) != 1 || len(s.Problems) != 0 || s.Warnings[0].Path != path {
				t.Fatalf("summary %+v", s)
			}
		})
	}
}

// TestSameSizeEditInTheSameSecond: an edit that keeps size and mtime (a
// coarse-timestamp filesystem) is still found while the file was mined
// within racyWindow of its last change.
func TestSameSizeEditInTheSameSecond(t *testing.T) {
	hive := t.TempDir()
	mem := writeFile(t, hive, "agents/a/memory.md", "- [ ] ship it\n")
	fi, err := os.Stat(mem)
	if err != nil {
		t.Fatal(err)
	}
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	mineT(t, p, filepath.Join(hive, "agents/a"), Options{})
	src, _ := p.Source("a", mem)
	if settled(src) {
		t.Fatalf("mined %v after its write, yet settled", src.Mined.Sub(src.Mtime))
	}
	dir, _ := filepath.EvalSymlinks(filepath.Join(hive, "agents/a"))
	if ch := Changed(p, "a", dir); len(ch.Files) != 1 || len(ch.Changed) != 0 || len(ch.Gone) != 0 {
		t.Fatalf("Changed before the edit = %+v", ch)
	}
	writeFile(t, hive, "agents/a/memory.md", "- [x] ship it\n")
	if err := os.Chtimes(mem, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if ch := Changed(p, "a", dir); len(ch.Changed) != 1 {
		t.Fatalf("Changed after a same-size edit = %+v", ch)
	}
	s := mineT(t, p, filepath.Join(hive, "agents/a"), Options{})
	if s.NotesAdded != 1 || s.NotesRemoved != 1 {
		t.Fatalf("same-size edit missed: %+v", s)
	}
}

// TestUnreadableDirectoryKeepsItsNotes: a directory the walk could not read
// hides its files; they are not gone, so their notes stay.
func TestUnreadableDirectoryKeepsItsNotes(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/a/memory.md", "- top\n")
	writeFile(t, hive, "agents/a/journal/day.md", "- in the journal\n")
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	mineT(t, p, filepath.Join(hive, "agents/a"), Options{})

	root := filepath.Join(hive, "agents/a")
	j := job{wing: "a", root: root, isDir: true}
	all, _ := collect(j)
	for _, f := range all { // journal/ failed to read: only memory.md is listed
		if filepath.Base(f.path) == "memory.md" {
			j.files = append(j.files, f)
		}
	}
	j.problems = []Problem{{Path: filepath.Join(root, "journal"), Err: "permission denied"}}
	s, err := mineOne(context.Background(), p, j, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.FilesRemoved != 0 || s.NotesRemoved != 0 || p.Wings()[0].Notes != 2 {
		t.Fatalf("notes under an unreadable directory were removed: %+v", s)
	}
}

// TestUnavailableModelKeepsVectors: running lexically because the model is
// unavailable must not strip a wing of the model's vectors.
func TestUnavailableModelKeepsVectors(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/a/memory.md", dwightMemory)
	writeFile(t, hive, "agents/b/memory.md", "- new wing\n")
	dir := filepath.Join(t.TempDir(), "palace")
	p, err := palace.Open(context.Background(), dir, palace.Options{Embedder: &embedtest.Hashing{ID: "model-a"}})
	if err != nil {
		t.Fatal(err)
	}
	mineT(t, p, filepath.Join(hive, "agents/a"), Options{})
	p.Close()

	q := openPalace(t, dir, nil)
	s := mineT(t, q, hive, Options{ModelUnavailable: "no network"})
	if m, _ := q.ModelOf("a"); m != "model-a" || s.Reembedded != 0 {
		t.Fatalf("wing a stripped of its vectors: model %s, %+v", m, s)
	}
	if len(s.Problems) != 1 || !strings.Contains(s.Problems[0].Err, "no network") {
		t.Fatalf("problems %+v", s.Problems)
	}
	if m, _ := q.ModelOf("b"); m != embed.Lexical {
		t.Fatalf("new wing b: model %s, want lexical", m)
	}
}

// TestRepairNeedsReachableMarkdown: a damaged wing whose markdown is out of
// reach stays damaged instead of being saved empty.
func TestRepairNeedsReachableMarkdown(t *testing.T) {
	tmp := t.TempDir()
	hive := filepath.Join(tmp, "hive")
	writeFile(t, hive, "agents/a/memory.md", dwightMemory)
	other := writeFile(t, tmp, "other/b/memory.md", "- other\n")
	dir := filepath.Join(tmp, "palace")
	p := openPalace(t, dir, nil)
	mineT(t, p, hive, Options{})
	p.Close()
	if err := os.WriteFile(filepath.Join(dir, "wings", "a.wing"), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(hive, hive+".away"); err != nil {
		t.Fatal(err)
	}
	q := openPalace(t, dir, nil)
	s := mineT(t, q, other, Options{})
	if len(s.Repaired) != 1 || s.Repaired[0].Err == nil || !strings.Contains(*s.Repaired[0].Err, "not reachable") || s.Repaired[0].Saved {
		t.Fatalf("repair: %+v", s.Repaired)
	}
	if len(q.Damaged()) != 1 {
		t.Fatal("wing no longer marked damaged")
	}
	// Its markdown back, mining its directory rebuilds it even without a
	// manifest entry.
	if err := os.Rename(hive+".away", hive); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "manifest.json")); err != nil {
		t.Fatal(err)
	}
	q.Close()
	r := openPalace(t, dir, nil)
	mineT(t, r, filepath.Join(hive, "agents/a"), Options{})
	if len(r.Damaged()) != 0 || r.Wings()[0].Notes != 4 {
		t.Fatalf("not rebuilt by mining its directory: %+v %+v", r.Damaged(), r.Wings())
	}
}

func TestAgentsDirectoryAndBadAgentNames(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/a/memory.md", "- one\n")
	writeFile(t, hive, "agents/Bad Name/memory.md", "- skipped\n")
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	// The agents/ directory itself is mined one wing per agent too.
	s := mineT(t, p, filepath.Join(hive, "agents"), Options{})
	if strings.Join(s.Wings, ",") != "a" || len(s.Problems) != 1 || !strings.Contains(s.Problems[0].Err, "not valid") {
		t.Fatalf("summary %+v", s)
	}
}

// TestMovedHiveLeavesNoDuplicates: after the hive moves, mining it at its
// new place keeps its notes (same ids) under the new paths and forgets the
// old place, whose root is gone.
func TestMovedHiveLeavesNoDuplicates(t *testing.T) {
	tmp := t.TempDir()
	writeFile(t, tmp, "old/agents/a/memory.md", dwightMemory)
	p := openPalace(t, filepath.Join(tmp, "palace"), nil)
	mineT(t, p, filepath.Join(tmp, "old/agents/a"), Options{})
	if err := os.Rename(filepath.Join(tmp, "old"), filepath.Join(tmp, "new")); err != nil {
		t.Fatal(err)
	}
	s := mineT(t, p, filepath.Join(tmp, "new/agents/a"), Options{})
	w := p.Wings()[0]
	if s.NotesRemoved != 0 || s.NotesUnchanged != 4 || w.Notes != 4 || w.Sources != 1 || len(w.Roots) != 1 || w.Roots[0] != filepath.Join(tmp, "new/agents/a") {
		t.Fatalf("after the move: %+v, wing %+v", s, w)
	}
}

// failOn embeds like embedtest.Hashing but fails on any text containing word.
type failOn struct {
	embedtest.Hashing
	word string
}

func (f *failOn) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if strings.Contains(t, f.word) {
			return nil, errors.New("backend timed out")
		}
	}
	return f.Hashing.Embed(ctx, texts)
}

func TestUnreadableRootKeepsItsNotes(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/a/memory.md", "- one\n- two\n")
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	root := filepath.Join(hive, "agents/a")
	mineT(t, p, root, Options{})
	j := job{wing: "a", root: root, isDir: true, problems: []Problem{{Path: root, Err: "permission denied"}}}
	s, err := mineOne(context.Background(), p, j, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.NotesRemoved != 0 || p.Wings()[0].Notes != 2 {
		t.Fatalf("an unreadable agent directory emptied its wing: %+v", s)
	}
}

// TestRepairOfSeveralRootsIsAllOrNothing: a rebuild that fails on its
// second root leaves the wing damaged and unsaved.
func TestRepairOfSeveralRootsIsAllOrNothing(t *testing.T) {
	tmp := t.TempDir()
	writeFile(t, tmp, "a/memory.md", "- alpha\n")
	writeFile(t, tmp, "b/memory.md", "- beta FAIL\n")
	dir := filepath.Join(tmp, "palace")
	p, err := palace.Open(context.Background(), dir, palace.Options{Embedder: &embedtest.Hashing{}})
	if err != nil {
		t.Fatal(err)
	}
	mineT(t, p, filepath.Join(tmp, "a"), Options{Wing: "w"})
	mineT(t, p, filepath.Join(tmp, "b"), Options{Wing: "w"})
	p.Close()
	if err := os.WriteFile(filepath.Join(dir, "wings", "w.wing"), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	q, err := palace.Open(context.Background(), dir, palace.Options{Embedder: &failOn{word: "FAIL"}})
	if err != nil {
		t.Fatal(err)
	}
	rs := Repair(context.Background(), q, Options{})
	if len(rs) != 1 || rs[0].Err == nil || rs[0].Saved || len(q.Damaged()) != 1 {
		t.Fatalf("partial repair: %+v, damaged %+v", rs, q.Damaged())
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "wings", "w.wing")); string(b) != "junk" {
		t.Fatal("a partial rebuild was saved over the damaged wing")
	}
	q.Close()
}

// TestUnmountedRootKeepsItsNotes: a root out of reach that is not the same
// place moved (another name) keeps its notes when the wing is mined from
// elsewhere; and a dry run counts what a move would remove.
func TestUnmountedRootKeepsItsNotes(t *testing.T) {
	tmp := t.TempDir()
	writeFile(t, tmp, "disk/agents/a/memory.md", dwightMemory)
	today := writeFile(t, tmp, "scratch/today.md", "- today\n")
	p := openPalace(t, filepath.Join(tmp, "palace"), nil)
	mineT(t, p, filepath.Join(tmp, "disk/agents/a"), Options{})
	if err := os.Rename(filepath.Join(tmp, "disk"), filepath.Join(tmp, "disk.unmounted")); err != nil {
		t.Fatal(err)
	}
	s := mineT(t, p, today, Options{Wing: "a"})
	if s.NotesRemoved != 0 || p.Wings()[0].Notes != 5 || len(p.Wings()[0].Roots) != 2 {
		t.Fatalf("notes of an unmounted root dropped: %+v %+v", s, p.Wings())
	}

	if err := os.MkdirAll(filepath.Join(tmp, "new/agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(tmp, "disk.unmounted/agents/a"), filepath.Join(tmp, "new/agents/a")); err != nil {
		t.Fatal(err)
	}
	dry := mineT(t, p, filepath.Join(tmp, "new/agents/a"), Options{DryRun: true})
	if dry.NotesRemoved != 4 {
		t.Fatalf("dry run of a moved root: %+v", dry)
	}
}

// TestAgentDirectoryIsNoHive: mining one agent directory mines it into its
// wing, even when the agents globs match directories inside it (which,
// relative to the hive, are part of that agent).
func TestAgentDirectoryIsNoHive(t *testing.T) {
	for _, hive := range []bool{true, false} {
		t.Run("hive configured "+strconv.FormatBool(hive), func(t *testing.T) {
			h := t.TempDir()
			writeFile(t, h, "agents/a/memory.md", "- The agent's own note.\n")
			writeFile(t, h, "agents/a/bots/helper/memory.md", "- The helper's note.\n")
			opts := Options{Agents: []string{"bots/*"}}
			if hive {
				opts.Hive = h
			}
			p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
			s := mineT(t, p, filepath.Join(h, "agents/a"), opts)
			if got := strings.Join(s.Wings, ","); got != "a" || s.NotesAdded != 2 {
				t.Fatalf("wings %q, %d notes; want both notes in wing a", got, s.NotesAdded)
			}
		})
	}
}

func TestSymlinkToHiddenFileIsMined(t *testing.T) {
	hive := t.TempDir()
	writeFile(t, hive, "agents/a/.memory.md", "- behind a link\n")
	if err := os.Symlink(".memory.md", filepath.Join(hive, "agents/a/memory.md")); err != nil {
		t.Fatal(err)
	}
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	if s := mineT(t, p, filepath.Join(hive, "agents/a"), Options{}); s.NotesAdded != 1 {
		t.Fatalf("link to a file the walk skips: %+v", s)
	}
}

// TestFutureMtimeDoesNotRewrite: a file with a future mtime (a peer's
// clock ahead) is hashed on every mine but never rewrites the palace.
func TestFutureMtimeDoesNotRewrite(t *testing.T) {
	hive := t.TempDir()
	mem := writeFile(t, hive, "agents/a/memory.md", "- later\n")
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(mem, future, future); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "palace")
	p := openPalace(t, dir, nil)
	mineT(t, p, filepath.Join(hive, "agents/a"), Options{})
	wingFile := filepath.Join(dir, "wings", "a.wing")
	before, err := os.Stat(wingFile)
	if err != nil {
		t.Fatal(err)
	}
	mineT(t, p, filepath.Join(hive, "agents/a"), Options{})
	after, err := os.Stat(wingFile)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) {
		t.Fatal("an unchanged file with a future mtime rewrote the wing")
	}
}

// TestHiveAgentGlobs: directories the agents globs match are agents like
// agents/<id>, under the same rules; one whose wing id is taken, or that
// lies inside another agent directory, is reported and not mined; a
// symlink that leaves the hive is refused.
func TestHiveAgentGlobs(t *testing.T) {
	type problem struct{ path, want string }
	tests := []struct {
		name     string
		files    []string // below the hive, each holding one note naming it
		links    map[string]string
		agents   []string
		wings    string            // the wings mined, in order
		roots    map[string]string // wing → its one root, below the hive
		problems []problem
		notMined []string // notes never searchable
	}{
		{
			name:     "no globs",
			files:    []string{"agents/a/memory.md", "bots/b/memory.md"},
			wings:    "a",
			roots:    map[string]string{"a": "agents/a"},
			notMined: []string{"bots/b/memory.md"},
		},
		{
			name:     "bots glob",
			files:    []string{"agents/a/memory.md", "bots/b/memory.md", "bots/.hidden/memory.md", "bots/readme.md"},
			agents:   []string{"bots/*"},
			wings:    "a,b",
			roots:    map[string]string{"a": "agents/a", "b": "bots/b"},
			notMined: []string{"bots/.hidden/memory.md", "bots/readme.md"},
		},
		{
			name:     "no agents directory",
			files:    []string{"teams/red/agents/Oscar/memory.md", "teams/red/notes.md"},
			agents:   []string{"teams/*/agents/*"},
			wings:    "oscar",
			roots:    map[string]string{"oscar": "teams/red/agents/Oscar"},
			notMined: []string{"teams/red/notes.md"},
		},
		{
			name:     "same wing id",
			files:    []string{"agents/pam/memory.md", "bots/pam/memory.md", "bots/Kevin/memory.md", "bots/kevin/memory.md"},
			agents:   []string{"bots/*"},
			wings:    "pam,kevin",
			roots:    map[string]string{"pam": "agents/pam", "kevin": "bots/Kevin"},
			problems: []problem{{"bots/kevin", `wing id "kevin" is taken by agent directory bots/Kevin`}, {"bots/pam", `wing id "pam" is taken by agent directory agents/pam`}},
			notMined: []string{"bots/pam/memory.md", "bots/kevin/memory.md"},
		},
		{
			name:     "nested",
			files:    []string{"crew/x/memory.md", "crew/x/sub/y/memory.md"},
			agents:   []string{"crew/*/sub/*", "crew/*"},
			wings:    "x",
			roots:    map[string]string{"x": "crew/x"},
			problems: []problem{{"crew/x/sub/y", "inside agent directory crew/x"}},
		},
		{
			name:     "bad name",
			files:    []string{"agents/a/memory.md", "bots/Bad Name/memory.md"},
			agents:   []string{"bots/*"},
			wings:    "a",
			problems: []problem{{"bots/Bad Name", `agent directory not mined: wing id "Bad Name" is not valid`}},
			notMined: []string{"bots/Bad Name/memory.md"},
		},
		{
			name:     "symlink leaving the hive",
			files:    []string{"agents/a/memory.md", "../outside/evil/memory.md", "bots/b/memory.md"},
			links:    map[string]string{"bots/evil": "../outside/evil"},
			agents:   []string{"bots/*"},
			wings:    "a,b",
			problems: []problem{{"bots/evil", "is a symlink to "}},
			notMined: []string{"../outside/evil/memory.md"},
		},
		{
			name:     "symlink to the hive itself",
			files:    []string{"agents/a/memory.md", "notes/loose.md"},
			links:    map[string]string{"agents/all": "."},
			wings:    "a",
			problems: []problem{{"agents/all", "which is, holds or lies in the directory holding the link"}},
			notMined: []string{"notes/loose.md"},
		},
		{
			name:  "symlink inside the hive is followed, under its own name",
			files: []string{"agents/a/memory.md", "shared/dave/memory.md"},
			links: map[string]string{"agents/carol": "shared/dave"},
			wings: "a,carol",
			roots: map[string]string{"carol": "shared/dave"},
		},
		{
			name:  "agents/ a symlink to where the agents live",
			files: []string{"../data/agents/a/memory.md", "readme.md"},
			links: map[string]string{"agents": "../data/agents"},
			wings: "a",
		},
		{
			name:  "symlinks aliasing an agent directory, or each other",
			files: []string{"agents/a/memory.md", "shared/s/memory.md"},
			links: map[string]string{"agents/a2": "agents/a", "agents/b": "shared/s", "agents/c": "shared/s", "agents/d": "agents"},
			wings: "a,b",
			roots: map[string]string{"a": "agents/a", "b": "shared/s"},
			problems: []problem{
				{"agents/a2", "which is, holds or lies in agent directory agents/a"},
				{"agents/c", "which is, holds or lies in agent directory agents/b"},
				{"agents/d", "which is, holds or lies in the directory holding the link"},
			},
		},
		{
			name:   "a glob matching agents/ itself takes no wing from it",
			files:  []string{"agents/a/memory.md", "bots/b/memory.md"},
			agents: []string{"*"},
			wings:  "a,bots",
			roots:  map[string]string{"a": "agents/a", "bots": "bots"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			hive := filepath.Join(tmp, "hive")
			for _, f := range tt.files {
				writeFile(t, hive, f, "- The note of "+f+" is here.\n")
			}
			for link, target := range tt.links {
				if err := os.Symlink(filepath.Join(hive, target), filepath.Join(hive, link)); err != nil {
					t.Fatal(err)
				}
			}
			p := openPalace(t, filepath.Join(tmp, "palace"), nil)
			s := mineT(t, p, hive, Options{Agents: tt.agents})
			if got := strings.Join(s.Wings, ","); got != tt.wings {
				t.Errorf("wings %q, want %q", got, tt.wings)
			}
			for wing, root := range tt.roots {
				want := filepath.Join(hive, filepath.FromSlash(root))
				for _, w := range p.Wings() {
					if w.ID == wing && (len(w.Roots) != 1 || w.Roots[0] != want) {
						t.Errorf("wing %s: roots %q, want %s", wing, w.Roots, want)
					}
				}
			}
			if len(s.Problems) != len(tt.problems) {
				t.Fatalf("problems %+v, want %+v", s.Problems, tt.problems)
			}
			for i, pr := range tt.problems {
				if got := s.Problems[i]; got.Path != filepath.Join(hive, filepath.FromSlash(pr.path)) || !strings.Contains(got.Err, pr.want) {
					t.Errorf("problem %d: %+v, want %s: %q", i, got, pr.path, pr.want)
				}
			}
			for _, f := range tt.notMined {
				hits, err := p.Search(context.Background(), "note of "+f, palace.SearchOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, h := range hits {
					if strings.Contains(h.Text, f) {
						t.Errorf("%s was mined into wing %s", f, h.Wing)
					}
				}
			}
		})
	}
}

func TestMineNeedsWingOutsideAgentDirectories(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "project/README.md", "# Project\n\nSome prose.\n")
	writeFile(t, root, "project/docs/guide.md", "- a fact\n")
	writeFile(t, root, "examples/hive/agents/pam/memory.md", "- pam's fact\n")
	writeFile(t, root, "examples/other/notes.md", "- loose\n")
	writeFile(t, root, "bots/creed/memory.md", "- creed's fact\n")
	writeFile(t, root, "hive/agents/dwight/notes/extra.md", "- extra\n")
	tests := []struct {
		name string
		path string
		opts Options
		// wing is the wing mined into; "" means ErrNeedsWing.
		wing string
	}{
		{"file in a plain directory", "project/README.md", Options{}, ""},
		{"plain directory", "project/docs", Options{}, ""},
		{"directory of several hives", "examples", Options{}, ""},
		{"directory inside an agent directory", "hive/agents/dwight/notes", Options{Hive: filepath.Join(root, "hive")}, ""},
		{"explicit wing", "project/README.md", Options{Wing: "project"}, "project"},
		{"agent directory", "examples/hive/agents/pam", Options{}, "pam"},
		{"file of an agent directory", "examples/hive/agents/pam/memory.md", Options{}, "pam"},
		{"directory holding memory.md", "bots/creed", Options{}, "creed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
			s, err := Mine(context.Background(), p, filepath.Join(root, tt.path), tt.opts)
			if tt.wing == "" {
				if !errors.Is(err, ErrNeedsWing) || strings.Contains(err.Error(), "--") {
					t.Fatalf("err = %v, want ErrNeedsWing without CLI advice (the CLI adds it)", err)
				}
				if len(p.Wings()) != 0 {
					t.Fatalf("a wing was made up: %+v", p.Wings())
				}
				return
			}
			if err != nil || len(s.Wings) != 1 || s.Wings[0] != tt.wing {
				t.Fatalf("wings %v, err %v; want %s", s.Wings, err, tt.wing)
			}
		})
	}
}

func TestSkippedFilesLeaveNoEmptyWing(t *testing.T) {
	root := t.TempDir()
	bin := writeFile(t, root, "bin/tool.md", "\x00\x01binary\x00")
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	s := mineT(t, p, bin, Options{Wing: "bin"})
	if s.FilesSkipped != 1 || len(p.Wings()) != 0 {
		t.Fatalf("skipped %d; wings %+v", s.FilesSkipped, p.Wings())
	}
	// A wing that exists keeps its root when a later file is skipped.
	good := writeFile(t, root, "bin/ok.md", "- fine\n")
	mineT(t, p, good, Options{Wing: "bin"})
	mineT(t, p, bin, Options{Wing: "bin"})
	if ws := p.Wings(); len(ws) != 1 || ws[0].Notes != 1 || len(ws[0].Roots) != 2 {
		t.Fatalf("wings %+v", ws)
	}
}

// TestMovedHiveKeepsVectors: a hive moved with mv (mtimes kept) is mined
// at its new place without a single embedding, every note keeps its id and
// vector, and only paths change.
func TestMovedHiveKeepsVectors(t *testing.T) {
	tmp := t.TempDir()
	writeFile(t, tmp, "old/hive/agents/dwight/memory.md", dwightMemory)
	writeFile(t, tmp, "old/hive/agents/pam/notes/sales.md", "# Sales\n- Q3 target is 40k.\n- Q3 target is 40k.\n")
	emb := &embedtest.Hashing{}
	p := openPalace(t, filepath.Join(tmp, "palace"), emb)
	mineT(t, p, filepath.Join(tmp, "old/hive"), Options{})
	before := map[string][]palace.Note{"dwight": p.Notes("dwight"), "pam": p.Notes("pam")}
	if emb.Texts() != 6 {
		t.Fatalf("first mine embedded %d texts, want 6", emb.Texts())
	}
	if err := os.Rename(filepath.Join(tmp, "old/hive"), filepath.Join(tmp, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	emb.Reset()
	s := mineT(t, p, filepath.Join(tmp, "elsewhere"), Options{})
	if emb.Calls() != 0 || s.NotesAdded != 0 || s.NotesRemoved != 0 || s.NotesUnchanged != 6 || s.FilesRemoved != 2 {
		t.Fatalf("after mv: %d embed calls, summary %+v", emb.Calls(), s)
	}
	for wing, was := range before {
		now := p.Notes(wing)
		if len(now) != len(was) {
			t.Fatalf("wing %s: %d notes, had %d", wing, len(now), len(was))
		}
		for i := range now {
			if now[i].ID != was[i].ID || now[i].Text != was[i].Text || !strings.HasPrefix(now[i].Source, filepath.Join(tmp, "elsewhere")) {
				t.Fatalf("wing %s note %d: %+v, was %+v", wing, i, now[i], was[i])
			}
			if v := p.Vector(wing, now[i].ID); v == nil {
				t.Fatalf("wing %s note %s lost its vector", wing, now[i].ID)
			}
		}
	}
	if len(p.Sources("dwight")) != 1 || len(p.Sources("pam")) != 1 {
		t.Fatalf("sources %+v %+v", p.Sources("dwight"), p.Sources("pam"))
	}
}

// TestMovedHiveKeepsVersions: the contents a file was mined with before
// (merge bases) follow it when the hive moves.
func TestMovedHiveKeepsVersions(t *testing.T) {
	tmp := t.TempDir()
	path := writeFile(t, tmp, "old/agents/dwight/memory.md", "- one\n")
	p := openPalace(t, filepath.Join(tmp, "palace"), nil)
	mineT(t, p, filepath.Join(tmp, "old"), Options{})
	writeFile(t, tmp, "old/agents/dwight/memory.md", "- one\n- two\n")
	bump(t, path)
	mineT(t, p, filepath.Join(tmp, "old"), Options{})
	src, _ := filepath.EvalSymlinks(path)
	before := p.Versions("dwight", src)
	if len(before) != 2 {
		t.Fatalf("%d versions before the move", len(before))
	}
	if err := os.Rename(filepath.Join(tmp, "old"), filepath.Join(tmp, "new")); err != nil {
		t.Fatal(err)
	}
	mineT(t, p, filepath.Join(tmp, "new"), Options{})
	moved, _ := filepath.EvalSymlinks(filepath.Join(tmp, "new/agents/dwight/memory.md"))
	after := p.Versions("dwight", moved)
	if len(after) != 2 || after[0].Hash != before[0].Hash || after[1].Hash != before[1].Hash || len(after[1].Notes) != 1 || after[1].Notes[0].Text != "one" {
		t.Fatalf("versions after the move: %+v, before %+v", after, before)
	}
}

// TestNoteIDsSameAtAnyPath: one hive at two absolute paths (two machines)
// gives the same ids; mining part of an agent directory of the configured
// hive gives the ids a mine of all of it does.
func TestNoteIDsSameAtAnyPath(t *testing.T) {
	ids := func(hive string, mined string, opts Options) []string {
		p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
		mineT(t, p, mined, opts)
		var out []string
		for _, n := range p.Notes("pam") {
			out = append(out, n.ID)
		}
		return out
	}
	a, b := filepath.Join(t.TempDir(), "srv/hive"), filepath.Join(t.TempDir(), "home/ops/hive")
	for _, h := range []string{a, b} {
		writeFile(t, h, "agents/pam/notes/sales.md", "# Sales\n- Q3 target is 40k.\n")
	}
	ia, ib := ids(a, a, Options{}), ids(b, b, Options{})
	if len(ia) != 1 || !slices.Equal(ia, ib) {
		t.Fatalf("ids at two paths: %v vs %v", ia, ib)
	}
	part := ids(b, filepath.Join(b, "agents/pam/notes"), Options{Wing: "pam", Hive: b})
	if !slices.Equal(part, ia) {
		t.Fatalf("mining a part of the agent directory: %v, want %v", part, ia)
	}
}

// TestOldPalaceMigratedInPlace: a palace whose ids named files by their
// absolute path (note format 0) is mined again by the next mine, once,
// keeping every vector of an unchanged text, and says so; also when the
// hive moved meanwhile.
func TestOldPalaceMigratedInPlace(t *testing.T) {
	for _, moved := range []bool{false, true} {
		t.Run(fmt.Sprintf("moved=%t", moved), func(t *testing.T) {
			tmp := t.TempDir()
			hive := filepath.Join(tmp, "hive")
			path := writeFile(t, hive, "agents/dwight/memory.md", dwightMemory)
			dir := filepath.Join(tmp, "palace")
			emb := &embedtest.Hashing{}
			p := openPalace(t, dir, emb)
			// What the previous version wrote: ids from the absolute path, no format.
			doc, err := markdown.Parse([]byte(dwightMemory), markdown.MemoryOptions())
			if err != nil {
				t.Fatal(err)
			}
			root, _ := filepath.EvalSymlinks(filepath.Join(hive, "agents/dwight"))
			src, _ := filepath.EvalSymlinks(path)
			var old []palace.Note
			for _, n := range doc.Notes {
				h := sha256.Sum256([]byte("dwight\x00" + src + "\x00" + n.Heading + "\x00" + n.Text + "\x000"))
				old = append(old, palace.Note{ID: hex.EncodeToString(h[:16]), Agent: "dwight", Line: n.Line, Heading: n.Heading, Text: n.Text})
			}
			info, _ := os.Stat(src)
			p.AddRoot("dwight", root)
			if _, err := p.ApplySource(context.Background(), "dwight", palace.Source{Path: src, Agent: "dwight", Mtime: info.ModTime().UTC(), Size: info.Size(), Hash: sha256Hex(t, src), Mined: time.Now().UTC()}, old); err != nil {
				t.Fatal(err)
			}
			if err := p.Flush(); err != nil {
				t.Fatal(err)
			}
			p.Close()
			if moved {
				hive = filepath.Join(tmp, "moved")
				if err := os.Rename(filepath.Join(tmp, "hive"), hive); err != nil {
					t.Fatal(err)
				}
				src, _ = filepath.EvalSymlinks(filepath.Join(hive, "agents/dwight/memory.md"))
			}

			q := openPalace(t, dir, emb)
			emb.Reset()
			s := mineT(t, q, filepath.Join(hive, "agents/dwight"), Options{})
			if emb.Calls() != 0 || len(s.Migrated) != 1 || s.Migrated[0] != (Migration{Wing: "dwight", Format: NoteFormat, Files: 1, Notes: 4}) {
				t.Fatalf("migration: %d embed calls, summary %+v", emb.Calls(), s)
			}
			for _, n := range q.Notes("dwight") {
				if n.ID == old[0].ID || q.Vector("dwight", n.ID) == nil || n.Source != src {
					t.Fatalf("note not migrated, or without its vector: %+v", n)
				}
			}
			if got, _ := q.Source("dwight", src); got.NoteFormat != NoteFormat || len(q.Notes("dwight")) != 4 || len(q.Sources("dwight")) != 1 {
				t.Fatalf("format %d, %d notes, sources %+v", got.NoteFormat, len(q.Notes("dwight")), q.Sources("dwight"))
			}
			// Said once: the next mine has nothing to migrate.
			if s := mineT(t, q, filepath.Join(hive, "agents/dwight"), Options{}); len(s.Migrated) != 0 || s.FilesChanged != 0 {
				t.Fatalf("second mine: %+v", s)
			}
		})
	}
}

func sha256Hex(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// TestOlderPalaceIsUpgraded: a file classified by older governance rules
// (or none: a palace mined before notes had a status) is classified again
// by the next mine, though its content did not change; then it is left
// alone again.
func TestOlderPalaceIsUpgraded(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "agents/jim/memory.md", "# Memory\n\n- Old plan (superseded).\n- Current plan #roadmap\n")
	hour := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, hour, hour); err != nil {
		t.Fatal(err)
	}
	p := openPalace(t, filepath.Join(dir, "palace"), nil)
	mineT(t, p, filepath.Join(dir, "agents", "jim"), Options{})
	if s := mineT(t, p, filepath.Join(dir, "agents", "jim"), Options{}); s.FilesUnchanged != 1 {
		t.Fatalf("second mine: %+v, want the file unchanged", s)
	}
	// What an older version left: no governance, Governed 0.
	src, ok := p.Source("jim", path)
	if !ok || src.Governed != govern.Version {
		t.Fatalf("source %+v, want Governed %d", src, govern.Version)
	}
	src.Governed = 0
	notes := p.Notes("jim")
	for i := range notes {
		notes[i].Governance = govern.Note{}
	}
	if _, err := p.ApplySource(context.Background(), "jim", src, notes); err != nil {
		t.Fatal(err)
	}
	if s := mineT(t, p, filepath.Join(dir, "agents", "jim"), Options{}); s.FilesChanged != 1 || s.NotesAdded != 0 {
		t.Fatalf("mine of an older palace: %+v, want the file classified again, nothing re-embedded", s)
	}
	got := map[string]govern.Note{}
	for _, n := range p.Notes("jim") {
		got[n.Text] = n.Governance
	}
	if g := got["Old plan (superseded)."]; g.Status != govern.Superseded {
		t.Errorf("superseded note not upgraded: %+v", g)
	}
	if g := got["Current plan #roadmap"]; !slices.Equal(g.Tags, []string{"roadmap"}) {
		t.Errorf("tagged note not upgraded: %+v", g)
	}
	if s := mineT(t, p, filepath.Join(dir, "agents", "jim"), Options{}); s.FilesUnchanged != 1 {
		t.Fatalf("mine after the upgrade: %+v, want the file unchanged", s)
	}
}

// TestChanged: Changed lists what a mine would read again or remove, by
// the rule mine itself follows, and records a file that reads unchanged
// once settled as settled, so it is not read again.
func TestChanged(t *testing.T) {
	hive := t.TempDir()
	old := time.Now().Add(-time.Hour)
	mem := writeFile(t, hive, "agents/a/memory.md", "- kept\n")
	notes := writeFile(t, hive, "agents/a/notes.md", "- to be removed\n")
	recent := writeFile(t, hive, "agents/a/recent.md", "- written just before the mine\n")
	for _, f := range []string{mem, notes} {
		if err := os.Chtimes(f, old, old); err != nil {
			t.Fatal(err)
		}
	}
	// Written 1.5 s ago: mined before it settles, settled soon after.
	written := time.Now().Add(-1500 * time.Millisecond)
	if err := os.Chtimes(recent, written, written); err != nil {
		t.Fatal(err)
	}
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	dir, _ := filepath.EvalSymlinks(filepath.Join(hive, "agents/a"))
	mineT(t, p, dir, Options{})
	if ch := Changed(p, "a", dir); len(ch.Files) != 3 || len(ch.Changed) != 0 || len(ch.Gone) != 0 {
		t.Fatalf("Changed right after the mine = %+v", ch)
	}
	rec := filepath.Join(dir, "recent.md")
	if src, _ := p.Source("a", rec); settled(src) {
		t.Log("recent.md had settled by the time it was mined (a slow mine); the check below still holds")
	}
	for !settledAt(written, time.Now()) {
		time.Sleep(50 * time.Millisecond)
	}
	Changed(p, "a", dir)
	if src, _ := p.Source("a", rec); !settled(src) {
		t.Fatalf("recent.md read unchanged after it settled is not recorded as settled: %+v", src)
	}

	if err := os.Remove(notes); err != nil {
		t.Fatal(err)
	}
	fresh := writeFile(t, hive, "agents/a/fresh.md", "- new\n")
	writeFile(t, hive, "agents/a/memory.md", "- kept, and more\n")
	ch := Changed(p, "a", dir)
	var changed []string
	for _, f := range ch.Changed {
		changed = append(changed, filepath.Base(f.Path))
	}
	sort.Strings(changed)
	if !slices.Equal(changed, []string{filepath.Base(fresh), "memory.md"}) || len(ch.Gone) != 1 || filepath.Base(ch.Gone[0]) != "notes.md" {
		t.Fatalf("Changed after an edit, a new file and a removal = %+v", ch)
	}
}

// TestErrorsCarryNoCLIAdvice: mine's errors are sentinels the CLI turns
// into advice (which flag to pass); they name no flag themselves.
func TestErrorsCarryNoCLIAdvice(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "hive/agents/pam/memory.md", "- x\n")
	writeFile(t, root, "Bad Name/memory.md", "- x\n")
	tests := []struct {
		name string
		path string
		opts Options
		want error
	}{
		{"agent for a whole hive", "hive", Options{Agent: "claude"}, ErrAgentNeedsWing},
		{"directory name no wing id", "Bad Name", Options{}, hive.ErrBadWingID},
		{"bad --wing", "hive/agents/pam", Options{Wing: "bad wing"}, hive.ErrBadWingID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
			_, err := Mine(context.Background(), p, filepath.Join(root, tt.path), tt.opts)
			if !errors.Is(err, tt.want) || strings.Contains(err.Error(), "--") {
				t.Fatalf("err = %v, want %v without CLI advice", err, tt.want)
			}
		})
	}
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	mineT(t, p, filepath.Join(root, "hive"), Options{})
	_, err := Forget(p, "pam", ForgetOptions{Hive: filepath.Join(root, "hive")})
	if !errors.Is(err, ErrAgentExists) || strings.Contains(err.Error(), "--") {
		t.Fatalf("Forget of a wing whose agent directory exists: %v", err)
	}
}

// errBadWingID is hive.ErrBadWingID, for tests whose hive variable hides
// the package.
var errBadWingID = hive.ErrBadWingID
