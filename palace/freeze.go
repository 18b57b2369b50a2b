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
	x := &s.lex
	docNum := make([]int32, len(x.docs))
	olds := make([]int32, 0, x.live) // the old document of each new one
	notes := make([]*storedNote, 0, x.live)
	var strsLen int64
	for d, doc := range x.docs {
		docNum[d] = -1
		if !doc.dead() && x.notes[d] != nil {
			docNum[d] = int32(len(notes))
			olds = append(olds, int32(d))
			notes = append(notes, x.notes[d])
			strsLen += int64(len(x.notes[d].id) + len(x.notes[d].text))
		}
	}
	n := len(notes)
	order := s.terms
	sortTerms(order)
	checks := make([]uint32, n)
	post := make([]byte, 0, x.size) // renumbering never lengthens a list
	var termsLen int64
	df, listLast := make([]int32, len(order)), make([]int32, len(order))
	listEnd := make([]uint32, len(order))
	for nt, t := range order {
		last := int32(-1)
		for p := range t.postings() {
			d := docNum[p.doc]
			if d < 0 {
				continue
			}
			post = encodePosting(post, d-last, p.tf)
			last = d
			df[nt]++
			checks[d] += termCheck(int32(nt), p.tf)
		}
		listEnd[nt], listLast[nt] = uint32(len(post)), last
		termsLen += int64(len(t.text))
	}
	var marked []int32
	for _, d := range s.view.marked {
		if d >= 0 && int(d) < len(docNum) && docNum[d] >= 0 {
			marked = append(marked, docNum[d])
		}
	}
	tables := newNoteTables(notes)
	head := s.head(tables)
	dim := max(s.dim, 0)

	lens := [numSecs]int64{secHead: int64(len(head)), secDocs: 8 * int64(n), secDF: 4 * int64(len(order)),
		secListEnd: 4 * int64(len(order)), secListLast: 4 * int64(len(order)), secPost: int64(len(post)),
		secTermEnd: 4 * int64(len(order)), secTerms: termsLen, secMarked: 4 * int64(len(marked)), secStrs: strsLen,
		secStrCRC: 4 * ((strsLen + strBlock - 1) / strBlock), secVecs: 4 * int64(n) * int64(dim), secHasVec: int64(n), secStatus: int64(n)}
	if lens[secStrs] > math.MaxUint32 || lens[secVecs] > math.MaxUint32 {
		return nil, 0, 0, fmt.Errorf("wing %s is too large for one file", s.id)
	}
	for _, sec := range []int{secPrev, secNext, secRank, secLine, secHeadIdx, secPlaceIdx, secGovIdx, secIDEnd, secStrEnd} {
		lens[sec] = 4 * int64(n)
	}
	w := newIndexWriter(out)
	toc := make([]byte, tocLen)
	w.write(toc) // filled in last
	var crcs [numSecs]uint32
	view := func(a []int32, old int32, renum bool) uint32 {
		if int(old) >= len(a) {
			return math.MaxUint32 // -1
		}
		v := a[old]
		if renum && v >= 0 {
			v = docNum[v]
		}
		return uint32(v)
	}
	for sec := range numSecs {
		w.pad()
		w.sum()
		w.crc, w.start, w.blocks = 0, w.n, sec == secStrs
		binary.LittleEndian.PutUint64(toc[sec*16:], uint64(w.n))
		binary.LittleEndian.PutUint32(toc[sec*16+8:], uint32(lens[sec]))
		switch sec {
		case secHead:
			w.write(head)
		case secDocs:
			for i, old := range olds {
				w.u32(uint32(x.docs[old].length))
				w.u32(checks[i])
			}
		case secDF:
			for _, v := range df {
				w.u32(uint32(v))
			}
		case secListEnd:
			for _, v := range listEnd {
				w.u32(v)
			}
		case secListLast:
			for _, v := range listLast {
				w.u32(uint32(v))
			}
		case secPost:
			w.write(post)
		case secTermEnd:
			end := uint32(0)
			for _, t := range order {
				end += uint32(len(t.text))
				w.u32(end)
			}
		case secTerms:
			for _, t := range order {
				w.str(t.text)
			}
		case secPrev, secNext, secRank:
			a := map[int][]int32{secPrev: s.view.prev, secNext: s.view.next, secRank: s.view.rank}[sec]
			for _, old := range olds {
				w.u32(view(a, old, sec != secRank))
			}
		case secMarked:
			for _, d := range marked {
				w.u32(uint32(d))
			}
		case secLine:
			for _, nt := range notes {
				w.u32(uint32(nt.line))
			}
		case secHeadIdx:
			for _, nt := range notes {
				w.u32(tables.headings[nt.heading])
			}
		case secPlaceIdx:
			for _, nt := range notes {
				w.u32(tables.places[nt.place])
			}
		case secGovIdx:
			for _, nt := range notes {
				w.u32(tables.govs[nt.gov])
			}
		case secStatus:
			for _, nt := range notes {
				w.write([]byte{statusCode(nt.gov.Status)})
			}
		case secIDEnd, secStrEnd:
			end := uint32(0)
			for _, nt := range notes {
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
			for _, nt := range notes {
				w.str(nt.id)
				w.str(nt.text)
			}
		case secStrCRC:
			for _, c := range w.blockCRCs {
				w.u32(c)
			}
		case secVecs:
			if dim == 0 {
				break
			}
			zero := make([]float32, dim)
			for _, nt := range notes {
				v := s.vecs[nt.id]
				if len(v) != dim {
					v = zero
				}
				for _, f := range v {
					w.u32(math.Float32bits(f))
				}
			}
		case secHasVec:
			for _, nt := range notes {
				has := byte(0)
				if v := s.vecs[nt.id]; dim > 0 && len(v) == dim {
					has = 1
				}
				w.write([]byte{has})
			}
		}
		w.sum()
		crcs[sec], w.blocks = w.crc, false
		if w.n-w.start != lens[sec] && w.err == nil {
			w.err = fmt.Errorf("wing %s: index array %d of %d bytes, %d written", s.id, sec, lens[sec], w.n-w.start)
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
	return notes, w.n, crc32.ChecksumIEEE(toc), nil
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
