package palace

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unique"

	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace/internal/wingfile"
)

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
func writeIndex(out wingfile.File, base int64, s *wingSnapshot) ([]*storedNote, int64, uint32, error) {
	ip, err := planIndex(s)
	if err != nil {
		return nil, 0, 0, err
	}
	n, crc, err := wingfile.WriteSections(out, base, ip.lens, ip.writeSection)
	if err != nil {
		return nil, 0, 0, err
	}
	return ip.notes, n, crc, nil
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
	lens     [wingfile.NumSecs]int64
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
	ip.lens = [wingfile.NumSecs]int64{wingfile.SecHead: int64(len(ip.head)), wingfile.SecDocs: 8 * n, wingfile.SecDF: 4 * terms,
		wingfile.SecListEnd: 4 * terms, wingfile.SecListLast: 4 * terms, wingfile.SecPost: int64(len(ip.post)),
		wingfile.SecTermEnd: 4 * terms, wingfile.SecTerms: termsLen, wingfile.SecMarked: 4 * int64(len(ip.marked)), wingfile.SecStrs: strsLen,
		wingfile.SecStrCRC: 4 * ((strsLen + wingfile.StrBlock - 1) / wingfile.StrBlock), wingfile.SecVecs: 4 * n * int64(ip.dim), wingfile.SecHasVec: n, wingfile.SecStatus: n}
	if ip.lens[wingfile.SecStrs] > math.MaxUint32 || ip.lens[wingfile.SecVecs] > math.MaxUint32 {
		return nil, fmt.Errorf("wing %s is too large for one file", s.id)
	}
	for _, sec := range []int{wingfile.SecPrev, wingfile.SecNext, wingfile.SecRank, wingfile.SecLine, wingfile.SecHeadIdx, wingfile.SecPlaceIdx, wingfile.SecGovIdx, wingfile.SecIDEnd, wingfile.SecStrEnd} {
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
func (ip *indexPlan) writeSection(w *wingfile.SectionWriter, sec int) {
	switch sec {
	case wingfile.SecHead:
		w.Write(ip.head)
	case wingfile.SecDocs, wingfile.SecDF, wingfile.SecListEnd, wingfile.SecListLast, wingfile.SecPost, wingfile.SecTermEnd, wingfile.SecTerms, wingfile.SecMarked:
		ip.writeLexical(w, sec)
	case wingfile.SecIDEnd, wingfile.SecStrEnd, wingfile.SecStrs, wingfile.SecStrCRC:
		ip.writeStrings(w, sec)
	case wingfile.SecVecs, wingfile.SecHasVec:
		ip.writeVectors(w, sec)
	default:
		ip.writeNoteFields(w, sec)
	}
}

// writeLexical writes an array of the lexical index: the documents, the
// terms and their postings, the marked documents.
func (ip *indexPlan) writeLexical(w *wingfile.SectionWriter, sec int) {
	switch sec {
	case wingfile.SecDocs:
		for i, old := range ip.olds {
			w.U32(uint32(ip.s.lex.docs[old].length))
			w.U32(ip.checks[i])
		}
	case wingfile.SecDF:
		for _, v := range ip.df {
			w.U32(uint32(v))
		}
	case wingfile.SecListEnd:
		for _, v := range ip.listEnd {
			w.U32(v)
		}
	case wingfile.SecListLast:
		for _, v := range ip.listLast {
			w.U32(uint32(v))
		}
	case wingfile.SecPost:
		w.Write(ip.post)
	case wingfile.SecTermEnd:
		end := uint32(0)
		for _, t := range ip.order {
			end += uint32(len(t.text))
			w.U32(end)
		}
	case wingfile.SecTerms:
		for _, t := range ip.order {
			w.Str(t.text)
		}
	case wingfile.SecMarked:
		for _, d := range ip.marked {
			w.U32(uint32(d))
		}
	}
}

// writeNoteFields writes an array of one number a note: its neighbours
// and rank in the view, its line and its tables' entries, its status.
func (ip *indexPlan) writeNoteFields(w *wingfile.SectionWriter, sec int) {
	switch sec {
	case wingfile.SecPrev, wingfile.SecNext, wingfile.SecRank:
		a := map[int][]int32{wingfile.SecPrev: ip.s.view.prev, wingfile.SecNext: ip.s.view.next, wingfile.SecRank: ip.s.view.rank}[sec]
		for _, old := range ip.olds {
			w.U32(ip.viewOf(a, old, sec != wingfile.SecRank))
		}
	case wingfile.SecLine:
		for _, nt := range ip.notes {
			w.U32(uint32(nt.line))
		}
	case wingfile.SecHeadIdx:
		for _, nt := range ip.notes {
			w.U32(ip.tables.headings[nt.heading])
		}
	case wingfile.SecPlaceIdx:
		for _, nt := range ip.notes {
			w.U32(ip.tables.places[nt.place])
		}
	case wingfile.SecGovIdx:
		for _, nt := range ip.notes {
			w.U32(ip.tables.govs[nt.gov])
		}
	case wingfile.SecStatus:
		for _, nt := range ip.notes {
			w.Write([]byte{statusCode(nt.gov.Status)})
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
func (ip *indexPlan) writeStrings(w *wingfile.SectionWriter, sec int) {
	switch sec {
	case wingfile.SecIDEnd, wingfile.SecStrEnd:
		end := uint32(0)
		for _, nt := range ip.notes {
			end += uint32(len(nt.id))
			if sec == wingfile.SecIDEnd {
				w.U32(end)
			}
			end += uint32(len(nt.text))
			if sec == wingfile.SecStrEnd {
				w.U32(end)
			}
		}
	case wingfile.SecStrs:
		for _, nt := range ip.notes {
			w.Str(nt.id)
			w.Str(nt.text)
		}
	case wingfile.SecStrCRC:
		for _, c := range w.BlockCRCs() {
			w.U32(c)
		}
	}
}

// writeVectors writes the notes' vectors (zeros for a note without one
// of the wing's dimension) and whether each has one.
func (ip *indexPlan) writeVectors(w *wingfile.SectionWriter, sec int) {
	if sec == wingfile.SecHasVec {
		for _, nt := range ip.notes {
			has := byte(0)
			if v := ip.s.vecs[nt.id]; ip.dim > 0 && len(v) == ip.dim {
				has = 1
			}
			w.Write([]byte{has})
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
			w.U32(math.Float32bits(f))
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
func writeSourceHead(h *wingfile.HeadWriter, src *Source) {
	h.Str(src.Path)
	h.Str(src.Agent)
	h.Time(src.Mtime)
	h.Int(src.Size)
	h.Str(src.Hash)
	h.Time(src.Mined)
	h.Int(int64(src.Governed))
	h.Str(src.GovernedFile)
	h.Int(int64(src.NoteFormat))
	keys := slices.Sorted(maps.Keys(src.Frontmatter))
	h.Uint(uint64(len(keys)))
	for _, k := range keys {
		h.Str(k)
		h.Str(src.Frontmatter[k])
	}
	h.Uint(uint64(len(src.NoteIDs)))
}

// head codes the head array of the snapshot's index section: the wing's
// fields and the tables.
func (s *wingSnapshot) head(t *noteTables) []byte {
	h := &wingfile.HeadWriter{}
	h.Str(s.id)
	h.Str(s.model)
	h.Uint(uint64(max(s.dim, 0)))
	h.Time(s.lastMined)
	h.Uint(uint64(len(s.sources)))
	for i := range s.sources {
		writeSourceHead(h, &s.sources[i])
	}
	h.Uint(uint64(s.governed))
	h.Uint(uint64(len(s.roots)))
	for _, r := range s.roots {
		h.Str(r)
	}
	h.Uint(uint64(s.lex.live))
	h.Uint(uint64(s.lex.totalLen))
	h.Uint(uint64(len(t.headingList)))
	for _, hd := range t.headingList {
		h.Str(hd.Value())
	}
	h.Uint(uint64(len(t.placeList)))
	for _, pl := range t.placeList {
		p := pl.Value()
		h.Str(p.wing)
		h.Str(p.agent)
		h.Str(p.source)
		var mtime time.Time
		if src := s.sourceOf(p.source); src != nil {
			mtime = src.Mtime
		}
		h.Time(mtime)
	}
	h.Uint(uint64(len(t.govList)))
	for _, g := range t.govList {
		writeGovernance(h, g)
	}
	return h.B
}
