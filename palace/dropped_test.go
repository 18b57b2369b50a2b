package palace

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"unique"
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

// TestDroppedShortcut: dropped's shortcut for a file that only grew gives
// what the whole computation does.
func TestDroppedShortcut(t *testing.T) {
	vn := func(n int) []VersionNote {
		var out []VersionNote
		for i := range n {
			out = append(out, VersionNote{Heading: "Log", Text: fmt.Sprint("note ", i), Line: i + 1})
		}
		return out
	}
	current := []*storedNote{}
	for i, n := range vn(5) {
		current = append(current, &storedNote{id: fmt.Sprint(i), text: n.Text})
		current[i].heading = unique.Make(n.Heading)
	}
	tests := []struct {
		name string
		gone *Version
		kept []Version
	}{
		{"nothing fell off", nil, []Version{{Notes: vn(4)}}},
		{"grew by a note", &Version{Notes: vn(2)}, []Version{{Notes: vn(4)}, {Notes: vn(3)}}},
		{"same notes", &Version{Notes: vn(3)}, []Version{{Notes: vn(3)}}},
		{"no version kept", &Version{Notes: vn(2)}, nil},
		{"a note left", &Version{Notes: []VersionNote{{Heading: "Log", Text: "gone"}}}, []Version{{Notes: vn(1)}}},
	}
	for _, tt := range tests {
		got, want := dropped(nil, tt.gone, current, tt.kept), droppedAll(nil, tt.gone, current, tt.kept)
		if !slices.Equal(got, want) {
			t.Errorf("%s: dropped = %v, the whole computation %v", tt.name, got, want)
		}
	}
}
