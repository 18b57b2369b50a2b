package mine

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/palace"
)

// A mine reads whole only the wings whose files changed: the others stay
// as the palace was opened, read in place, and the palace written after it
// holds every wing.
func TestMineReadsOnlyChangedWings(t *testing.T) {
	h := filepath.Join(t.TempDir(), "hive")
	past := time.Now().Add(-time.Hour)
	for _, a := range []string{"ann", "bob", "cy"} {
		path := filepath.Join(h, "agents", a, "memory.md")
		testutil.WriteFile(t, path, "# Memory\n\n- "+a+" keeps the build green.\n- "+a+" owns the runbook.\n")
		if err := os.Chtimes(path, past, past); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "palace")
	p := openPalace(t, dir, nil)
	mineT(t, p, h, Options{})
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()

	bob := filepath.Join(h, "agents", "bob", "memory.md")
	f, err := os.OpenFile(bob, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("- bob moved the cache to redis-7.\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(bob, past.Add(time.Minute), past.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	p = openPalace(t, dir, nil)
	if got := p.WholeWings(); len(got) != 0 {
		t.Fatalf("opened whole: %v", got)
	}
	s := mineT(t, p, h, Options{})
	if s.FilesChanged != 1 || s.NotesAdded != 1 || s.NotesUnchanged != 6 {
		t.Fatalf("mine: %+v", s)
	}
	if got := p.WholeWings(); !reflect.DeepEqual(got, []string{"bob"}) {
		t.Fatalf("read whole: %v, want the changed wing alone", got)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	q := openPalace(t, dir, nil)
	for wing, n := range map[string]int{"ann": 2, "bob": 3, "cy": 2} {
		if got := len(q.Notes(wing)); got != n {
			t.Errorf("wing %s holds %d notes, want %d", wing, got, n)
		}
	}
	if hits, err := q.Search(context.Background(), "redis-7", palace.SearchOptions{Mode: palace.LexicalOnly}); err != nil || len(hits) == 0 || hits[0].Wing != "bob" {
		t.Errorf("search after the mine: %v, %v", hits, err)
	}
}
