package mine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/palace"
)

// planHive writes a hive of three agents whose files settled an hour
// ago, and mines it into a palace at dir.
func planHive(t *testing.T) (hive, dir string) {
	t.Helper()
	base := t.TempDir()
	hive, dir = filepath.Join(base, "hive"), filepath.Join(base, "palace")
	past := time.Now().Add(-time.Hour)
	for _, a := range []string{"ann", "bob", "cy"} {
		path := filepath.Join(hive, "agents", a, "memory.md")
		testutil.WriteFile(t, path, "# Memory\n\n- "+a+" keeps the build green.\n- "+a+" owns the runbook.\n")
		if err := os.Chtimes(path, past, past); err != nil {
			t.Fatal(err)
		}
	}
	p := openPalace(t, dir, nil)
	mineT(t, p, hive, Options{})
	// A second mine records that the files had settled when mined.
	mineT(t, p, hive, Options{})
	p.Close()
	return hive, dir
}

// minePlanT mines hive into the palace at dir as `memminer mine` does:
// the hive listed first, the palace opened with the plan's Unchanged.
func minePlanT(t *testing.T, dir, hive string, opts Options) (Summary, []string) {
	t.Helper()
	pl := NewPlan(hive, opts)
	p, err := palace.Open(context.Background(), dir, palace.Options{Unchanged: pl.Unchanged})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var unloaded []string
	for _, w := range []string{"ann", "bob", "cy"} {
		if p.Unloaded(w) {
			unloaded = append(unloaded, w)
		}
	}
	s, err := MinePlan(context.Background(), p, pl)
	if err != nil {
		t.Fatal(err)
	}
	return s, unloaded
}

// palaceState is every wing's notes and sources, read from dir anew.
func palaceState(t *testing.T, dir string) map[string][]palace.Note {
	t.Helper()
	p := openPalace(t, dir, nil)
	defer p.Close()
	out := map[string][]palace.Note{}
	for _, w := range p.Wings() {
		out[w.ID] = p.Notes(w.ID)
	}
	return out
}

// A mine planned first leaves unloaded the wings none of whose files
// changed, says what a mine of every wing says, and leaves the palace as
// that mine does.
func TestPlanLeavesUnchangedWingsUnloaded(t *testing.T) {
	later := time.Now().Add(-30 * time.Minute)
	for _, tt := range []struct {
		name     string
		change   func(t *testing.T, hive, dir string)
		unloaded []string
	}{
		{"nothing changed", func(*testing.T, string, string) {}, []string{"ann", "bob", "cy"}},
		{"an append", func(t *testing.T, hive, _ string) {
			path := filepath.Join(hive, "agents", "bob", "memory.md")
			testutil.AppendFile(t, path, "- bob moved the cache to redis-7.\n")
			if err := os.Chtimes(path, later, later); err != nil {
				t.Fatal(err)
			}
		}, []string{"ann", "cy"}},
		{"a file written just now", func(t *testing.T, hive, _ string) {
			testutil.AppendFile(t, filepath.Join(hive, "agents", "cy", "memory.md"), "- cy just wrote this.\n")
		}, []string{"ann", "bob"}},
		{"a new file in a wing", func(t *testing.T, hive, _ string) {
			testutil.WriteFile(t, filepath.Join(hive, "agents", "ann", "notes.md"), "- a second file of ann's.\n")
		}, []string{"bob", "cy"}},
		{"a file gone", func(t *testing.T, hive, _ string) {
			testutil.WriteFile(t, filepath.Join(hive, "agents", "ann", "notes.md"), "- a second file of ann's.\n")
			p := openPalace(t, filepath.Join(filepath.Dir(hive), "palace"), nil)
			mineT(t, p, hive, Options{})
			p.Close()
			if err := os.Remove(filepath.Join(hive, "agents", "ann", "notes.md")); err != nil {
				t.Fatal(err)
			}
		}, []string{"bob", "cy"}},
		{"a same-size edit of a file mined unsettled", func(t *testing.T, hive, dir string) {
			// Mined within racyWindow of its write, a file's size and
			// mtime do not say it is unchanged: it is read again.
			path := filepath.Join(hive, "agents", "cy", "memory.md")
			testutil.WriteFile(t, path, "# Memory\n\n- cy wrote this just now.\n")
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			p := openPalace(t, dir, nil)
			mineT(t, p, hive, Options{})
			p.Close()
			testutil.WriteFile(t, path, "# Memory\n\n- cy wrote that just now.\n")
			if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}, []string{"ann", "bob"}},
		{"a new agent", func(t *testing.T, hive, _ string) {
			testutil.WriteFile(t, filepath.Join(hive, "agents", "dee", "memory.md"), "- dee is new.\n")
		}, []string{"ann", "bob", "cy"}},
		{"a wing file another writer replaced", func(t *testing.T, _, dir string) {
			// Its seal no longer holds: it is checked whole, so loaded.
			path := filepath.Join(dir, "wings", "cy.wing")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			testutil.WriteFile(t, path, string(data))
		}, []string{"ann", "bob"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hive, dir := planHive(t)
			tt.change(t, hive, dir)
			// The reference: the same palace and hive, every wing loaded.
			ref := filepath.Join(t.TempDir(), "palace")
			testutil.CopyDir(t, dir, ref)
			p := openPalace(t, ref, nil)
			want := mineT(t, p, hive, Options{})
			p.Close()

			got, unloaded := minePlanT(t, dir, hive, Options{})
			if !slices.Equal(unloaded, tt.unloaded) {
				t.Fatalf("unloaded %v, want %v", unloaded, tt.unloaded)
			}
			got.Duration, want.Duration = 0, 0
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("summary\n%+v\nwant, with every wing loaded,\n%+v", got, want)
			}
			if g, w := palaceState(t, dir), palaceState(t, ref); !reflect.DeepEqual(g, w) {
				t.Fatalf("palace after the planned mine\n%+v\nafter a mine of every wing\n%+v", g, w)
			}
		})
	}
}

// A wing left unloaded is loaded by anything that reads it, so a caller
// other than the plan's mine still sees it.
func TestUnloadedWingLoadsWhenRead(t *testing.T) {
	hive, dir := planHive(t)
	pl := NewPlan(hive, Options{})
	p, err := palace.Open(context.Background(), dir, palace.Options{Unchanged: pl.Unchanged})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !p.Unloaded("ann") || !p.Unloaded("bob") {
		t.Fatal("the plan left no wing unloaded")
	}
	if !p.HasWing("ann") || p.Unloaded("ann") {
		t.Fatal("HasWing of an unloaded wing does not load it")
	}
	if n := len(p.Notes("bob")); n != 2 || p.Unloaded("bob") {
		t.Fatalf("Notes of an unloaded wing: %d notes", n)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if got := palaceState(t, dir); len(got) != 3 || len(got["cy"]) != 2 {
		t.Fatalf("palace after a flush with a wing unloaded: %+v", got)
	}
}

// The plan lists the hive once the writer lock is held, as a mine of
// every wing does: a file changed while the mine waits for another
// writer is mined by it (found by review: it was listed before).
func TestPlanListsOnceLocked(t *testing.T) {
	hive, dir := planHive(t)
	holder := openPalace(t, dir, nil)
	pl := NewPlan(hive, Options{})
	done := make(chan Summary)
	go func() {
		p, err := palace.Open(context.Background(), dir, palace.Options{Unchanged: pl.Unchanged, LockTimeout: time.Minute})
		if err != nil {
			t.Error(err)
			close(done)
			return
		}
		defer p.Close()
		s, err := MinePlan(context.Background(), p, pl)
		if err != nil {
			t.Error(err)
		}
		done <- s
	}()
	// While the mine waits for the lock (or before it starts: the
	// outcome is the same), a file changes.
	time.Sleep(200 * time.Millisecond)
	path := filepath.Join(hive, "agents", "bob", "memory.md")
	testutil.AppendFile(t, path, "- bob moved the cache to redis-7.\n")
	past := time.Now().Add(-time.Minute)
	if err := os.Chtimes(path, past, past); err != nil {
		t.Fatal(err)
	}
	holder.Close()
	if s := <-done; s.FilesChanged != 1 || s.NotesAdded != 1 {
		t.Fatalf("the mine waiting for the lock: %+v", s)
	}
}

// The manifest decides which wings stay unloaded only as its writer
// wrote it: an entry edited since (a path, a count) has its wing loaded,
// and a manifest of an earlier build, without digests, is written again
// by the next mine so that the one after may leave wings unloaded.
func TestPlanTrustsOnlyTheManifestAsWritten(t *testing.T) {
	manifest := func(dir string) map[string]any {
		// Numbers kept as written: a seal's are too large for a float.
		dec := json.NewDecoder(strings.NewReader(testutil.ReadFile(t, filepath.Join(dir, "manifest.json"))))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	write := func(dir string, m map[string]any) {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		testutil.WriteFile(t, filepath.Join(dir, "manifest.json"), string(b))
	}
	t.Run("an edited entry", func(t *testing.T) {
		hive, dir := planHive(t)
		m := manifest(dir)
		src := m["wings"].(map[string]any)["bob"].(map[string]any)["sources"].([]any)[0].(map[string]any)
		src["notes"] = json.Number("7")
		write(dir, m)
		s, unloaded := minePlanT(t, dir, hive, Options{})
		if !slices.Equal(unloaded, []string{"ann", "cy"}) || s.NotesUnchanged != 6 {
			t.Fatalf("unloaded %v, summary %+v: the edited entry was trusted", unloaded, s)
		}
		// That mine wrote the entry again: the next leaves bob unloaded.
		if _, unloaded := minePlanT(t, dir, hive, Options{}); len(unloaded) != 3 {
			t.Fatalf("the mine after: unloaded %v, want every wing", unloaded)
		}
	})
	t.Run("an earlier build's manifest", func(t *testing.T) {
		hive, dir := planHive(t)
		m := manifest(dir)
		for _, e := range m["wings"].(map[string]any) {
			delete(e.(map[string]any), "digest")
		}
		write(dir, m)
		if _, unloaded := minePlanT(t, dir, hive, Options{}); len(unloaded) != 0 {
			t.Fatalf("unloaded %v without digests", unloaded)
		}
		if _, unloaded := minePlanT(t, dir, hive, Options{}); len(unloaded) != 3 {
			t.Fatalf("the mine after: unloaded %v, want every wing", unloaded)
		}
	})
}
