package palace

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/memminer/memminer/internal/mmapfile"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace/internal/wingfile"
)

// Wing file version 3 puts first what search reads, in the form it reads
// it (frozen.go), and after it the rest of the wing, the sources and
// their earlier versions, as version 2's gob stream less the notes
// (wingHead, then the sources as in version 2). The header and the index
// section's table of contents are package wingfile's (wingfile.Header,
// wingfile.Split).
//
// A search reads the header and the index section (one read), checks the
// CRC (hardware-fast, unlike SHA-256) and uses the section in place. The
// meta part is read only when the wing is thawed (Palace.thaw), and its
// notes are those of the index section, by document number. Versions 1
// and 2 (file.go) are still read, and a writer rewrites such a wing in
// the current version at its next Flush.
//
// Version 4 is version 3 whose earlier versions may start with the
// file's current notes (versionHead.Current) instead of a reference to
// each; a build that reads only 3 finds it damaged, rather than misreading
// the versions. Version 5 is version 4 whose CRCs are CRC-32 (IEEE), not
// CRC-32C: both are hardware-fast on amd64 and arm64, but the tables of
// Go's CRC-32C took 0.13 ms to make on amd64, in every command that read
// a wing. All three are read; 5 is written.

// wingSnapshot is what Flush takes of a wing under the lock, to write it
// outside: the wing's own notes, postings and vectors, never changed in
// place, and copies of the slices that are.
type wingSnapshot struct {
	id, model string
	dim       int
	roots     []string
	lastMined time.Time
	sources   []Source // sorted by path
	governed  int
	// lex has the docs and notes of the index, and its lengths; the
	// terms are its live ones, with their postings.
	lex   lexIndex
	terms []termRef
	view  *wingView
	vecs  map[string][]float32
}

// termRef is a term of a snapshot and its postings (lexIndex.postings).
type termRef struct {
	text string
	data []byte
}

func (t termRef) postings() iter.Seq[posting] { return decodePostings(t.data, math.MaxInt32) }

// sourceOf returns the snapshot's source at path, nil if none.
func (s *wingSnapshot) sourceOf(path string) *Source {
	i, ok := slices.BinarySearchFunc(s.sources, path, func(src Source, p string) int {
		switch {
		case src.Path < p:
			return -1
		case src.Path > p:
			return 1
		}
		return 0
	})
	if !ok {
		return nil
	}
	return &s.sources[i]
}

// freezeSnapshot takes the wing's snapshot. The caller holds the
// palace's lock.
func (w *wing) freezeSnapshot(ctx context.Context) (*wingSnapshot, error) {
	vecs, err := w.vectors(ctx)
	if err != nil {
		return nil, err
	}
	// The map is the wing's, and the file is written outside the lock;
	// the vectors themselves are never changed in place.
	s := &wingSnapshot{id: w.id, model: w.model, dim: w.dim, roots: slices.Clone(w.roots), lastMined: w.lastMined, vecs: maps.Clone(vecs),
		governed: govern.Version}
	for _, src := range w.sources {
		s.sources = append(s.sources, *src)
		if src.Governed != govern.Version {
			s.governed = 0
		}
	}
	sort.Slice(s.sources, func(i, j int) bool { return s.sources[i].Path < s.sources[j].Path })
	x := w.lex
	s.lex = lexIndex{docs: slices.Clone(x.docs), notes: slices.Clone(x.notes), live: x.live, totalLen: x.totalLen, size: x.size}
	// In term id order, which for a thawed wing is the order of their
	// text (sortTerms).
	byID := make([]string, len(x.lists))
	for term, t := range x.termIDs {
		byID[t] = term
	}
	s.terms = make([]termRef, 0, len(x.termIDs))
	for t, term := range byID {
		if x.df[t] > 0 {
			s.terms = append(s.terms, termRef{text: term, data: x.lists[t].data})
		}
	}
	if s.view = w.view.Load(); s.view == nil {
		s.view = makeView(w, nil, true)
	}
	return s, nil
}

// writeWingV3 writes the snapshot as a version 3 wing file to f, which
// must be empty.
func writeWingV3(f wingfile.File, s *wingSnapshot) error {
	if _, err := f.Write(make([]byte, wingfile.HeaderLen)); err != nil {
		return err
	}
	notes, idxLen, idxCRC, err := writeIndex(f, wingfile.HeaderLen, s)
	if err != nil {
		return err
	}
	m := &wingMeta{ID: s.id, Model: s.model, Dim: s.dim, Roots: s.roots, Sources: s.sources, Notes: notes, LastMined: s.lastMined}
	h := sha256.New()
	body := &countingWriter{w: bufio.NewWriterSize(io.MultiWriter(f, h), 1<<16)}
	if err := encodeMeta(gob.NewEncoder(body), m, false); err != nil {
		return fmt.Errorf("encode wing %s: %w", s.id, err)
	}
	if err := body.w.Flush(); err != nil {
		return err
	}
	header := wingfile.Header{IdxLen: uint64(idxLen), MetaLen: uint64(body.n), IdxCRC: idxCRC}
	h.Sum(header.MetaSum[:0])
	_, err = f.WriteAt(header.Bytes(), 0)
	return err
}

// wingFileV3 is an open version 3 wing file whose index section was read
// and checked.
type wingFileV3 struct {
	f       *os.File
	fz      *frozenWing
	metaOff int64
	metaLen int64
	metaSum []byte
	// sealed is set when the file matched the seal it was opened with
	// (wingfile.Seal): nothing of it was checked, and verify checks nothing.
	sealed bool
	// seal is the file's, nil when its system gives none.
	seal *wingfile.Seal
}

// openWing opens the wing file at path, of at most limit bytes. For a
// version 3 file it maps, and unless the file matches sealed, checks the
// index section and returns it (the caller closes its file); for an older
// one it returns nil, and readWing reads it.
func openWing(path string, limit int64, sealed *wingfile.Seal) (*wingFileV3, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	v, err := openWingFile(f, path, limit, sealed)
	if v == nil {
		f.Close()
	}
	return v, err
}

func openWingFile(f *os.File, path string, limit int64, sealed *wingfile.Seal) (*wingFileV3, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	trusted := sealed.Matches(info)
	if info.Size() > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	var b [wingfile.HeaderLen]byte
	n, err := io.ReadFull(f, b[:])
	header, ok, err := wingfile.ParseHeader(b[:], n, err, info.Size())
	if !ok {
		return nil, nil // not version 3 to 5: readWing tells what it is
	}
	if err != nil {
		return nil, err
	}
	// Mapped, not read: a search touches only the pages it needs, and
	// the arrays are used in place (the index starts 8-aligned).
	data, release, err := mmapfile.Map(f, int(wingfile.HeaderLen+header.IdxLen))
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", path, err)
	}
	idx := data[wingfile.HeaderLen:]
	table := wingfile.CRCTable(header.Version)
	if len(idx) < wingfile.TOCLen || !trusted && !wingfile.TOCChecks(idx, header.IdxCRC, table) {
		release()
		return nil, fmt.Errorf("%w: index checksum mismatch", ErrCorrupt)
	}
	fz, err := parseFrozen(idx, trusted, table)
	if err != nil {
		release()
		return nil, corrupt(err)
	}
	// Everything made of the section for use beyond the frozen wing is a
	// copy (notes, thawed indexes, vectors), and whatever reads it in
	// place holds the frozen wing, so the mapping goes with it.
	runtime.AddCleanup(fz, func(release func()) { release() }, release)
	v := &wingFileV3{f: f, fz: fz, metaOff: int64(wingfile.HeaderLen + header.IdxLen), metaLen: int64(header.MetaLen), metaSum: header.MetaSum[:], sealed: trusted}
	if s, ok := wingfile.SealOf(info); ok {
		v.seal = &s
	}
	return v, nil
}

// readMeta reads and checks the meta part, whose notes are the frozen
// wing's: it returns the wing's meta with them as stored notes.
func (v *wingFileV3) readMeta() (*wingMeta, error) {
	if err := v.verify(); err != nil {
		return nil, err
	}
	fz := v.fz
	if err := fz.checkHits(); err != nil {
		return nil, err
	}
	// One copy of the strings, which the notes share: the section may be
	// a mapping of the file, which goes when the frozen wing does.
	strs := slices.Clone(fz.strs)
	notes := make([]*storedNote, len(fz.rank))
	govs := make([]*govern.Note, len(fz.govs))
	for i, g := range fz.govs {
		govs[i] = internGovernance(g)
	}
	for d := range notes {
		notes[d] = fz.noteIn(int32(d), strs, false)
		notes[d].gov = govs[fz.govIdx[d]]
	}
	r := bufio.NewReaderSize(io.NewSectionReader(v.f, v.metaOff, v.metaLen), 1<<16)
	m, err := decodeMetaWith(r, int(min(v.metaLen, 1<<31-1)), notes)
	if err != nil {
		return nil, corrupt(err)
	}
	if m.ID != fz.id || m.Model != fz.model || m.Dim != fz.dim {
		return nil, fmt.Errorf("%w: index and meta parts disagree", ErrCorrupt)
	}
	return m, nil
}

// verify checks every checksum of the file, the index section's arrays
// and the meta part, unless the file is sealed. A writer does at open what
// a reader does as it reads, so that the damage is rebuilt from markdown
// before it mines.
func (v *wingFileV3) verify() error {
	if v.sealed {
		return nil
	}
	h := sha256.New()
	if n, err := io.Copy(h, io.NewSectionReader(v.f, v.metaOff, v.metaLen)); err != nil || n != v.metaLen {
		return fmt.Errorf("%w: read %d of %d bytes: %v", ErrCorrupt, n, v.metaLen, err)
	}
	if !bytes.Equal(h.Sum(nil), v.metaSum) {
		return fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	if err := v.fz.arrays.Check(append([]int{wingfile.SecVecs}, hitArrays...)); err != nil {
		return err
	}
	return v.fz.checkStrings(0, uint32(len(v.fz.strs)))
}

// wingMeta reads the wing as readWing returns one of version 2: its notes
// sorted (compareStored), the vectors of those that have one in the same
// order.
func (v *wingFileV3) wingMeta() (*wingMeta, [][]float32, error) {
	m, err := v.readMeta()
	if err != nil {
		return nil, nil, err
	}
	vecs := map[*storedNote][]float32{}
	all := v.fz.vectors()
	for d, n := range m.Notes {
		if all[d] != nil {
			vecs[n] = all[d]
		}
	}
	slices.SortFunc(m.Notes, compareStored)
	out := [][]float32{}
	for _, n := range m.Notes {
		if vec, ok := vecs[n]; ok {
			m.VecIDs = append(m.VecIDs, n.id)
			out = append(out, vec)
		}
	}
	return m, out, nil
}

// thawIndex returns the frozen index as a lexIndex that can be changed:
// its postings are one block copied from the section (which may be a
// mapping of the file), and stay there until a list grows.
func (fz *frozenWing) thawIndex(notes []*storedNote) *lexIndex {
	src := fz.index
	f := frozenLex{terms: slices.Clone(fz.lex.terms), termEnd: fz.lex.termEnd, listEnd: fz.lex.listEnd, post: slices.Clone(fz.lex.post)}
	x := &lexIndex{termIDs: make(map[string]int32, len(f.termEnd)), lists: make([]postingList, len(f.termEnd)),
		df: slices.Clone(src.df), docs: slices.Clone(src.docs), notes: notes, byID: make(map[string]int32, len(notes)),
		live: src.live, totalLen: src.totalLen, size: len(f.post), held: len(f.post)}
	for t := range f.termEnd {
		x.termIDs[f.term(t)] = int32(t)
		x.lists[t] = postingList{data: f.list(int32(t)), last: fz.lex.listLast[t], packed: true}
	}
	for d, n := range notes {
		x.byID[n.id] = int32(d)
	}
	return x
}

// corrupt marks err as ErrCorrupt, once.
func corrupt(err error) error {
	if errors.Is(err, ErrCorrupt) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrCorrupt, err)
}
