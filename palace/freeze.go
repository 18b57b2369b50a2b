package palace

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unique"
	"unsafe"

	"github.com/memminer/memminer/govern"
)

// indexWriter streams an index section: the table of contents, then each
// array at an offset that is a multiple of 8, through a CRC-32 (IEEE).
// It keeps the CRC of the array being written (crc), and with blocks set
// of each strBlock bytes of it (blockCRCs). Most arrays are written four
// bytes at a time, the strings one note's id or text at a time, so the
// bytes are gathered in buf and summed when it is written out or the
// array ends (sum), not at each write.
type indexWriter struct {
	out       io.Writer
	buf       []byte
	summed    int // buf[:summed] is in crc (and blockCRCs)
	n         int64
	err       error
	crc       uint32
	blocks    bool
	start     int64 // where the array being written starts
	blockCRCs []uint32
}

func newIndexWriter(out io.Writer) *indexWriter {
	return &indexWriter{out: out, buf: make([]byte, 0, 1<<16)}
}

// sum adds the bytes of buf not yet summed to crc, and with blocks set to
// the CRCs of the blocks they fall in.
func (w *indexWriter) sum() {
	b := w.buf[w.summed:]
	w.crc = crc32.Update(w.crc, crc32.IEEETable, b)
	w.summed = len(w.buf)
	if !w.blocks {
		return
	}
	at := w.n - int64(len(b)) - w.start // b's offset in the array
	for len(b) > 0 {
		if at%strBlock == 0 {
			w.blockCRCs = append(w.blockCRCs, 0)
		}
		k := min(len(b), int(strBlock-at%strBlock))
		last := &w.blockCRCs[len(w.blockCRCs)-1]
		*last = crc32.Update(*last, crc32.IEEETable, b[:k])
		at += int64(k)
		b = b[k:]
	}
}

// flush writes buf out.
func (w *indexWriter) flush() {
	w.sum()
	if w.err == nil && len(w.buf) > 0 {
		_, w.err = w.out.Write(w.buf)
	}
	w.buf, w.summed = w.buf[:0], 0
}

// room makes room for k more bytes in buf, false after an error.
func (w *indexWriter) room(k int) bool {
	if len(w.buf)+k > cap(w.buf) {
		w.flush()
	}
	return w.err == nil
}

func (w *indexWriter) write(b []byte) {
	for len(b) > 0 && w.room(1) {
		k := min(len(b), cap(w.buf)-len(w.buf))
		w.buf = append(w.buf, b[:k]...)
		w.n += int64(k)
		b = b[k:]
	}
}

// str writes s, which is only read (not copied to bytes first).
func (w *indexWriter) str(s string) { w.write(unsafe.Slice(unsafe.StringData(s), len(s))) }

func (w *indexWriter) u32(v uint32) {
	if !w.room(4) {
		return
	}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, v)
	w.n += 4
}

// pad writes zeros up to the next multiple of 8.
func (w *indexWriter) pad() {
	for w.n%8 != 0 {
		w.write([]byte{0})
	}
}

// sortTerms sorts terms by text. A thawed wing numbers its terms in that
// order and a change adds a few after them, so the run of sorted terms
// they start with is kept and the rest sorted and merged into it: a
// sort of them all took a seventh of writing a wing of 1,000 notes.
func sortTerms(terms []termRef) {
	byText := func(a, b termRef) int { return strings.Compare(a.text, b.text) }
	k := 1
	for k < len(terms) && terms[k-1].text < terms[k].text {
		k++
	}
	if k >= len(terms) {
		return
	}
	head := slices.Clone(terms[:k])
	tail := terms[k:]
	slices.SortFunc(tail, byText)
	// Merged from the front, into terms: the place written is always
	// before what is left of tail.
	i, j := 0, 0
	for out := 0; i < len(head); out++ {
		if j < len(tail) && byText(tail[j], head[i]) < 0 {
			terms[out] = tail[j]
			j++
		} else {
			terms[out] = head[i]
			i++
		}
	}
}

// writeIndex writes the index section of a wing snapshot to out at
// offset base, where out is at, and returns the notes in their new
// document order, the section's length (a multiple of 8) and the CRC-32
// of its table of contents, which holds those of the arrays. Removed notes are left out and the rest
// renumbered in order; terms no note has are left out and the rest
// numbered in the sorted order of their text, and each note's check is
// made again for the new numbers. Only the postings and a few numbers a
// note are held in memory; the notes' strings and vectors are streamed
// from the wing's own.
func writeIndex(out wingFile, base int64, s *wingSnapshot) ([]*storedNote, int64, uint32, error) {
	ip, err := planIndex(s)
	if err != nil {
		return nil, 0, 0, err
	}
	w := newIndexWriter(out)
	toc := make([]byte, tocLen)
	w.write(toc) // filled in last
	var crcs [numSecs]uint32
	for sec := range numSecs {
		w.pad()
		w.sum()
		w.crc, w.start, w.blocks = 0, w.n, sec == secStrs
		binary.LittleEndian.PutUint64(toc[sec*16:], uint64(w.n))
		binary.LittleEndian.PutUint32(toc[sec*16+8:], uint32(ip.lens[sec]))
		ip.writeSection(w, sec)
		w.sum()
		crcs[sec], w.blocks = w.crc, false
		if w.n-w.start != ip.lens[sec] && w.err == nil {
			w.err = fmt.Errorf("wing %s: index array %d of %d bytes, %d written", s.id, sec, ip.lens[sec], w.n-w.start)
		}
	}
	w.pad()
	w.flush()
	if w.err != nil {
		return nil, 0, 0, w.err
	}
	for sec := range numSecs {
		binary.LittleEndian.PutUint32(toc[sec*16+12:], crcs[sec])
	}
	if _, err := out.WriteAt(toc, base); err != nil {
		return nil, 0, 0, err
	}
	return ip.notes, w.n, crc32.ChecksumIEEE(toc), nil
}

// indexPlan is what writeIndex writes: the live notes renumbered, the
// terms sorted with their postings, and each array's length.
type indexPlan struct {
	s      *wingSnapshot
	docNum []int32 // the new number of each old document, -1 for one left out
	olds   []int32 // the old document of each new one
	notes  []*storedNote
	// order are the terms in sorted order; the postings of term i end at
	// listEnd[i] of post, its last document is listLast[i] and df[i]
	// documents hold it; checks are the notes' checks.
	order    []termRef
	post     []byte
	df       []int32
	listLast []int32
	listEnd  []uint32
	checks   []uint32
	marked   []int32
	tables   *noteTables
	head     []byte
	dim      int
	lens     [numSecs]int64
}

// planIndex renumbers the snapshot's notes and terms and sizes the
// arrays, refusing a wing too large for one file.
func planIndex(s *wingSnapshot) (*indexPlan, error) {
	ip := &indexPlan{s: s, dim: max(s.dim, 0)}
	strsLen := ip.renumberNotes()
	termsLen := ip.renumberPostings()
	for _, d := range s.view.marked {
		if d >= 0 && int(d) < len(ip.docNum) && ip.docNum[d] >= 0 {
			ip.marked = append(ip.marked, ip.docNum[d])
		}
	}
	ip.tables = newNoteTables(ip.notes)
	ip.head = s.head(ip.tables)
	n, terms := int64(len(ip.notes)), int64(len(ip.order))
	ip.lens = [numSecs]int64{secHead: int64(len(ip.head)), secDocs: 8 * n, secDF: 4 * terms,
		secListEnd: 4 * terms, secListLast: 4 * terms, secPost: int64(len(ip.post)),
		secTermEnd: 4 * terms, secTerms: termsLen, secMarked: 4 * int64(len(ip.marked)), secStrs: strsLen,
		secStrCRC: 4 * ((strsLen + strBlock - 1) / strBlock), secVecs: 4 * n * int64(ip.dim), secHasVec: n, secStatus: n}
	if ip.lens[secStrs] > math.MaxUint32 || ip.lens[secVecs] > math.MaxUint32 {
		return nil, fmt.Errorf("wing %s is too large for one file", s.id)
	}
	for _, sec := range []int{secPrev, secNext, secRank, secLine, secHeadIdx, secPlaceIdx, secGovIdx, secIDEnd, secStrEnd} {
		ip.lens[sec] = 4 * n
	}
	return ip, nil
}

// renumberNotes numbers the live notes in document order and returns the
// length of their strings.
func (ip *indexPlan) renumberNotes() (strsLen int64) {
	x := &ip.s.lex
	ip.docNum = make([]int32, len(x.docs))
	ip.olds = make([]int32, 0, x.live)
	ip.notes = make([]*storedNote, 0, x.live)
	for d, doc := range x.docs {
		ip.docNum[d] = -1
		if !doc.dead() && x.notes[d] != nil {
			ip.docNum[d] = int32(len(ip.notes))
			ip.olds = append(ip.olds, int32(d))
			ip.notes = append(ip.notes, x.notes[d])
			strsLen += int64(len(x.notes[d].id) + len(x.notes[d].text))
		}
	}
	return strsLen
}

// renumberPostings sorts the terms and encodes their postings with the
// new document numbers, making each note's check again; it returns the
// length of the terms' text.
func (ip *indexPlan) renumberPostings() (termsLen int64) {
	ip.order = ip.s.terms
	sortTerms(ip.order)
	ip.checks = make([]uint32, len(ip.notes))
	ip.post = make([]byte, 0, ip.s.lex.size) // renumbering never lengthens a list
	ip.df, ip.listLast = make([]int32, len(ip.order)), make([]int32, len(ip.order))
	ip.listEnd = make([]uint32, len(ip.order))
	for nt, t := range ip.order {
		last := int32(-1)
		for p := range t.postings() {
			d := ip.docNum[p.doc]
			if d < 0 {
				continue
			}
			ip.post = encodePosting(ip.post, d-last, p.tf)
			last = d
			ip.df[nt]++
			ip.checks[d] += termCheck(int32(nt), p.tf)
		}
		ip.listEnd[nt], ip.listLast[nt] = uint32(len(ip.post)), last
		termsLen += int64(len(t.text))
	}
	return termsLen
}

// writeSection writes array sec.
func (ip *indexPlan) writeSection(w *indexWriter, sec int) {
	switch sec {
	case secHead:
		w.write(ip.head)
	case secDocs, secDF, secListEnd, secListLast, secPost, secTermEnd, secTerms, secMarked:
		ip.writeLexical(w, sec)
	case secIDEnd, secStrEnd, secStrs, secStrCRC:
		ip.writeStrings(w, sec)
	case secVecs, secHasVec:
		ip.writeVectors(w, sec)
	default:
		ip.writeNoteFields(w, sec)
	}
}

// writeLexical writes an array of the lexical index: the documents, the
// terms and their postings, the marked documents.
func (ip *indexPlan) writeLexical(w *indexWriter, sec int) {
	switch sec {
	case secDocs:
		for i, old := range ip.olds {
			w.u32(uint32(ip.s.lex.docs[old].length))
			w.u32(ip.checks[i])
		}
	case secDF:
		for _, v := range ip.df {
			w.u32(uint32(v))
		}
	case secListEnd:
		for _, v := range ip.listEnd {
			w.u32(v)
		}
	case secListLast:
		for _, v := range ip.listLast {
			w.u32(uint32(v))
		}
	case secPost:
		w.write(ip.post)
	case secTermEnd:
		end := uint32(0)
		for _, t := range ip.order {
			end += uint32(len(t.text))
			w.u32(end)
		}
	case secTerms:
		for _, t := range ip.order {
			w.str(t.text)
		}
	case secMarked:
		for _, d := range ip.marked {
			w.u32(uint32(d))
		}
	}
}

// writeNoteFields writes an array of one number a note: its neighbours
// and rank in the view, its line and its tables' entries, its status.
func (ip *indexPlan) writeNoteFields(w *indexWriter, sec int) {
	switch sec {
	case secPrev, secNext, secRank:
		a := map[int][]int32{secPrev: ip.s.view.prev, secNext: ip.s.view.next, secRank: ip.s.view.rank}[sec]
		for _, old := range ip.olds {
			w.u32(ip.viewOf(a, old, sec != secRank))
		}
	case secLine:
		for _, nt := range ip.notes {
			w.u32(uint32(nt.line))
		}
	case secHeadIdx:
		for _, nt := range ip.notes {
			w.u32(ip.tables.headings[nt.heading])
		}
	case secPlaceIdx:
		for _, nt := range ip.notes {
			w.u32(ip.tables.places[nt.place])
		}
	case secGovIdx:
		for _, nt := range ip.notes {
			w.u32(ip.tables.govs[nt.gov])
		}
	case secStatus:
		for _, nt := range ip.notes {
			w.write([]byte{statusCode(nt.gov.Status)})
		}
	}
}

// viewOf is entry old of the view's array a, renumbered when it names a
// document (renum), math.MaxUint32 (-1) past its end.
func (ip *indexPlan) viewOf(a []int32, old int32, renum bool) uint32 {
	if int(old) >= len(a) {
		return math.MaxUint32 // -1
	}
	v := a[old]
	if renum && v >= 0 {
		v = ip.docNum[v]
	}
	return uint32(v)
}

// writeStrings writes the notes' ids and texts, where each ends, and the
// checksums of their blocks.
func (ip *indexPlan) writeStrings(w *indexWriter, sec int) {
	switch sec {
	case secIDEnd, secStrEnd:
		end := uint32(0)
		for _, nt := range ip.notes {
			end += uint32(len(nt.id))
			if sec == secIDEnd {
				w.u32(end)
			}
			end += uint32(len(nt.text))
			if sec == secStrEnd {
				w.u32(end)
			}
		}
	case secStrs:
		for _, nt := range ip.notes {
			w.str(nt.id)
			w.str(nt.text)
		}
	case secStrCRC:
		for _, c := range w.blockCRCs {
			w.u32(c)
		}
	}
}

// writeVectors writes the notes' vectors (zeros for a note without one
// of the wing's dimension) and whether each has one.
func (ip *indexPlan) writeVectors(w *indexWriter, sec int) {
	if sec == secHasVec {
		for _, nt := range ip.notes {
			has := byte(0)
			if v := ip.s.vecs[nt.id]; ip.dim > 0 && len(v) == ip.dim {
				has = 1
			}
			w.write([]byte{has})
		}
		return
	}
	if ip.dim == 0 {
		return
	}
	zero := make([]float32, ip.dim)
	for _, nt := range ip.notes {
		v := ip.s.vecs[nt.id]
		if len(v) != ip.dim {
			v = zero
		}
		for _, f := range v {
			w.u32(math.Float32bits(f))
		}
	}
}

// noteTables number the distinct heading paths, places and governances
// of a wing's notes, which the index section holds once each.
type noteTables struct {
	headings    map[unique.Handle[string]]uint32
	places      map[unique.Handle[notePlace]]uint32
	govs        map[*govern.Note]uint32
	headingList []unique.Handle[string]
	placeList   []unique.Handle[notePlace]
	govList     []*govern.Note
}

func newNoteTables(notes []*storedNote) *noteTables {
	t := &noteTables{headings: map[unique.Handle[string]]uint32{}, places: map[unique.Handle[notePlace]]uint32{}, govs: map[*govern.Note]uint32{}}
	for _, n := range notes {
		if _, ok := t.headings[n.heading]; !ok {
			t.headings[n.heading] = uint32(len(t.headingList))
			t.headingList = append(t.headingList, n.heading)
		}
		if _, ok := t.places[n.place]; !ok {
			t.places[n.place] = uint32(len(t.placeList))
			t.placeList = append(t.placeList, n.place)
		}
		if _, ok := t.govs[n.gov]; !ok {
			t.govs[n.gov] = uint32(len(t.govList))
			t.govList = append(t.govList, n.gov)
		}
	}
	return t
}

// writeSourceHead codes src without its NoteIDs and Earlier, and how
// many notes it has.
func writeSourceHead(h *headWriter, src *Source) {
	h.str(src.Path)
	h.str(src.Agent)
	h.time(src.Mtime)
	h.int(src.Size)
	h.str(src.Hash)
	h.time(src.Mined)
	h.int(int64(src.Governed))
	h.str(src.GovernedFile)
	h.int(int64(src.NoteFormat))
	keys := slices.Sorted(maps.Keys(src.Frontmatter))
	h.uint(uint64(len(keys)))
	for _, k := range keys {
		h.str(k)
		h.str(src.Frontmatter[k])
	}
	h.uint(uint64(len(src.NoteIDs)))
}

// head codes the head array of the snapshot's index section: the wing's
// fields and the tables.
func (s *wingSnapshot) head(t *noteTables) []byte {
	h := &headWriter{}
	h.str(s.id)
	h.str(s.model)
	h.uint(uint64(max(s.dim, 0)))
	h.time(s.lastMined)
	h.uint(uint64(len(s.sources)))
	for i := range s.sources {
		writeSourceHead(h, &s.sources[i])
	}
	h.uint(uint64(s.governed))
	h.uint(uint64(len(s.roots)))
	for _, r := range s.roots {
		h.str(r)
	}
	h.uint(uint64(s.lex.live))
	h.uint(uint64(s.lex.totalLen))
	h.uint(uint64(len(t.headingList)))
	for _, hd := range t.headingList {
		h.str(hd.Value())
	}
	h.uint(uint64(len(t.placeList)))
	for _, pl := range t.placeList {
		p := pl.Value()
		h.str(p.wing)
		h.str(p.agent)
		h.str(p.source)
		var mtime time.Time
		if src := s.sourceOf(p.source); src != nil {
			mtime = src.Mtime
		}
		h.time(mtime)
	}
	h.uint(uint64(len(t.govList)))
	for _, g := range t.govList {
		writeGovernance(h, g)
	}
	return h.b
}
