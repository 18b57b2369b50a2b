package palace

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"unsafe"
)

// TestAppendedVersionsShareNotes: a file that only grows (remember appends
// a note each time) keeps its earlier versions as prefixes of one list of
// notes, not one list per version, in memory and after a reopen; each
// version still reads as what it was.
func TestAppendedVersionsShareNotes(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, nil, false)
	path := "/h/agents/w/memory.md"
	notes := func(n int) []Note {
		var out []Note
		for j := range n {
			out = append(out, note(fmt.Sprint("n", j), "Notes", fmt.Sprint("note number ", j), j+1))
		}
		return out
	}
	const versions = 6
	for i := range versions {
		if _, err := p.ApplySource(ctx, "w", Source{Path: path, Hash: fmt.Sprint("h", i)}, notes(10+i)); err != nil {
			t.Fatal(err)
		}
	}
	check := func(p *Palace, when string) {
		t.Helper()
		earlier := p.wings["w"].sources[path].Earlier
		if len(earlier) != MaxEarlierVersions {
			t.Fatalf("%s: %d earlier versions", when, len(earlier))
		}
		for i, v := range earlier {
			if want := 10 + versions - 2 - i; len(v.Notes) != want || v.Notes[want-1].Text != fmt.Sprint("note number ", want-1) {
				t.Fatalf("%s: version %s has %d notes, want %d", when, v.Hash, len(v.Notes), want)
			}
			if unsafe.SliceData(v.Notes) != unsafe.SliceData(earlier[0].Notes) {
				t.Errorf("%s: version %s holds its own list of notes", when, v.Hash)
			}
		}
	}
	check(p, "in memory")
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	check(openT(t, dir, nil, true), "reopened")
}
