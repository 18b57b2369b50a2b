package palace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"
	"time"
	"unique"
	"unsafe"

	"github.com/memminer/memminer/govern"
)

// A frozen wing is a wing as search reads it, straight from the index
// section of its file (wing file versions 3 and 4, wingfile.go): the BM25 term
// dictionary (sorted, so a term is found by binary search), the postings
// as the index holds them in memory, the notes' lengths, the search view
// (neighbours, file order, governance marks), the notes' strings and the
// vectors. Opening one reads the section in one read, checks its CRC and
// slices it: nothing is decoded per note and no index is built. A note is
// made of it only for a hit.
//
// A frozen wing is never changed. Anything but a search (listing notes or
// sources, mining, writing) first thaws it (Palace.thaw): its notes
// become stored notes, its sources are decoded from the meta section and
// its postings become a lexIndex that can be changed, still without
// splitting any text.
type frozenWing struct {
	id, model string
	dim       int
	roots     []string
	lastMined time.Time
	sources   []SourceHead // sorted by path
	// governed is the govern.Version every source was classified with, 0
	// when not all were the same: such a wing is thawed at open, which
	// classifies its notes again.
	governed int
	lex      frozenLex
	// The view, by document number (see wingView).
	prev, next, rank, marked []int32
	// The notes, by document number: line, and indexes into the tables.
	line                  []int32
	headIdx, placeIdx     []uint32
	govIdx, idEnd, strEnd []uint32
	strs                  []byte // each note's id then its text
	// tablesRaw codes headings, places and govs, which loadTables reads.
	tablesRaw  []byte
	tablesOnce sync.Once
	tablesErr  error
	headings   []unique.Handle[string]
	places     []unique.Handle[notePlace]
	govs       []*govern.Note
	// mtimes are the sources' modification times by path.
	mtimes map[string]time.Time
	// vecs holds dim floats per document; hasVec tells which have one.
	vecs   []float32
	hasVec []uint8
	nVecs  int
	strCRC []uint32
	// arrays are the section's arrays; the ones a hit reads are checked
	// at the first (checkHits).
	arrays   *sectionArrays
	hitsOnce sync.Once
	hitsErr  error
	vecsOnce sync.Once
	vecsErr  error
	// status is each note's status as statusCode codes it: what a search
	// with the default filters needs of governance, without the tables.
	status []byte
	// index is the BM25 index over the section, view the search view.
	index *lexIndex
	view  *wingView
}

// frozenLex is the BM25 part of a frozen wing: term t is the t-th of the
// sorted terms, its postings post[listEnd[t-1]:listEnd[t]].
type frozenLex struct {
	terms    []byte
	termEnd  []uint32
	listEnd  []uint32
	listLast []int32
	post     []byte
}

// term returns the text of term t.
func (f *frozenLex) term(t int) string {
	start := uint32(0)
	if t > 0 {
		start = f.termEnd[t-1]
	}
	return unsafe.String(unsafe.SliceData(f.terms[start:]), int(f.termEnd[t]-start))
}

// find returns the id of term, by binary search of the sorted terms.
func (f *frozenLex) find(term string) (int32, bool) {
	lo, hi := 0, len(f.termEnd)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if f.term(m) < term {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return int32(lo), lo < len(f.termEnd) && f.term(lo) == term
}

// list returns term t's postings.
func (f *frozenLex) list(t int32) []byte {
	start := uint32(0)
	if t > 0 {
		start = f.listEnd[t-1]
	}
	return f.post[start:f.listEnd[t]:f.listEnd[t]]
}

// The arrays of an index section, in the order of its table of contents.
const (
	secHead = iota
	secDocs
	secDF
	secListEnd
	secListLast
	secPost
	secTermEnd
	secTerms
	secPrev
	secNext
	secRank
	secMarked
	secLine
	secHeadIdx
	secPlaceIdx
	secGovIdx
	secIDEnd
	secStrEnd
	secStrs
	secStrCRC
	secVecs
	secHasVec
	secStatus
	numSecs
)

// tocLen is the bytes of the table of contents: per array its offset
// (uint64), length and CRC (uint32 each; CRC-32C up to version 4, CRC-32 from 5).
const tocLen = numSecs * 16

// strBlock is the size of the blocks of the notes' strings that have a
// CRC of their own (secStrCRC): a hit checks the block its note is in.
const strBlock = 1 << 16

// Which arrays are checked when: those of eager at open, since every
// search reads them; the vectors when a search first compares them; the
// notes' fields but governance (hitArrays) at the first hit; the strings
// a block at a time as hits read them.
var (
	hitArrays = []int{secLine, secHeadIdx, secPlaceIdx, secIDEnd, secStrEnd}
	eager     = []int{secHead, secDocs, secDF, secListEnd, secListLast, secPost, secTermEnd, secTerms,
		secPrev, secNext, secRank, secMarked, secGovIdx, secStrCRC, secHasVec, secStatus}
)

// littleEndian tells that arrays can be used in place: the file's
// integers are little-endian.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// sectionArrays are the arrays of an index section, sliced from it, and
// their CRCs.
type sectionArrays struct {
	data [numSecs][]byte
	crc  [numSecs]uint32
	// table is the CRC's, by the file's version (crcTable).
	table *crc32.Table
}

// splitSection slices buf, whose start is 8-aligned in memory, into its
// arrays.
func splitSection(buf []byte, table *crc32.Table) (*sectionArrays, error) {
	a := &sectionArrays{table: table}
	if len(buf) < tocLen {
		return nil, errors.New("index section too short")
	}
	for i := range numSecs {
		off := binary.LittleEndian.Uint64(buf[i*16:])
		n := uint64(binary.LittleEndian.Uint32(buf[i*16+8:]))
		a.crc[i] = binary.LittleEndian.Uint32(buf[i*16+12:])
		if off%8 != 0 || off < tocLen || off > uint64(len(buf)) || n > uint64(len(buf))-off {
			return nil, fmt.Errorf("index array %d out of bounds", i)
		}
		a.data[i] = buf[off : off+n : off+n]
	}
	return a, nil
}

// check verifies the CRCs of the arrays secs.
func (a *sectionArrays) check(secs []int) error {
	for _, sec := range secs {
		if crc32.Checksum(a.data[sec], a.table) != a.crc[sec] {
			return fmt.Errorf("%w: index array %d: checksum mismatch", ErrCorrupt, sec)
		}
	}
	return nil
}

// int32s returns b as int32s: in place when the machine is little-endian,
// else a decoded copy.
func int32s(b []byte) ([]int32, bool) {
	if len(b)%4 != 0 {
		return nil, false
	}
	if len(b) == 0 {
		return nil, true
	}
	if littleEndian {
		return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4), true
	}
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, true
}

func uint32s(b []byte) ([]uint32, bool) {
	v, ok := int32s(b)
	if !ok || len(v) == 0 {
		return nil, ok
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(v))), len(v)), true
}

func float32s(b []byte) ([]float32, bool) {
	v, ok := int32s(b)
	if !ok || len(v) == 0 {
		return nil, ok
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(v))), len(v)), true
}

// lexDocs returns b as lexDocs (length, check), in place on little-endian.
func lexDocs(b []byte) ([]lexDoc, bool) {
	v, ok := int32s(b)
	if !ok || len(v)%2 != 0 {
		return nil, false
	}
	if len(v) == 0 {
		return nil, true
	}
	return unsafe.Slice((*lexDoc)(unsafe.Pointer(unsafe.SliceData(v))), len(v)/2), true
}

// headWriter and headReader code the small head array of an index
// section: the wing's fields and the tables notes refer to.
type headWriter struct{ b []byte }

func (w *headWriter) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *headWriter) int(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *headWriter) str(s string)  { w.uint(uint64(len(s))); w.b = append(w.b, s...) }
func (w *headWriter) time(t time.Time) {
	b, err := t.MarshalBinary()
	if err != nil { // a zone offset that is not whole minutes: keep the instant
		b, _ = t.UTC().MarshalBinary()
	}
	w.uint(uint64(len(b)))
	w.b = append(w.b, b...)
}

type headReader struct {
	b   []byte
	err error
}

func (r *headReader) fail() {
	if r.err == nil {
		r.err = errors.New("index head truncated")
	}
	r.b = nil
}

func (r *headReader) uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *headReader) int() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *headReader) bytes() []byte {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *headReader) str() string { return string(r.bytes()) }

// count reads a count of items of at least one byte each.
func (r *headReader) count() int {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *headReader) time() time.Time {
	var t time.Time
	if b := r.bytes(); r.err == nil && t.UnmarshalBinary(b) != nil {
		r.err = errors.New("index head: bad time")
	}
	return t
}

func readSourceHead(r *headReader) SourceHead {
	s := Source{Path: r.str(), Agent: r.str(), Mtime: r.time(), Size: r.int(), Hash: r.str(), Mined: r.time(),
		Governed: int(r.int()), GovernedFile: r.str(), NoteFormat: int(r.int())}
	if n := r.count(); n > 0 {
		s.Frontmatter = make(map[string]string, n)
		for range n {
			k := r.str()
			s.Frontmatter[k] = r.str()
		}
	}
	return SourceHead{Source: s, Notes: int(r.uint())}
}

func writeGovernance(w *headWriter, g *govern.Note) {
	w.str(string(g.Status))
	w.str(g.Reason)
	w.time(g.Date)
	w.time(g.Review)
	w.int(int64(g.StaleAfter))
	w.uint(uint64(len(g.Tags)))
	for _, t := range g.Tags {
		w.str(t)
	}
}

func readGovernance(r *headReader) *govern.Note {
	g := govern.Note{Status: govern.Status(r.str()), Reason: r.str(), Date: r.time(), Review: r.time(), StaleAfter: time.Duration(r.int())}
	if n := r.count(); n > 0 {
		g.Tags = make([]string, n)
		for i := range g.Tags {
			g.Tags[i] = r.str()
		}
	}
	// Shared within the wing; a thaw shares them palace-wide.
	return &g
}

// checkOffsets reports whether ends are non-decreasing and end within n.
func checkOffsets(ends []uint32, n int) bool {
	prev := uint32(0)
	for _, e := range ends {
		if e < prev {
			return false
		}
		prev = e
	}
	return int(prev) <= n
}

// checkDocs reports whether every value of v is a document number below
// n, or -1 where none is allowed.
func checkDocs(v []int32, n int, none bool) bool {
	for _, d := range v {
		if d >= int32(n) || d < 0 && !(none && d == -1) {
			return false
		}
	}
	return true
}

func checkIndexes(v []uint32, n int) bool {
	for _, i := range v {
		if i >= uint32(n) {
			return false
		}
	}
	return true
}

// parseFrozen makes a frozen wing of an index section whose CRC was
// checked. Every array is checked for its size and, unless the section is
// of a sealed file (seal.go), for its CRC and every offset and index for
// its bounds, so a search of it cannot read out of range.
func parseFrozen(buf []byte, sealed bool, table *crc32.Table) (*frozenWing, error) {
	arr, err := splitSection(buf, table)
	if err != nil {
		return nil, err
	}
	if !sealed {
		if err := arr.check(eager); err != nil {
			return nil, err
		}
	}
	f, live, totalLen, err := readFrozenHead(arr.data[secHead])
	if err != nil {
		return nil, err
	}
	docs, df, err := f.takeArrays(arr)
	if err != nil {
		return nil, err
	}
	n, terms := len(docs), len(df)
	if !f.sizesMatch(n, terms) {
		return nil, fmt.Errorf("index arrays do not match its %d notes and %d terms", n, terms)
	}
	if !sealed {
		if err := checkRanges(f, docs, n, terms); err != nil {
			return nil, err
		}
	}
	if f.dim > 0 {
		// A lexical wing has no vectors: its flags stay unread, a page
		// fault less for every wing a search opens.
		for d := range n {
			if f.hasVec[d] != 0 {
				f.nVecs++
			}
		}
	}
	f.lexIndex(docs, df, live, totalLen)
	f.view = f.makeView()
	return f, nil
}

// readFrozenHead reads the index section's head: the wing's fields and
// sources, and the count and total length of its live notes.
func readFrozenHead(head []byte) (f *frozenWing, live, totalLen int, err error) {
	r := &headReader{b: head}
	f = &frozenWing{id: r.str(), model: r.str(), dim: int(r.uint()), lastMined: r.time(),
		sources: make([]SourceHead, r.count())}
	for i := range f.sources {
		f.sources[i] = readSourceHead(r)
	}
	f.governed = int(r.uint())
	if n := r.count(); n > 0 {
		f.roots = make([]string, n)
		for i := range f.roots {
			f.roots[i] = r.str()
		}
	}
	live, totalLen = int(r.uint()), int(r.uint())
	if r.err != nil {
		return nil, 0, 0, r.err
	}
	// The tables the notes refer to are read when a search or a thaw first
	// needs them (loadTables): a mine of other wings never does.
	f.tablesRaw = r.b
	f.mtimes = make(map[string]time.Time, len(f.sources))
	for _, s := range f.sources {
		f.mtimes[s.Path] = s.Mtime
	}
	return f, live, totalLen, nil
}

// takeArrays points f's arrays at the section's, each checked for a size
// its element divides, and returns the documents and their frequencies.
func (f *frozenWing) takeArrays(arr *sectionArrays) ([]lexDoc, []int32, error) {
	a := &arr.data
	ok := true
	take := func(v []int32, good bool) []int32 { ok = ok && good; return v }
	takeU := func(v []uint32, good bool) []uint32 { ok = ok && good; return v }
	docs, good := lexDocs(a[secDocs])
	ok = ok && good
	df := take(int32s(a[secDF]))
	f.lex = frozenLex{terms: a[secTerms], post: a[secPost]}
	f.lex.termEnd = takeU(uint32s(a[secTermEnd]))
	f.lex.listEnd = takeU(uint32s(a[secListEnd]))
	f.lex.listLast = take(int32s(a[secListLast]))
	f.prev, f.next, f.rank = take(int32s(a[secPrev])), take(int32s(a[secNext])), take(int32s(a[secRank]))
	f.marked, f.line = take(int32s(a[secMarked])), take(int32s(a[secLine]))
	f.headIdx, f.placeIdx, f.govIdx = takeU(uint32s(a[secHeadIdx])), takeU(uint32s(a[secPlaceIdx])), takeU(uint32s(a[secGovIdx]))
	f.idEnd, f.strEnd = takeU(uint32s(a[secIDEnd])), takeU(uint32s(a[secStrEnd]))
	f.strs, f.arrays, f.status = a[secStrs], arr, a[secStatus]
	f.strCRC = takeU(uint32s(a[secStrCRC]))
	vecs, good := float32s(a[secVecs])
	f.vecs, f.hasVec = vecs, a[secHasVec]
	if !ok || !good {
		return nil, nil, errors.New("index array of a bad size")
	}
	return docs, df, nil
}

// sizesMatch reports whether f's arrays have the lengths n notes and
// terms terms give them.
func (f *frozenWing) sizesMatch(n, terms int) bool {
	ok := true
	for _, l := range [][]int32{f.prev, f.next, f.rank, f.line} {
		ok = ok && len(l) == n
	}
	for _, l := range [][]uint32{f.headIdx, f.placeIdx, f.govIdx, f.idEnd, f.strEnd} {
		ok = ok && len(l) == n
	}
	ok = ok && len(f.lex.termEnd) == terms && len(f.lex.listEnd) == terms && len(f.lex.listLast) == terms
	if len(f.hasVec) != n || len(f.status) != n || len(f.strCRC) != (len(f.strs)+strBlock-1)/strBlock {
		return false
	}
	return ok && f.vectorsMatch(n)
}

// vectorsMatch reports whether f holds a vector of its dimension for each
// of its n notes, or, lexical, none.
func (f *frozenWing) vectorsMatch(n int) bool {
	switch {
	case f.dim == 0:
		return len(f.vecs) == 0
	case f.dim > 0:
		return len(f.vecs) == n*f.dim
	}
	return false
}

// checkRanges checks that every offset and document number of f, of n
// notes and terms terms, is in range, its terms sorted and its notes live.
func checkRanges(f *frozenWing, docs []lexDoc, n, terms int) error {
	if !checkOffsets(f.lex.termEnd, len(f.lex.terms)) || !checkOffsets(f.lex.listEnd, len(f.lex.post)) ||
		!checkDocs(f.prev, n, true) || !checkDocs(f.next, n, true) ||
		!checkDocs(f.rank, n, true) || !checkDocs(f.marked, n, false) || !checkDocs(f.lex.listLast, n, true) {
		return errors.New("index offset or number out of range")
	}
	for t := 1; t < terms; t++ {
		if f.lex.term(t-1) >= f.lex.term(t) {
			return errors.New("index terms not sorted")
		}
	}
	for _, d := range docs {
		if d.length < 0 {
			return errors.New("index holds a removed note")
		}
	}
	return nil
}

// checkHits checks, once, the arrays a hit reads (hitArrays): their CRCs,
// and that their offsets and indexes are in range.
func (f *frozenWing) checkHits() error {
	if err := f.loadTables(); err != nil {
		return err
	}
	f.hitsOnce.Do(func() {
		if f.hitsErr = f.arrays.check(hitArrays); f.hitsErr != nil {
			return
		}
		ok := checkOffsets(f.strEnd, len(f.strs)) && checkIndexes(f.headIdx, len(f.headings)) && checkIndexes(f.placeIdx, len(f.places))
		for d := 0; ok && d < len(f.idEnd); d++ {
			start := uint32(0)
			if d > 0 {
				start = f.strEnd[d-1]
			}
			ok = f.idEnd[d] >= start && f.idEnd[d] <= f.strEnd[d]
		}
		if !ok {
			f.hitsErr = fmt.Errorf("%w: index note fields out of range", ErrCorrupt)
		}
	})
	return f.hitsErr
}

// statusCode codes the statuses search treats apart (Filters.priors).
func statusCode(st govern.Status) byte {
	switch st {
	case govern.Approved:
		return 1
	case govern.Superseded:
		return 2
	case govern.Unapproved:
		return 3
	}
	return 0
}

// statusOf is the status statusCode coded as c; other statuses are "".
func statusOf(c byte) govern.Status {
	switch c {
	case 1:
		return govern.Approved
	case 2:
		return govern.Superseded
	case 3:
		return govern.Unapproved
	}
	return ""
}

// checkVectors checks, once, the CRC of the vectors.
func (f *frozenWing) checkVectors() error {
	f.vecsOnce.Do(func() { f.vecsErr = f.arrays.check([]int{secVecs}) })
	return f.vecsErr
}

// loadTables reads, once, the tables of heading paths, places and
// governances the notes refer to, and checks the governance of every note
// refers to one (the head's CRC was checked at open).
func (f *frozenWing) loadTables() error {
	f.tablesOnce.Do(func() {
		r := &headReader{b: f.tablesRaw}
		f.headings = make([]unique.Handle[string], r.count())
		for i := range f.headings {
			f.headings[i] = unique.Make(r.str())
		}
		f.places = make([]unique.Handle[notePlace], r.count())
		for i := range f.places {
			f.places[i] = unique.Make(notePlace{wing: r.str(), agent: r.str(), source: r.str()})
			r.time() // the source's mtime, which sources have too
		}
		f.govs = make([]*govern.Note, r.count())
		for i := range f.govs {
			f.govs[i] = readGovernance(r)
		}
		switch {
		case r.err != nil:
			f.tablesErr = fmt.Errorf("%w: %v", ErrCorrupt, r.err)
		case !checkIndexes(f.govIdx, len(f.govs)):
			f.tablesErr = fmt.Errorf("%w: index governance out of range", ErrCorrupt)
		}
	})
	return f.tablesErr
}

// checkStrings checks the CRCs of the blocks of the notes' strings that
// [start, end) spans.
func (f *frozenWing) checkStrings(start, end uint32) error {
	for b := int(start / strBlock); b*strBlock < int(end); b++ {
		block := f.strs[b*strBlock : min((b+1)*strBlock, len(f.strs))]
		if crc32.Checksum(block, f.arrays.table) != f.strCRC[b] {
			return fmt.Errorf("%w: notes' text: checksum mismatch", ErrCorrupt)
		}
	}
	return nil
}

// lexIndex is set by parseFrozen: the frozen index as a lexIndex whose
// query-side methods read it in place.
func (f *frozenWing) lexIndex(docs []lexDoc, df []int32, live, totalLen int) {
	f.index = &lexIndex{frozen: &f.lex, docs: docs, df: df, live: live, totalLen: totalLen}
}

// makeView makes the search view of the frozen wing, in place.
func (f *frozenWing) makeView() *wingView {
	v := &wingView{prev: f.prev, next: f.next, rank: f.rank, marked: f.marked, fz: f}
	if f.dim > 0 {
		v.vecs = make([][]float32, len(f.rank))
		for d := range v.vecs {
			if f.hasVec[d] != 0 {
				v.vecs[d] = f.vecs[d*f.dim : (d+1)*f.dim : (d+1)*f.dim]
			}
		}
	}
	return v
}

// vectors returns the vectors by document, nil where a note has none,
// copied out of the section into one array.
func (f *frozenWing) vectors() [][]float32 {
	all := slices.Clone(f.vecs)
	out := make([][]float32, len(f.rank))
	for d := range out {
		if f.hasVec[d] != 0 {
			out[d] = all[d*f.dim : (d+1)*f.dim : (d+1)*f.dim]
		}
	}
	return out
}

// note makes the stored note of document d, its strings copied out of
// the section (which may be a mapping of the file), after checking what
// it reads.
func (f *frozenWing) note(d int32) (*storedNote, error) {
	if err := f.checkHits(); err != nil {
		return nil, err
	}
	start := uint32(0)
	if d > 0 {
		start = f.strEnd[d-1]
	}
	if err := f.checkStrings(start, f.strEnd[d]); err != nil {
		return nil, err
	}
	return f.noteIn(d, f.strs, true), nil
}

// noteIn makes the stored note of document d of the strings strs, the
// section's or a copy of them: its strings are copies of them if copyOut,
// else share them. The caller has checked them.
func (f *frozenWing) noteIn(d int32, strs []byte, copyOut bool) *storedNote {
	start := uint32(0)
	if d > 0 {
		start = f.strEnd[d-1]
	}
	id, text := strs[start:f.idEnd[d]], strs[f.idEnd[d]:f.strEnd[d]]
	n := &storedNote{heading: f.headings[f.headIdx[d]], place: f.places[f.placeIdx[d]], gov: f.govs[f.govIdx[d]], line: f.line[d]}
	if copyOut {
		n.id, n.text = string(id), string(text)
	} else {
		n.id = unsafe.String(unsafe.SliceData(id), len(id))
		n.text = unsafe.String(unsafe.SliceData(text), len(text))
	}
	return n
}
