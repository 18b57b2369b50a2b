package palace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace/internal/wingfile"
)

// legacyWingMeta is wingMeta as earlier versions encoded it: notes by
// value. Its files must still load.
type legacyWingMeta struct {
	ID        string
	Model     string
	Dim       int
	Roots     []string
	Sources   []Source
	Notes     []Note
	VecIDs    []string
	LastMined time.Time
}

// legacyWingFile builds a wing file in memory the way earlier versions did.
func legacyWingFile(t *testing.T, m *legacyWingMeta, vecs [][]float32) []byte {
	t.Helper()
	var meta bytes.Buffer
	if err := gob.NewEncoder(&meta).Encode(m); err != nil {
		t.Fatal(err)
	}
	var vb []byte
	for _, v := range vecs {
		for _, f := range v {
			vb = binary.LittleEndian.AppendUint32(vb, math.Float32bits(f))
		}
	}
	return checksummed(wingfile.Magic(1), meta.Bytes(), vb)
}

// checksummed is a wing file of the meta and vector parts given.
func checksummed(magic []byte, meta, vecs []byte) []byte {
	sum := sha256.Sum256(bytes.Join([][]byte{meta, vecs}, nil))
	out := append([]byte{}, magic...)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(meta)))
	out = binary.LittleEndian.AppendUint64(out, uint64(len(vecs)))
	out = append(out, sum[:]...)
	return bytes.Join([][]byte{out, meta, vecs}, nil)
}

// A version 1 wing file written before notes were encoded by pointer reads
// back the same, and writing it again (as version 2) keeps the vectors
// byte for byte and reads back the same.
func TestWingFileOfEarlierVersionsLoads(t *testing.T) {
	day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	a := Note{ID: "a", Wing: "w", Agent: "w", Source: "/h/agents/w/memory.md", Line: 3, Heading: "Build", Text: "alpha", Governance: govern.Note{Status: govern.Approved, Date: day, Tags: []string{"infra"}}}
	b := Note{ID: "b", Wing: "w", Agent: "w", Source: "/h/agents/w/memory.md", Line: 4, Heading: "Build", Text: "bravo"}
	src := Source{Path: a.Source, Agent: "w", Hash: "h2", NoteIDs: []string{"a", "b"}, Mined: day,
		Earlier: []Version{{Hash: "h1", Notes: []VersionNote{{Heading: "Build", Text: "alpha", Line: 3}}}}}
	old := &legacyWingMeta{ID: "w", Model: "test-hashing", Dim: 2, Roots: []string{"/h/agents/w"}, Sources: []Source{src},
		Notes: []Note{a, b}, VecIDs: []string{"a", "b"}, LastMined: day}
	vecs := [][]float32{{0.6, 0.8}, {1, 0}}
	dir := t.TempDir()
	oldPath := filepath.Join(dir, "old.wing")
	oldData := legacyWingFile(t, old, vecs)
	if err := os.WriteFile(oldPath, oldData, 0o600); err != nil {
		t.Fatal(err)
	}
	m, gotVecs, err := readWing(oldPath, maxWingFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Notes) != 2 || !reflect.DeepEqual(m.Notes[0].note(), a) || !reflect.DeepEqual(m.Notes[1].note(), b) {
		t.Fatalf("notes = %+v", m.Notes)
	}
	if !reflect.DeepEqual(m.Sources, old.Sources) || !reflect.DeepEqual(gotVecs, vecs) || m.ID != "w" || m.Dim != 2 || !m.LastMined.Equal(day) {
		t.Fatalf("read %+v, vectors %v", m, gotVecs)
	}

	newPath := filepath.Join(dir, "new.wing")
	if err := atomicfile.WriteFunc(newPath, 0o600, func(f *os.File) error { return writeWing(f, m, gotVecs) }); err != nil {
		t.Fatal(err)
	}
	newData, err := os.ReadFile(newPath)
	if err != nil {
		t.Fatal(err)
	}
	vecBytes := 4 * 2 * 2
	if !bytes.Equal(newData[len(newData)-vecBytes:], oldData[len(oldData)-vecBytes:]) {
		t.Fatal("vectors are not written as before")
	}
	if !bytes.Equal(newData[:8], wingfile.Magic(2)) {
		t.Fatalf("rewritten as %q", newData[:8])
	}
	again, againVecs, err := readWing(newPath, maxWingFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := testutil.IndentJSON(t, wingDump{again, againVecs}), testutil.IndentJSON(t, wingDump{m, gotVecs}); got != want {
		t.Fatalf("rewritten wing reads\n%s\nwant\n%s", got, want)
	}
}

// A loaded wing holds each repeated value once: the place (wing, agent,
// source path), heading path and governance of its notes, the note ids
// its source lists, and the texts of earlier versions that the current
// notes have too.
func TestLoadedWingSharesStrings(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, &embedtest.Hashing{}, false)
	path := "/h/agents/w/memory.md"
	first := []Note{note("a", "Build > Web", "alpha", 1), note("b", "Build > Web", "bravo", 2)}
	if _, err := p.ApplySource(ctx, "w", Source{Path: path, Hash: "h1"}, first); err != nil {
		t.Fatal(err)
	}
	second := []Note{note("a", "Build > Web", "alpha", 1), note("b", "Build > Web", "bravo", 2), note("c", "Build > Web", "charlie", 3)}
	if _, err := p.ApplySource(ctx, "w", Source{Path: path, Hash: "h2"}, second); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()

	q := openT(t, dir, &embedtest.Hashing{}, true)
	q.thaw("w") // a read-only open keeps it frozen, as search reads it
	w := q.wings["w"]
	same := func(what, x, y string) {
		t.Helper()
		if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s: %q and %q are separate copies", what, x, y)
		}
	}
	na, nb := w.note("a"), w.note("b")
	if na.place != nb.place || na.heading != nb.heading || na.gov != nb.gov {
		t.Errorf("notes a and b hold their place, heading or governance apart: %+v, %+v", na, nb)
	}
	src := w.sources[path]
	same("note id", src.NoteIDs[0], na.id)
	if len(src.Earlier) != 1 || len(src.Earlier[0].Notes) != 2 {
		t.Fatalf("earlier = %+v", src.Earlier)
	}
	same("earlier text", src.Earlier[0].Notes[0].Text, na.text)
	same("earlier heading", src.Earlier[0].Notes[1].Heading, nb.heading.Value())
}

// A note mined again unchanged keeps the strings the wing holds, which
// the file's earlier versions share: re-mining a file does not add a copy
// of its text for every version kept.
func TestRemineSharesTextsWithEarlierVersions(t *testing.T) {
	ctx := context.Background()
	p := openT(t, filepath.Join(t.TempDir(), "palace"), nil, false)
	path := "/h/agents/w/memory.md"
	fresh := func(extra ...Note) []Note {
		// New strings every time, as a parse of the file makes them.
		text := strings.Clone("alpha is unchanged")
		return append([]Note{note("a", strings.Clone("Build"), text, 1)}, extra...)
	}
	for i, hash := range []string{"h1", "h2", "h3"} {
		var extra []Note
		for j := range i {
			extra = append(extra, note(fmt.Sprint("n", j), "Build", fmt.Sprint("note ", j), j+2))
		}
		if _, err := p.ApplySource(ctx, "w", Source{Path: path, Hash: hash}, fresh(extra...)); err != nil {
			t.Fatal(err)
		}
	}
	w := p.wings["w"]
	cur := w.note("a")
	earlier := w.sources[path].Earlier
	if len(earlier) != 2 {
		t.Fatalf("earlier = %+v", earlier)
	}
	for _, v := range earlier {
		if vn := v.Notes[0]; unsafe.StringData(vn.Text) != unsafe.StringData(cur.text) || unsafe.StringData(vn.Heading) != unsafe.StringData(cur.heading.Value()) {
			t.Errorf("version %s holds its own copy of the unchanged note", v.Hash)
		}
	}
}

// wingDump is what a wing file holds, as testdata/v1/want.json records it.
type wingDump struct {
	Meta    *wingMeta   `json:"meta"`
	Vectors [][]float32 `json:"vectors"`
}

// MarshalJSON writes a stored note as the Note it is, for wingDump.
func (s *storedNote) MarshalJSON() ([]byte, error) { return json.Marshal(s.note()) }

// UnmarshalJSON reads a stored note written as a Note, for wingDump.
func (s *storedNote) UnmarshalJSON(data []byte) error {
	var n Note
	if err := json.Unmarshal(data, &n); err != nil {
		return err
	}
	*s = *storedNotes(&n)[0]
	return nil
}

// storedNotes returns notes as a wing stores them.
func storedNotes(notes ...*Note) []*storedNote {
	var st storer
	out := make([]*storedNote, len(notes))
	for i, n := range notes {
		out[i] = st.store(n)
	}
	return out
}

// testdata/v1 is a palace written by the version 1 wing format (a lexical
// wing and one of 8-dimension vectors, each with a file mined three times
// and a second file sharing a note of the first), and want.json what that
// code read back from it. Palaces written by earlier releases must open
// the same.
func TestVersion1WingFilesOpen(t *testing.T) {
	var want map[string]wingDump
	if err := json.Unmarshal([]byte(testutil.ReadFile(t, filepath.Join("testdata", "v1", "want.json"))), &want); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "palace")
	testutil.CopyDir(t, filepath.Join("testdata", "v1"), dir)
	check := func(when string) {
		t.Helper()
		for id, w := range want {
			m, vecs, err := readWing(filepath.Join(dir, wingsDir, id+wingExt), maxWingFile)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			// As JSON: times, nil and empty slices and float32 values
			// compare as the file holds them.
			if got, want := testutil.IndentJSON(t, wingDump{m, vecs}), testutil.IndentJSON(t, w); got != want {
				t.Errorf("%s: wing %s reads\n%s\nwant\n%s", when, id, got, want)
			}
		}
	}
	check("version 1")

	p := openT(t, dir, &embedtest.Hashing{Dim: 8}, false)
	if d := p.Damaged(); len(d) > 0 {
		t.Fatalf("damaged: %+v", d)
	}
	for id, w := range want {
		if got, want := testutil.IndentJSON(t, p.Sources(id)), testutil.IndentJSON(t, w.Meta.Sources); got != want {
			t.Errorf("sources of %s = %s, want %s", id, got, want)
		}
		if n := len(p.Notes(id)); n != len(w.Meta.Notes) {
			t.Errorf("wing %s has %d notes, want %d", id, n, len(w.Meta.Notes))
		}
		for i, vid := range w.Meta.VecIDs {
			if got := p.Vector(id, vid); !slices.Equal(got, w.Vectors[i]) {
				t.Errorf("vector of %s/%s = %v, want %v", id, vid, got, w.Vectors[i])
			}
		}
	}

	// Their next write is in version 5, which reads back the same.
	for id := range want {
		p.thaw(id)
		p.wings[id].dirty = true
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	for id := range want {
		data, err := os.ReadFile(filepath.Join(dir, wingsDir, id+wingExt))
		if err != nil || !bytes.Equal(data[:8], wingfile.Magic(5)) {
			t.Fatalf("wing %s written as %q, %v", id, data[:min(8, len(data))], err)
		}
	}
	check("version 5")
}

// A version 3 wing file (testdata/v3, written by the build before version
// 4 of a file mined six times: four appends, an edit, an append) reads
// its earlier versions, each a reference per note; written again as
// version 4 (testdata/v4, CRC-32C) and then 5 (testdata/v5, CRC-32), whose
// versions that start with the current notes say so with a count, they
// read back the same, and so does the wing as version 2 wrote it
// (testdata/v2). Each is written as version 5 at its next write.
func TestOlderWingFilesKeepTheirHistory(t *testing.T) {
	path := "/h/agents/w/memory.md"
	texts := func(v Version) []string {
		var out []string
		for _, n := range v.Notes {
			out = append(out, fmt.Sprintf("%d %s: %s", n.Line, n.Heading, n.Text))
		}
		return out
	}
	const a, b, c, d = "4 Memory > Build: alpha note one.", "5 Memory > Build: bravo note two.", "6 Memory > Build: charlie note three.", "7 Memory > Build: delta note four."
	want := [][]string{{"4 Memory > Build: alpha note one, edited.", b, c, d}, {a, b, c, d}, {a, b, c}, {a, b}}
	check := func(t *testing.T, when string, p *Palace) {
		t.Helper()
		if d := p.Damaged(); len(d) > 0 {
			t.Fatalf("%s: damaged: %+v", when, d)
		}
		src, ok := p.Source("w", path)
		if !ok || len(src.Earlier) != len(want) {
			t.Fatalf("%s: source %v, %d earlier versions, want %d", when, ok, len(src.Earlier), len(want))
		}
		for i, v := range src.Earlier {
			if got := texts(v); !slices.Equal(got, want[i]) {
				t.Errorf("%s: version %d = %q, want %q", when, i, got, want[i])
			}
		}
		if len(src.NoteIDs) != 5 || len(src.Dropped) != 0 {
			t.Errorf("%s: %d notes, %d dropped; want 5 and none", when, len(src.NoteIDs), len(src.Dropped))
		}
	}
	for _, version := range []string{"v2", "v3", "v4", "v5"} {
		t.Run(version, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "palace")
			testutil.CopyDir(t, filepath.Join("testdata", version), dir)
			r := openT(t, dir, nil, true)
			check(t, version+", read frozen", r)
			r.Close()
			p := openT(t, dir, nil, false)
			check(t, version, p)
			p.thaw("w")
			p.wings["w"].dirty = true
			if err := p.Flush(); err != nil {
				t.Fatal(err)
			}
			p.Close()
			data, err := os.ReadFile(filepath.Join(dir, wingsDir, "w"+wingExt))
			if err != nil || !bytes.Equal(data[:8], wingfile.Magic(5)) {
				t.Fatalf("written as %q, %v", data[:min(8, len(data))], err)
			}
			check(t, "version 5", openT(t, dir, nil, true))
		})
	}
}

// Earlier versions that start with the file's current notes, all of them
// or with other notes after (version 4's versionHead.Current), and ones
// that do not, read back as they were written.
func TestEarlierVersionsStartingWithCurrentNotes(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, nil, false)
	path := "/h/agents/w/memory.md"
	n := func(id string, line int) Note { return note(id, "Log", "note "+id, line) }
	contents := [][]Note{
		{n("a", 1), n("b", 2), n("c", 3)},
		{n("a", 1), n("b", 2), n("c", 3), n("d", 4)},
		{n("a", 1), n("b", 2)},
		{n("a", 1), n("b", 2), n("e", 3)},
		{n("x", 1), n("a", 2), n("b", 3), n("e", 4)},
		{n("a", 1), n("b", 2), n("e", 3), n("f", 4)},
	}
	for i, notes := range contents {
		if _, err := p.ApplySource(ctx, "w", Source{Path: path, Agent: "w", Hash: fmt.Sprint("h", i)}, notes); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := p.Source("w", path)
	if len(before.Earlier) != MaxEarlierVersions {
		t.Fatalf("%d earlier versions, want %d", len(before.Earlier), MaxEarlierVersions)
	}
	flushedSize(t, p, "w")
	q := openT(t, dir, nil, true)
	after, _ := q.Source("w", path)
	if got, want := testutil.IndentJSON(t, after), testutil.IndentJSON(t, before); got != want {
		t.Fatalf("after reopening, the source reads\n%s\nwant\n%s", got, want)
	}
}
