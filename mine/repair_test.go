package mine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/palace"
)

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
