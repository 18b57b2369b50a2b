package mine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/palace"
)

// TestCopiedOrMovedHiveKeepsOnePlace: a hive mined, then copied or moved
// and mined at its new place (as a hive, one agent directory at a time,
// or by a daemon with the hive configured), leaves the wing one root and
// one file holding every note; the old place's entry is pruned, even
// while the copy it names still exists.
func TestCopiedOrMovedHiveKeepsOnePlace(t *testing.T) {
	tests := []struct {
		name    string
		move    bool
		minedAs func(newHive string) (string, Options)
	}{
		{"copy mined as a hive", false, func(h string) (string, Options) { return h, Options{} }},
		{"copy mined by agent directory", false, func(h string) (string, Options) { return filepath.Join(h, "agents", "a"), Options{} }},
		{"copy mined with the hive configured", false, func(h string) (string, Options) {
			return filepath.Join(h, "agents", "a"), Options{Hive: h}
		}},
		{"copy in a glob's agent directory", false, func(h string) (string, Options) { return h, Options{Agents: []string{"team/*"}} }},
		{"move mined as a hive", true, func(h string) (string, Options) { return h, Options{} }},
		{"move mined with the hive configured", true, func(h string) (string, Options) {
			return filepath.Join(h, "agents", "a"), Options{Hive: h}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			oldHive, newHive := filepath.Join(tmp, "old"), filepath.Join(tmp, "new")
			writeFile(t, oldHive, "agents/a/memory.md", dwightMemory)
			writeFile(t, oldHive, "agents/a/notes/more.md", "- One more note.\n")
			writeFile(t, oldHive, "team/b/memory.md", "- The team agent's note.\n")
			p := openPalace(t, filepath.Join(tmp, "palace"), nil)
			mineT(t, p, oldHive, Options{Agents: []string{"team/*"}})
			if tt.move {
				if err := os.Rename(oldHive, newHive); err != nil {
					t.Fatal(err)
				}
			} else {
				testutil.CopyDir(t, oldHive, newHive)
			}
			path, opts := tt.minedAs(newHive)
			mineT(t, p, path, opts)
			wings := []string{"a"}
			if len(opts.Agents) > 0 {
				wings = append(wings, "b")
			}
			for _, w := range wings {
				checkOnePlace(t, p, w, newHive)
			}
		})
	}
}

// checkOnePlace fails unless every file, root and note of wing lies in
// hive, and every file holds notes.
func checkOnePlace(t *testing.T, p *palace.Palace, wing, hive string) {
	t.Helper()
	for _, r := range p.Roots(wing) {
		if !within(hive, r, true) {
			t.Errorf("wing %s keeps root %s", wing, r)
		}
	}
	held := map[string]int{}
	for _, n := range p.Notes(wing) {
		held[n.Source]++
	}
	for _, s := range p.Sources(wing) {
		if !within(hive, s.Path, true) || held[s.Path] == 0 {
			t.Errorf("wing %s lists %s with %d notes", wing, s.Path, held[s.Path])
		}
	}
}

// TestSameNameElsewhereKeepsItsNotes: a directory mined into a wing that
// has the agent directory's name but lies at no agent directory's place
// (notes/a, mined with --wing a) is no earlier place of the hive: mining
// the hive keeps its notes.
func TestSameNameElsewhereKeepsItsNotes(t *testing.T) {
	tmp := t.TempDir()
	hive := filepath.Join(tmp, "hive")
	writeFile(t, hive, "agents/a/memory.md", dwightMemory)
	writeFile(t, tmp, "notes/a/extra.md", "- Kept in the notes folder.\n")
	p := openPalace(t, filepath.Join(tmp, "palace"), nil)
	mineT(t, p, filepath.Join(tmp, "notes", "a"), Options{Wing: "a"})
	for _, opts := range []Options{{}, {Hive: hive}} {
		s, err := Mine(context.Background(), p, hive, opts)
		if err != nil || s.NotesRemoved != 0 || len(p.Roots("a")) != 2 || len(p.Sources("a")) != 2 {
			t.Fatalf("mine of the hive (%+v): %+v, %v; roots %v", opts, s, err, p.Roots("a"))
		}
	}
}

// TestBothPlacesAreHealed: a palace an earlier version left holding both
// the old copy's files (with 0 notes) and the new ones is cleaned by the
// next mine of the new place, though no file changed.
func TestBothPlacesAreHealed(t *testing.T) {
	tmp := t.TempDir()
	oldHive, newHive := filepath.Join(tmp, "old"), filepath.Join(tmp, "new")
	writeFile(t, oldHive, "agents/a/memory.md", dwightMemory)
	p := openPalace(t, filepath.Join(tmp, "palace"), nil)
	mineT(t, p, oldHive, Options{})
	testutil.CopyDir(t, oldHive, newHive)
	// The earlier version's mine: the job knew no hive, so no place.
	root := filepath.Join(newHive, "agents", "a")
	j := job{wing: "a", root: root, isDir: true, base: root}
	j.files, j.problems = collect(j)
	if _, err := mineOne(context.Background(), p, j, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(p.Sources("a")) != 2 {
		t.Fatalf("the earlier state has %d files, want both places'", len(p.Sources("a")))
	}
	s := mineT(t, p, newHive, Options{})
	if s.FilesChanged != 0 || s.FilesRemoved != 1 || s.NotesRemoved != 0 {
		t.Errorf("healing mine: %+v", s)
	}
	checkOnePlace(t, p, "a", newHive)
}
