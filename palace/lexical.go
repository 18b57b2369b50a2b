package palace

import (
	"encoding/binary"
	"iter"
	"math"
	"slices"
	"strings"

	"github.com/memminer/memminer/internal/words"
)

// BM25 parameters: the usual values, which held up on LoCoMo (see BENCHMARKS.md).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// lexIndex is a BM25 index over one wing's notes. It is updated in place
// as notes come and go, so a mine never rebuilds it from scratch. Terms and
// notes are numbered and postings are flat: opening a palace builds every
// wing's index, and maps of maps made that the slowest step.
//
// What it holds per note is kept small, since a wing may have hundreds of
// thousands of notes: its length and a checksum of its terms (8 bytes),
// its entry in byID, and its postings, varint-encoded by gap from the
// previous note of the term (a byte or two each instead of eight). A note's
// terms are not kept: remove derives them again from its text, and search
// learns which query terms a note has from the postings (queryTerms).
// The index is also the wing's table of its notes (note): byID is the one
// map of a wing's note ids, which a map of its own took 43 bytes a note for.
type lexIndex struct {
	termIDs map[string]int32
	lists   []postingList // by term id
	df      []int32       // live notes per term id
	docs    []lexDoc      // by doc number; removed ones stay as tombstones
	// notes are the notes by doc number (addNote), nil for removed ones.
	notes []*storedNote
	byID  map[string]int32
	live  int
	// totalLen is the live notes' total length, for BM25's average.
	totalLen int
	// size is the bytes of every list's postings; held is what their
	// storage takes: the shared block pack made and the lists that left
	// it; grown is the bytes added since pack last ran on many.
	size, held, grown int
	// words and scratch are add's buffers, kept between calls (the
	// index is changed under the palace's write lock only).
	words   []string
	scratch []int32
	// frozen, when set, is the index of a frozen wing (frozen.go), read
	// in place: it holds the terms and postings, and termIDs, lists,
	// notes and byID are nil. Such an index is never changed.
	frozen *frozenLex
}

type posting struct {
	doc int32
	tf  int32
}

// postingList is one term's postings in doc order: for each, the gap from
// the previous doc number (from -1 for the first) shifted left by one, the
// low bit set when tf is more than 1, and then tf-2; both as uvarints.
type postingList struct {
	data []byte
	last int32 // doc number of the last posting, -1 for none
	// packed tells that data is part of the block pack made, which the
	// list keeps alive until it grows out of it.
	packed bool
}

// lexDoc is one note: its length in terms, -1 once removed, and the sum of
// termCheck over its distinct terms, which tells remove whether the text it
// is given is the one indexed.
type lexDoc struct {
	length int32
	check  uint32
}

func (d lexDoc) dead() bool { return d.length < 0 }

func newLexIndex() *lexIndex {
	return &lexIndex{termIDs: map[string]int32{}, byID: map[string]int32{}}
}

// termCheck mixes a term id and its count in a note into a note's check.
func termCheck(t, tf int32) uint32 {
	h := uint64(uint32(t))<<32 | uint64(uint32(tf))
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return uint32(h)
}

// add indexes the note id with text. An id the index has already is
// replaced.
func (x *lexIndex) add(id, text string) {
	if _, ok := x.byID[id]; ok {
		// Its old text is not known here: remove finds its terms by their
		// postings.
		x.remove(id, "")
	}
	x.words = words.AppendTerms(x.words[:0], text)
	ids := x.scratch[:0]
	for _, w := range x.words {
		t, ok := x.termIDs[w]
		if !ok {
			t = int32(len(x.lists))
			// A copy: w is part of text, which the key would keep alive.
			x.termIDs[strings.Clone(w)] = t
			x.lists = append(x.lists, postingList{last: -1})
			x.df = append(x.df, 0)
		}
		ids = append(ids, t)
	}
	x.scratch = ids
	slices.Sort(ids)
	doc := int32(len(x.docs))
	d := lexDoc{length: int32(len(ids))}
	eachRun(ids, func(t, tf int32) {
		x.appendPosting(t, posting{doc, tf})
		x.df[t]++
		d.check += termCheck(t, tf)
	})
	x.docs = append(x.docs, d)
	x.notes = append(x.notes, nil)
	x.byID[id] = doc
	x.live++
	x.totalLen += int(d.length)
}

// addNote indexes n, by its embedded text, as the note of its id.
func (x *lexIndex) addNote(n *storedNote) {
	x.add(n.id, n.embedText())
	x.notes[len(x.notes)-1] = n
}

// setNote makes n the note of its id, which the index holds already with
// n's text.
func (x *lexIndex) setNote(n *storedNote) {
	if d, ok := x.byID[n.id]; ok {
		x.notes[d] = n
	}
}

// note returns the note of id, nil when the index has none.
func (x *lexIndex) note(id string) *storedNote {
	if d, ok := x.byID[id]; ok {
		return x.notes[d]
	}
	return nil
}

// allNotes yields the notes in doc order.
func (x *lexIndex) allNotes() iter.Seq[*storedNote] {
	return func(yield func(*storedNote) bool) {
		for _, n := range x.notes {
			if n != nil && !yield(n) {
				return
			}
		}
	}
}

// eachRun calls f with each distinct value of sorted ids and its count.
func eachRun(ids []int32, f func(t, n int32)) {
	for i := 0; i < len(ids); {
		j := i + 1
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		f(ids[i], int32(j-i))
		i = j
	}
}

// appendPosting adds p, whose doc is the highest in the index, to term t.
func (x *lexIndex) appendPosting(t int32, p posting) {
	l := &x.lists[t]
	old := cap(l.data)
	n := len(l.data)
	l.data = encodePosting(l.data, p.doc-l.last, p.tf)
	l.last = p.doc
	x.size += len(l.data) - n
	x.grown += len(l.data) - n
	if cap(l.data) != old {
		if l.packed {
			l.packed = false // the block stays held by the other lists
		} else {
			x.held -= old
		}
		x.held += cap(l.data)
	}
}

// encodePosting appends a posting gap docs after the previous one.
func encodePosting(b []byte, gap, tf int32) []byte {
	if tf == 1 {
		return binary.AppendUvarint(b, uint64(gap)<<1)
	}
	b = binary.AppendUvarint(b, uint64(gap)<<1|1)
	return binary.AppendUvarint(b, uint64(tf-2))
}

// termID returns the id of term, false when the index has none.
func (x *lexIndex) termID(term string) (int32, bool) {
	if x.frozen != nil {
		return x.frozen.find(term)
	}
	t, ok := x.termIDs[term]
	return t, ok
}

// postings yields term t's postings in doc order, removed notes' included.
// A posting past the index's documents ends them (only a crafted frozen
// file could hold one).
func (x *lexIndex) postings(t int32) iter.Seq[posting] {
	if x.frozen != nil {
		return decodePostings(x.frozen.list(t), int32(len(x.docs)))
	}
	return decodePostings(x.lists[t].data, math.MaxInt32)
}

// decodePostings yields the postings coded in data, up to the first of a
// document number of docs or more.
func decodePostings(data []byte, docs int32) iter.Seq[posting] {
	return func(yield func(posting) bool) {
		doc := int32(-1)
		for i := 0; i < len(data); {
			v, n := binary.Uvarint(data[i:])
			if n <= 0 {
				return
			}
			i += n
			doc += int32(v >> 1)
			tf := int32(1)
			if v&1 != 0 {
				v, n = binary.Uvarint(data[i:])
				if n <= 0 {
					return
				}
				i += n
				tf = int32(v) + 2
			}
			if doc < 0 || doc >= docs || !yield(posting{doc, tf}) {
				return
			}
		}
	}
}

// remove drops the note id, whose text is the one it was added with.
func (x *lexIndex) remove(id, text string) {
	x.removeAll([]string{id}, func(int) string { return text })
}

// removeAll drops the notes ids; textOf(i) is the text ids[i] was added
// with. A note's terms, whose df go down, are derived from its text; one
// whose text is not the indexed one (as its length and check tell), and
// every note of a batch large enough that one pass over the postings is
// faster than reading their texts, is found in the postings instead. It
// returns how many of ids it had.
func (x *lexIndex) removeAll(ids []string, textOf func(i int) string) int {
	return x.drop(ids, textOf, len(ids)*scanBytesPerNote > x.size)
}

// drop is removeAll, which finds every note in the postings if scan.
func (x *lexIndex) drop(ids []string, textOf func(i int) string, scan bool) int {
	var unread []int32
	had := 0
	for i, id := range ids {
		n, ok := x.byID[id]
		if !ok {
			continue
		}
		d := x.docs[n]
		var terms []int32
		known := false
		if !scan {
			terms, known = x.indexedTerms(textOf(i), d)
		}
		if known {
			eachRun(terms, func(t, _ int32) { x.df[t]-- })
		} else {
			unread = append(unread, n)
		}
		had++
		x.docs[n].length = -1
		x.notes[n] = nil
		delete(x.byID, id)
		x.live--
		x.totalLen -= int(d.length)
	}
	if len(unread) > 0 {
		x.forgetPostings(unread)
	}
	// Compact once tombstones outnumber live notes, so a long-running
	// daemon's index does not grow without bound.
	if len(x.docs) > 64 && len(x.docs) > 2*x.live {
		x.compact()
	}
	return had
}

// scanBytesPerNote is about how many bytes of postings are decoded in the
// time one note's text is split into terms (BenchmarkLexIndexRemoveAll).
const scanBytesPerNote = 1024

// forgetPostings takes the removed docs out of their terms' df, found by
// their postings.
func (x *lexIndex) forgetPostings(docs []int32) {
	gone := make([]bool, len(x.docs))
	first, last := docs[0], docs[0]
	for _, n := range docs {
		gone[n] = true
		first, last = min(first, n), max(last, n)
	}
	for t := range x.lists {
		if x.lists[t].last < first {
			continue
		}
		for p := range x.postings(int32(t)) {
			if p.doc > last {
				break
			}
			if gone[p.doc] {
				x.df[t]--
			}
		}
	}
}

// indexedTerms returns text's term ids, sorted, when they are those of d.
func (x *lexIndex) indexedTerms(text string, d lexDoc) ([]int32, bool) {
	x.words = words.AppendTerms(x.words[:0], text)
	if len(x.words) != int(d.length) {
		return nil, false
	}
	ids := x.scratch[:0]
	for _, w := range x.words {
		t, ok := x.termIDs[w]
		if !ok {
			return nil, false
		}
		ids = append(ids, t)
	}
	x.scratch = ids
	slices.Sort(ids)
	var check uint32
	eachRun(ids, func(t, tf int32) { check += termCheck(t, tf) })
	return ids, check == d.check
}

// compact drops removed notes, and terms only they had, renumbering the
// rest in the same order.
func (x *lexIndex) compact() {
	renum := make([]int32, len(x.docs))
	docs := make([]lexDoc, 0, x.live)
	notes := make([]*storedNote, 0, x.live)
	for i, d := range x.docs {
		if d.dead() {
			renum[i] = -1
			continue
		}
		renum[i] = int32(len(docs))
		docs = append(docs, lexDoc{length: d.length})
		notes = append(notes, x.notes[i])
	}
	x.notes = notes
	for id, n := range x.byID {
		x.byID[id] = renum[n]
	}
	termNum := make([]int32, len(x.lists))
	var df []int32
	for t := range x.lists {
		if x.df[t] == 0 {
			termNum[t] = -1
			continue
		}
		termNum[t] = int32(len(df))
		df = append(df, x.df[t])
	}
	for w, t := range x.termIDs {
		if termNum[t] < 0 {
			delete(x.termIDs, w)
		} else {
			x.termIDs[w] = termNum[t]
		}
	}
	// The checks are of term ids, which changed.
	x.relay(termNum, renum, func(t int32, p posting) { docs[p.doc].check += termCheck(t, p.tf) })
	x.df, x.docs = df, docs
}

// pack moves the postings into one block after many were added (more than
// an eighth of them since it last ran, as when a wing is opened or mined),
// if lists have left more than an eighth of what they hold unused: append's
// spare capacity, and the parts of an earlier block that lists grew out
// of. In the block each list gets room for a sixteenth more, so the few
// postings a re-mine adds fit in place rather than copying the long lists
// of common terms; one that outgrows its room is copied on its own, and
// the block is made again once the lists hold twice their size.
func (x *lexIndex) pack() {
	many := x.grown > x.size/8
	if many && x.held-x.size > x.size/8 || x.held > 2*x.size {
		block := make([]byte, 0, x.size+x.size/listRoom)
		for i := range x.lists {
			l := &x.lists[i]
			start := len(block)
			block = append(block, l.data...) // within capacity: earlier lists stay in place
			end := len(block)
			block = block[:end+len(l.data)/listRoom]
			l.data, l.packed = block[start:end:len(block)], true
		}
		x.held = cap(block)
	}
	if many {
		x.grown = 0
		if cap(x.docs)-len(x.docs) > len(x.docs)/8 {
			x.docs = slices.Clone(x.docs)
		}
		if cap(x.notes)-len(x.notes) > len(x.notes)/8 {
			x.notes = slices.Clone(x.notes)
		}
	}
}

// listRoom is the share of its length a packed list gets to grow into.
const listRoom = 16

// relay encodes the posting lists anew into one block, term t as term
// termNum[t] and doc d as doc docNum[d], each dropped where that is -1.
// Each posting kept is passed to kept.
func (x *lexIndex) relay(termNum, docNum []int32, kept func(t int32, p posting)) {
	block := make([]byte, 0, x.size) // renumbering never lengthens a list
	var lists []postingList
	var ends []int
	for t := range x.lists {
		nt := termNum[t]
		if nt < 0 {
			continue
		}
		last := int32(-1)
		for p := range x.postings(int32(t)) {
			if p.doc = docNum[p.doc]; p.doc < 0 {
				continue
			}
			block = encodePosting(block, p.doc-last, p.tf)
			last = p.doc
			kept(nt, p)
		}
		lists = append(lists, postingList{last: last, packed: true})
		ends = append(ends, len(block))
	}
	if cap(block)-len(block) > len(block)/8 {
		block = slices.Clone(block)
	}
	start := 0
	for i, end := range ends {
		lists[i].data = block[start:end:end]
		start = end
	}
	x.lists, x.size, x.held, x.grown = lists, len(block), cap(block), 0
}

// lexTerms splits text into index terms (words.AppendTerms).
func lexTerms(text string) []string { return words.AppendTerms(nil, text) }
