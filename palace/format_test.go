package palace

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace/internal/wingfile"
)

// roundTripWing is a wing of more notes, note ids and version notes than
// fit one batch: two sources, the first listing an id no note has and a
// note of the second, with three earlier versions (unchanged notes, changed
// ones, a note moved under another heading, an empty one, a version of no
// notes); with dim > 0 every note has a vector.
func roundTripWing(dim int) (*wingMeta, [][]float32) {
	day := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	a, b := "/hive/agents/w/memory.md", "/hive/agents/w/notes/b.md"
	m := &wingMeta{ID: "w", Model: "lexical", Dim: dim, Roots: []string{"/hive/agents/w"}, LastMined: day}
	if dim > 0 {
		m.Model = "test-hashing"
	}
	var idsA, idsB []string
	var notes []*Note
	for i := range 2*batchLen + 500 {
		src, heading := a, fmt.Sprintf("Infra > Part %d", i/7)
		if i >= 2*batchLen {
			src = b
		}
		if i%50 == 0 {
			heading = ""
		}
		n := &Note{ID: fmt.Sprintf("%032x", i), Wing: "w", Agent: "w", Source: src, Line: i + 1, Heading: heading,
			Text: fmt.Sprintf("- fact %d: db-%d runs postgres %d", i, i%9, i)}
		if i%3 == 0 {
			n.Governance = govern.Note{Status: govern.Approved, Reason: "approved: in frontmatter", Date: day, Review: day.AddDate(0, 3, 0), StaleAfter: govern.Never, Tags: []string{"db", "infra"}}
		}
		notes = append(notes, n)
		if src == a {
			idsA = append(idsA, n.ID)
		} else {
			idsB = append(idsB, n.ID)
		}
	}
	var same, changed []VersionNote
	m.Notes = storedNotes(notes...)
	for i, n := range notes[:2*batchLen] {
		vn := VersionNote{Heading: n.Heading, Text: n.Text, Line: n.Line - 1}
		same = append(same, vn)
		if i%10 == 0 {
			vn.Text += " (before)"
		}
		if i%10 == 1 {
			vn.Heading = "Moved"
		}
		changed = append(changed, vn)
	}
	changed = append(changed, VersionNote{Line: 9000})
	fm := map[string]string{"updated": "2026-11-19", "owner": "w"}
	m.Sources = []Source{
		{Path: a, Agent: "w", Mtime: day, Size: 1 << 20, Hash: "h3", NoteIDs: append(append(idsA, "no-such-note"), idsB[0]),
			Frontmatter: fm, Mined: day, Governed: govern.Version, NoteFormat: 2,
			Earlier: []Version{
				{Hash: "h2", Mined: day.Add(-time.Hour), Notes: same, Frontmatter: fm},
				{Hash: "h1", Mined: day.Add(-2 * time.Hour)},
				{Hash: "h0", Mined: day.Add(-3 * time.Hour), Notes: changed},
			}},
		{Path: b, Agent: "w", Mtime: day, Size: 300, Hash: "b1", NoteIDs: idsB, Mined: day, Governed: govern.Version, NoteFormat: 2},
	}
	vecs := [][]float32{}
	if dim > 0 {
		for i, n := range m.Notes {
			m.VecIDs = append(m.VecIDs, n.id)
			v := make([]float32, dim)
			for j := range v {
				v[j] = float32(i*dim+j) / 7
			}
			vecs = append(vecs, v)
		}
	}
	return m, vecs
}

// A wing file reads back what was written: notes, sources, earlier
// versions and vectors, of a lexical wing and of one with vectors.
func TestWingFileRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		dim  int
	}{{"lexical", 0}, {"vectors", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			m, vecs := roundTripWing(tc.dim)
			want := testutil.IndentJSON(t, wingDump{m, vecs})
			path := filepath.Join(t.TempDir(), "w.wing")
			if err := atomicfile.WriteFunc(path, 0o600, func(f *os.File) error { return writeWing(f, m, vecs) }); err != nil {
				t.Fatal(err)
			}
			if got := testutil.IndentJSON(t, wingDump{m, vecs}); got != want {
				t.Fatal("writing the wing changed it")
			}
			got, gotVecs, err := readWing(path, maxWingFile)
			if err != nil {
				t.Fatal(err)
			}
			if got := testutil.IndentJSON(t, wingDump{got, gotVecs}); got != want {
				t.Fatalf("read\n%.3000s\nwant\n%.3000s", got, want)
			}
		})
	}
}

// Earlier versions refer to the file's current notes: mining a file
// again adds a version that costs about two bytes a note (a copy of its
// headings and texts, 120 here, before format 2), and the versions read
// back whole.
func TestEarlierVersionsAreStoredByReference(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, nil, false)
	path := "/hive/agents/w/memory.md"
	var notes []Note
	textBytes := 0
	for i := range 3000 {
		n := note(fmt.Sprintf("%032x", i), fmt.Sprintf("Infra > Part %d", i/20), fmt.Sprintf("- postgres-%d runs on db-%d since the migration of its wal archive to the new array (added 2026-01-%02d).", i, i%7, i%28+1), i+1)
		notes = append(notes, n)
		textBytes += len(n.Heading) + len(n.Text)
	}
	var sizes []int64
	var mined [][]VersionNote // every content mined, oldest first
	for v := range MaxEarlierVersions + 1 {
		if v > 0 {
			notes = append(notes, note(fmt.Sprint("added-", v), "Infra", fmt.Sprint("- appended note ", v), len(notes)+1))
		}
		var content []VersionNote
		for _, n := range notes {
			content = append(content, VersionNote{Heading: n.Heading, Text: n.Text, Line: n.Line})
		}
		mined = append(mined, content)
		if _, err := p.ApplySource(ctx, "w", Source{Path: path, Agent: "a", Hash: fmt.Sprint("h", v)}, slices.Clone(notes)); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, flushedSize(t, p, "w"))
	}
	t.Logf("wing file of %d notes (%d bytes of headings and texts): %d bytes", len(notes), textBytes, sizes[0])
	for v := 1; v < len(sizes); v++ {
		grew := sizes[v] - sizes[v-1]
		t.Logf("earlier version %d: %d bytes more", v, grew)
		if grew > 3*int64(len(notes)) {
			t.Errorf("earlier version %d took %d bytes of the wing file for %d notes (%d bytes of headings and texts), want at most 3 a note", v, grew, len(notes), textBytes)
		}
	}
	q := openT(t, dir, nil, true)
	got := q.Versions("w", path)
	if len(got) != len(mined) {
		t.Fatalf("%d versions read back, want %d", len(got), len(mined))
	}
	for i, v := range got {
		if want := mined[len(mined)-1-i]; v.Hash != fmt.Sprint("h", len(mined)-1-i) || !slices.Equal(v.Notes, want) {
			t.Errorf("version %d = %s with %d notes, want %d notes", i, v.Hash, len(v.Notes), len(want))
		}
	}
}

// wingFileOf is a version 2 wing file of no vectors whose meta stream is
// parts, checksummed: what it holds is decoded.
func wingFileOf(t *testing.T, parts ...any) []byte {
	t.Helper()
	var meta bytes.Buffer
	enc := gob.NewEncoder(&meta)
	for _, p := range parts {
		if err := enc.Encode(p); err != nil {
			t.Fatal(err)
		}
	}
	return checksummed(wingfile.Magic(2), meta.Bytes(), nil)
}

// A version 2 wing file that checks out but does not hold what its parts
// say (the writer's bug, or a crafted file) is reported corrupt, never
// trusted and never a panic.
func TestInconsistentWingFilesAreCorrupt(t *testing.T) {
	n := func() *Note { return &Note{ID: "a", Wing: "w", Source: "/m.md", Heading: "H", Text: "alpha"} }
	head := &wingHead{ID: "w", Model: "lexical", Notes: 1, Sources: 1}
	notes := &noteBatch{Notes: []*Note{n()}, Same: []byte{0}}
	source := &sourceHead{Source: Source{Path: "/m.md"}, NoteIDs: 1, Earlier: 1}
	ids := &idBatch{Deltas: []int{0}}
	version := &versionHead{Version: Version{Hash: "h0"}, Notes: 1}
	versionNotes := &versionBatch{Deltas: []int{0}, Shifts: []int{1}}
	valid := []any{head, notes, source, ids, version, versionNotes}
	// with replaces the parts at i, i+1, ... of valid.
	with := func(i int, part ...any) []any {
		parts := slices.Clone(valid)
		copy(parts[i:], part)
		return parts
	}
	twoIDs := &sourceHead{Source: Source{Path: "/m.md"}, NoteIDs: 2}
	cases := map[string][]any{
		"fewer notes than counted":       {&wingHead{ID: "w", Notes: 2}, notes},
		"more notes than counted":        with(1, &noteBatch{Notes: []*Note{n(), n()}, Same: []byte{0, 0}}),
		"a negative count":               {&wingHead{ID: "w", Notes: -1}},
		"a count larger than the file":   {&wingHead{ID: "w", Sources: 1 << 30}},
		"an empty batch":                 with(1, &noteBatch{}),
		"flags missing":                  with(1, &noteBatch{Notes: []*Note{n()}}),
		"a flag for a string not elided": {&wingHead{ID: "w", Notes: 1}, &noteBatch{Notes: []*Note{n()}, Same: []byte{sameHeading}}},
		"an unknown flag":                {&wingHead{ID: "w", Notes: 1}, &noteBatch{Notes: []*Note{{ID: "a"}}, Same: []byte{0x80}}},
		"a note id out of range":         with(3, &idBatch{Deltas: []int{1}}),
		"a note id before the first":     with(3, &idBatch{Deltas: []int{-1}}),
		"more note ids than counted":     with(3, &idBatch{Deltas: []int{0, -1}}),
		"an id without its place":        with(3, &idBatch{IDs: []string{"x"}}),
		"an id at no place of the batch": with(3, &idBatch{Missing: []int{1}, IDs: []string{"x"}}),
		"ids out of order":               with(2, twoIDs, &idBatch{Missing: []int{1, 0}, IDs: []string{"x", "y"}}),
		"a version note out of range":    with(5, &versionBatch{Deltas: []int{1}, Shifts: []int{0}}),
		"a version note without shift":   with(5, &versionBatch{Deltas: []int{0}}),
		"a version note without place":   with(5, &versionBatch{Inline: []VersionNote{{Text: "beta"}}}),
		"note ids inside the source":     with(2, &sourceHead{Source: Source{Path: "/m.md", NoteIDs: []string{"a"}}, NoteIDs: 1, Earlier: 1}),
		"a missing version":              valid[:4],
		"data after the last part":       append(slices.Clone(valid), head),
		"a part of another type":         with(2, notes),
		"a dimension that overflows":     {&wingHead{ID: "w", Dim: 1 << 62, Vectors: 1}, &idBatch{Missing: []int{0}, IDs: []string{"x"}}},
	}
	dir := t.TempDir()
	read := func(name string, parts []any) error {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+wingExt)
		if err := os.WriteFile(path, wingFileOf(t, parts...), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := readWing(path, maxWingFile)
		return err
	}
	if err := read("valid", valid); err != nil {
		t.Fatalf("the valid file: %v", err)
	}
	for name, parts := range cases {
		t.Run(name, func(t *testing.T) {
			if err := read(name, parts); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("read = %v, want ErrCorrupt", err)
			}
		})
	}
}

// The format names some fields of wingMeta and VersionNote itself: a
// field added to either must be added to the format too, or it is lost.
func TestWingFormatCoversEveryField(t *testing.T) {
	head := reflect.TypeFor[wingHead]()
	meta := reflect.TypeFor[wingMeta]()
	for i := range meta.NumField() {
		f := meta.Field(i)
		if f.Name == "Notes" || f.Name == "Sources" || f.Name == "VecIDs" {
			continue // batches of their own
		}
		if h, ok := head.FieldByName(f.Name); !ok || h.Type != f.Type {
			t.Errorf("wingMeta.%s is not in wingHead", f.Name)
		}
	}
	// A version's note that refers to a current note takes its heading
	// and text from it and its line from the shift: nothing else.
	var names []string
	for f := range reflect.TypeFor[VersionNote]().Fields() {
		names = append(names, f.Name)
	}
	if !slices.Equal(names, []string{"Heading", "Text", "Line"}) {
		t.Errorf("VersionNote has fields %v; versionBatch codes Heading, Text and Line only", names)
	}
}

// A count in a file that checks out is only bounded by the file's size,
// and what it counts can be far larger in memory than on the wire: a file
// claiming that many sources, earlier versions, notes or ids is corrupt
// at the cost of a few times its size, not of what the count would take
// (178 times the file for sources).
func TestCraftedCountsCostLittleMemory(t *testing.T) {
	text := strings.Repeat("x", 1<<20) // the bytes that make a count plausible
	n := &Note{ID: "a", Wing: "w", Source: "/m.md", Heading: "H", Text: text}
	notes := &noteBatch{Notes: []*Note{n}, Same: []byte{0}}
	head := &wingHead{ID: "w", Model: "lexical", Notes: 1, Sources: 1}
	const many = 1 << 20
	cases := map[string][]any{
		"sources":       {&wingHead{ID: "w", Notes: 1, Sources: many}, notes},
		"notes":         {&wingHead{ID: "w", Notes: many, Roots: []string{text}}},
		"vector ids":    {&wingHead{ID: "w", Vectors: many, Roots: []string{text}}},
		"note ids":      {head, notes, &sourceHead{Source: Source{Path: "/m.md"}, NoteIDs: many}},
		"versions":      {head, notes, &sourceHead{Source: Source{Path: "/m.md"}, Earlier: many}},
		"version notes": {head, notes, &sourceHead{Source: Source{Path: "/m.md"}, Earlier: 1}, &versionHead{Version: Version{Hash: "h"}, Notes: many}},
	}
	dir := t.TempDir()
	for name, parts := range cases {
		t.Run(name, func(t *testing.T) {
			data := wingFileOf(t, parts...)
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+wingExt)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			before := totalAlloc()
			_, _, err := readWing(path, maxWingFile)
			times := float64(totalAlloc()-before) / float64(len(data))
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("read = %v, want ErrCorrupt", err)
			}
			t.Logf("allocated %.1f times the file", times)
			if times > 8 {
				t.Errorf("reading the file allocated %.1f times its size, want at most 8", times)
			}
		})
	}
}

// FuzzDecodeMeta: a meta stream (what a crafted file that checks out
// holds) either decodes, to a wing that encodes and decodes again to the
// same, or is an error; it never panics.
func FuzzDecodeMeta(f *testing.F) {
	day := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	a := &Note{ID: "a", Wing: "w", Agent: "w", Source: "/m.md", Line: 1, Heading: "H", Text: "alpha", Governance: govern.Note{Tags: []string{"t"}}}
	b := &Note{ID: "b", Wing: "w", Agent: "w", Source: "/m.md", Line: 2, Heading: "H", Text: "bravo"}
	small := &wingMeta{ID: "w", Model: "lexical", Roots: []string{"/r"}, LastMined: day, Notes: storedNotes(a, b),
		Sources: []Source{{Path: "/m.md", Agent: "w", Hash: "h1", NoteIDs: []string{"a", "b", "gone"}, Mined: day,
			Earlier: []Version{{Hash: "h0", Notes: []VersionNote{{Heading: "H", Text: "alpha", Line: 3}, {Text: "old", Line: 4}}}}}},
		VecIDs: []string{"b"}}
	// Its earlier version starts with its current notes (versionHead.Current).
	grown := &wingMeta{ID: "w", Model: "lexical", Notes: storedNotes(a, b),
		Sources: []Source{{Path: "/m.md", Agent: "w", Hash: "h2", NoteIDs: []string{"a", "b"}, Mined: day,
			Earlier: []Version{{Hash: "h1", Notes: []VersionNote{{Heading: "H", Text: "alpha", Line: 1}, {Heading: "H", Text: "bravo", Line: 2}, {Text: "old", Line: 3}}}}}}}
	for _, m := range []*wingMeta{small, grown, {ID: "empty"}} {
		var buf bytes.Buffer
		if err := encodeMeta(gob.NewEncoder(&buf), m, true); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		m, err := decodeMeta(bytes.NewReader(stream), len(stream))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := encodeMeta(gob.NewEncoder(&buf), m, true); err != nil {
			t.Fatalf("decoded wing does not encode: %v", err)
		}
		again, err := decodeMeta(bytes.NewReader(buf.Bytes()), buf.Len())
		if err != nil {
			t.Fatalf("re-encoded wing does not decode: %v", err)
		}
		if x, y := describe(m), describe(again); x != y {
			t.Fatalf("decoded\n%s\nre-encoded and decoded\n%s", x, y)
		}
	})
}

// describe prints all of m, an empty slice or map as nil (a crafted
// stream may hold empty ones, which are then written as none) and any
// time (JSON refuses years past 9999).
func describe(m *wingMeta) string {
	notes := make([]Note, len(m.Notes))
	for i, n := range m.Notes {
		notes[i] = n.note()
	}
	rest := *m
	rest.Notes = nil
	return fmt.Sprintf("%+v\n%+v", rest, notes)
}
