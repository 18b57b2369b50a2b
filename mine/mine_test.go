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
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/markdown"
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

// Ids never change between releases: palaces, other machines and the
// merge bases all hold them. These were made by the first form of NoteID.
func TestNoteIDGolden(t *testing.T) {
	for _, c := range []struct {
		wing, rel, heading, text string
		occurrence               int
		want                     string
	}{
		{"w", "memory.md", "H", "text", 0, "4ee5706960da9c0043be12a19d4ce989"},
		{"agent-000", "notes/x.md", "Decisions / Deploy", "- ünïcode ✓ note\nsecond line", 3, "ce6680d3628806ae5db9b0088f1e20f0"},
		{"", "", "", "", 0, "a91b7f2ab93de821abeec1750258e4d4"},
		{"a\x00b", "r", "", "t", 12345678901, "6108a4d08073c07e8edca161b31dc777"},
		{"w", "memory.md", "H", strings.Repeat("a long note ", 100), 1, fmtNoteID("w", "memory.md", "H", strings.Repeat("a long note ", 100), 1)},
	} {
		if got := NoteID(c.wing, c.rel, c.heading, c.text, c.occurrence); got != c.want {
			t.Errorf("NoteID(%q, %q, %q, %.20q, %d) = %s, want %s", c.wing, c.rel, c.heading, c.text, c.occurrence, got, c.want)
		}
	}
}

// fmtNoteID is NoteID as it was first written, with fmt into a hash: the
// reference the faster form is checked against.
func fmtNoteID(wing, rel, heading, text string, occurrence int) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%d", wing, rel, heading, text, occurrence)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func FuzzNoteIDMatchesFmt(f *testing.F) {
	f.Add("w", "memory.md", "H", "text", 0)
	f.Add("agent-1", "a/b.md", "", strings.Repeat("x", 600), -7)
	f.Fuzz(func(t *testing.T, wing, rel, heading, text string, occurrence int) {
		if got, want := NoteID(wing, rel, heading, text, occurrence), fmtNoteID(wing, rel, heading, text, occurrence); got != want {
			t.Fatalf("NoteID = %s, fmt form %s", got, want)
		}
	})
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
