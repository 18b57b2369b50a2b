package palace

import (
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"
	"time"
	"unique"
	"unsafe"

	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace/internal/wingfile"
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
	arrays   *wingfile.Sections
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

// Which arrays are checked when: those of eager at open, since every
// search reads them; the vectors when a search first compares them; the
// notes' fields but governance (hitArrays) at the first hit; the strings
// a block at a time as hits read them.
var (
	hitArrays = []int{wingfile.SecLine, wingfile.SecHeadIdx, wingfile.SecPlaceIdx, wingfile.SecIDEnd, wingfile.SecStrEnd}
	eager     = []int{wingfile.SecHead, wingfile.SecDocs, wingfile.SecDF, wingfile.SecListEnd, wingfile.SecListLast, wingfile.SecPost, wingfile.SecTermEnd, wingfile.SecTerms,
		wingfile.SecPrev, wingfile.SecNext, wingfile.SecRank, wingfile.SecMarked, wingfile.SecGovIdx, wingfile.SecStrCRC, wingfile.SecHasVec, wingfile.SecStatus}
)

// lexDocs returns b as lexDocs (length, check), in place on little-endian.
func lexDocs(b []byte) ([]lexDoc, bool) {
	v, ok := wingfile.Int32s(b)
	if !ok || len(v)%2 != 0 {
		return nil, false
	}
	if len(v) == 0 {
		return nil, true
	}
	return unsafe.Slice((*lexDoc)(unsafe.Pointer(unsafe.SliceData(v))), len(v)/2), true
}

func readSourceHead(r *wingfile.HeadReader) SourceHead {
	s := Source{Path: r.Str(), Agent: r.Str(), Mtime: r.Time(), Size: r.Int(), Hash: r.Str(), Mined: r.Time(),
		Governed: int(r.Int()), GovernedFile: r.Str(), NoteFormat: int(r.Int())}
	if n := r.Count(); n > 0 {
		s.Frontmatter = make(map[string]string, n)
		for range n {
			k := r.Str()
			s.Frontmatter[k] = r.Str()
		}
	}
	return SourceHead{Source: s, Notes: int(r.Uint())}
}

func writeGovernance(w *wingfile.HeadWriter, g *govern.Note) {
	w.Str(string(g.Status))
	w.Str(g.Reason)
	w.Time(g.Date)
	w.Time(g.Review)
	w.Int(int64(g.StaleAfter))
	w.Uint(uint64(len(g.Tags)))
	for _, t := range g.Tags {
		w.Str(t)
	}
}

func readGovernance(r *wingfile.HeadReader) *govern.Note {
	g := govern.Note{Status: govern.Status(r.Str()), Reason: r.Str(), Date: r.Time(), Review: r.Time(), StaleAfter: time.Duration(r.Int())}
	if n := r.Count(); n > 0 {
		g.Tags = make([]string, n)
		for i := range g.Tags {
			g.Tags[i] = r.Str()
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
// of a sealed file (wingfile.Seal), for its CRC and every offset and index for
// its bounds, so a search of it cannot read out of range.
func parseFrozen(buf []byte, sealed bool, table *crc32.Table) (*frozenWing, error) {
	arr, err := wingfile.Split(buf, table)
	if err != nil {
		return nil, err
	}
	if !sealed {
		if err := arr.Check(eager); err != nil {
			return nil, err
		}
	}
	f, live, totalLen, err := readFrozenHead(arr.Data[wingfile.SecHead])
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
	r := &wingfile.HeadReader{B: head}
	f = &frozenWing{id: r.Str(), model: r.Str(), dim: int(r.Uint()), lastMined: r.Time(),
		sources: make([]SourceHead, r.Count())}
	for i := range f.sources {
		f.sources[i] = readSourceHead(r)
	}
	f.governed = int(r.Uint())
	if n := r.Count(); n > 0 {
		f.roots = make([]string, n)
		for i := range f.roots {
			f.roots[i] = r.Str()
		}
	}
	live, totalLen = int(r.Uint()), int(r.Uint())
	if r.Err != nil {
		return nil, 0, 0, r.Err
	}
	// The tables the notes refer to are read when a search or a thaw first
	// needs them (loadTables): a mine of other wings never does.
	f.tablesRaw = r.B
	f.mtimes = make(map[string]time.Time, len(f.sources))
	for _, s := range f.sources {
		f.mtimes[s.Path] = s.Mtime
	}
	return f, live, totalLen, nil
}

// takeArrays points f's arrays at the section's, each checked for a size
// its element divides, and returns the documents and their frequencies.
func (f *frozenWing) takeArrays(arr *wingfile.Sections) ([]lexDoc, []int32, error) {
	a := &arr.Data
	ok := true
	take := func(v []int32, good bool) []int32 { ok = ok && good; return v }
	takeU := func(v []uint32, good bool) []uint32 { ok = ok && good; return v }
	docs, good := lexDocs(a[wingfile.SecDocs])
	ok = ok && good
	df := take(wingfile.Int32s(a[wingfile.SecDF]))
	f.lex = frozenLex{terms: a[wingfile.SecTerms], post: a[wingfile.SecPost]}
	f.lex.termEnd = takeU(wingfile.Uint32s(a[wingfile.SecTermEnd]))
	f.lex.listEnd = takeU(wingfile.Uint32s(a[wingfile.SecListEnd]))
	f.lex.listLast = take(wingfile.Int32s(a[wingfile.SecListLast]))
	f.prev, f.next, f.rank = take(wingfile.Int32s(a[wingfile.SecPrev])), take(wingfile.Int32s(a[wingfile.SecNext])), take(wingfile.Int32s(a[wingfile.SecRank]))
	f.marked, f.line = take(wingfile.Int32s(a[wingfile.SecMarked])), take(wingfile.Int32s(a[wingfile.SecLine]))
	f.headIdx, f.placeIdx, f.govIdx = takeU(wingfile.Uint32s(a[wingfile.SecHeadIdx])), takeU(wingfile.Uint32s(a[wingfile.SecPlaceIdx])), takeU(wingfile.Uint32s(a[wingfile.SecGovIdx]))
	f.idEnd, f.strEnd = takeU(wingfile.Uint32s(a[wingfile.SecIDEnd])), takeU(wingfile.Uint32s(a[wingfile.SecStrEnd]))
	f.strs, f.arrays, f.status = a[wingfile.SecStrs], arr, a[wingfile.SecStatus]
	f.strCRC = takeU(wingfile.Uint32s(a[wingfile.SecStrCRC]))
	vecs, good := wingfile.Float32s(a[wingfile.SecVecs])
	f.vecs, f.hasVec = vecs, a[wingfile.SecHasVec]
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
	if len(f.hasVec) != n || len(f.status) != n || len(f.strCRC) != (len(f.strs)+wingfile.StrBlock-1)/wingfile.StrBlock {
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
		if f.hitsErr = f.arrays.Check(hitArrays); f.hitsErr != nil {
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
	f.vecsOnce.Do(func() { f.vecsErr = f.arrays.Check([]int{wingfile.SecVecs}) })
	return f.vecsErr
}

// loadTables reads, once, the tables of heading paths, places and
// governances the notes refer to, and checks the governance of every note
// refers to one (the head's CRC was checked at open).
func (f *frozenWing) loadTables() error {
	f.tablesOnce.Do(func() {
		r := &wingfile.HeadReader{B: f.tablesRaw}
		f.headings = make([]unique.Handle[string], r.Count())
		for i := range f.headings {
			f.headings[i] = unique.Make(r.Str())
		}
		f.places = make([]unique.Handle[notePlace], r.Count())
		for i := range f.places {
			f.places[i] = unique.Make(notePlace{wing: r.Str(), agent: r.Str(), source: r.Str()})
			r.Time() // the source's mtime, which sources have too
		}
		f.govs = make([]*govern.Note, r.Count())
		for i := range f.govs {
			f.govs[i] = readGovernance(r)
		}
		switch {
		case r.Err != nil:
			f.tablesErr = fmt.Errorf("%w: %v", ErrCorrupt, r.Err)
		case !checkIndexes(f.govIdx, len(f.govs)):
			f.tablesErr = fmt.Errorf("%w: index governance out of range", ErrCorrupt)
		}
	})
	return f.tablesErr
}

// checkStrings checks the CRCs of the blocks of the notes' strings that
// [start, end) spans.
func (f *frozenWing) checkStrings(start, end uint32) error {
	for b := int(start / wingfile.StrBlock); b*wingfile.StrBlock < int(end); b++ {
		block := f.strs[b*wingfile.StrBlock : min((b+1)*wingfile.StrBlock, len(f.strs))]
		if crc32.Checksum(block, f.arrays.Table) != f.strCRC[b] {
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
