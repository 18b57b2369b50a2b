package palace

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

// TestDroppedKeepsEveryNoteEverSeen: a file only appended to drops
// nothing, however many times it is mined; a note removed from it is in
// Dropped once every kept version has lost it too, and read back after a
// reopen, so the current notes, Earlier and Dropped are every note the
// palace ever saw in the file.
func TestDroppedKeepsEveryNoteEverSeen(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, nil, false)
	path := "/hive/agents/w/memory.md"
	var notes []Note
	mine := func(v int) {
		t.Helper()
		if _, err := p.ApplySource(ctx, "w", Source{Path: path, Agent: "a", Hash: fmt.Sprint("h", v)}, slices.Clone(notes)); err != nil {
			t.Fatal(err)
		}
	}
	v := 0
	for i := range 2 * MaxEarlierVersions {
		notes = append(notes, note(fmt.Sprint("n", i), "Log", fmt.Sprint("- appended note ", i), i+1))
		mine(v)
		v++
	}
	if src, _ := p.Source("w", path); len(src.Dropped) != 0 {
		t.Fatalf("an append-only file dropped %d notes", len(src.Dropped))
	}
	removed := notes[0]
	notes = notes[1:]
	for i := range notes {
		notes[i].Line = i + 1
	}
	for i := range MaxEarlierVersions + 1 {
		notes = append(notes, note(fmt.Sprint("m", i), "Log", fmt.Sprint("- later note ", i), len(notes)+1))
		mine(v)
		v++
	}
	want := []uint64{SeenKey(removed.Heading, removed.Text)}
	if src, _ := p.Source("w", path); !slices.Equal(src.Dropped, want) {
		t.Fatalf("Dropped = %v, want %v", src.Dropped, want)
	}
	flushedSize(t, p, "w")
	q := openT(t, dir, nil, true)
	if src, _ := q.Source("w", path); !slices.Equal(src.Dropped, want) {
		t.Fatalf("after reopening, Dropped = %v, want %v", src.Dropped, want)
	}
}
