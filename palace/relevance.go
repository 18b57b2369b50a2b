package palace

import (
	"iter"
	"math"
	"math/bits"
	"slices"
)

// Lexical coverage, one of the pieces of evidence relevance is decided
// from (evidence.go): how much of the query a note holds, the share of the
// query's weight (summed idf of its distinct terms over the searched notes,
// a term no note has counting as the rarest) found in the note, a term
// found only in a neighbour of the note (its window, see fusion.go)
// counting neighbourWeight, unless the search leaves that neighbour out;
// and the same share of each coherent part of the query.

// coverage is the share of the query's weight that document d holds,
// counting a term found only in its neighbours neighbourWeight.
func (ws *wingScores) coverage(q *queryWeights, d int32) float64 {
	whole, _, _, _ := ws.coverages(q, d)
	return whole
}

// coverages returns the share of the query's weight that document d holds
// (as coverage), and the best share of one of the query's coherent parts
// (see evidence.go) it holds, with that part's number (-1 for none); own
// is the larger of the two counting only the note's own words, not its
// neighbours'.
func (ws *wingScores) coverages(q *queryWeights, d int32) (whole, part float64, which int, own float64) {
	which = -1
	if q.total == 0 {
		return 0, 0, -1, 0
	}
	v := ws.v
	// By part, the whole query last; the note's own terms and those only
	// in its window apart, summed in the order coverage always used.
	n := len(q.parts) + 1
	got, extra := make([]float64, n), make([]float64, n)
	add := func(sums []float64, t int32, w float64) {
		sums[n-1] += w
		if k, ok := q.part[t]; ok {
			sums[k] += w
		}
	}
	for t := range ws.found.of(d) {
		add(got, t, q.idf[t])
	}
	// Terms only in the window: the neighbours' terms not in the note.
	for _, nb := range [2]int32{v.prev[d], v.next[d]} {
		// A neighbour the filters leave out lends no relevance: a note is
		// not relevant for what a superseded note beside it says.
		if nb < 0 || ws.prior != nil && math.IsInf(ws.prior[nb], -1) {
			continue
		}
		for t := range ws.found.of(nb) {
			if w := q.idf[t]; w > 0 && !ws.found.has(d, t) && !q.counted(t) {
				add(extra, t, w)
			}
		}
	}
	q.reset()
	own = min(1, got[n-1]/q.total)
	for k, w := range q.parts {
		own = max(own, min(1, got[k]/w))
	}
	whole = min(1, (got[n-1]+neighbourWeight*extra[n-1])/q.total)
	for k, w := range q.parts {
		if c := min(1, (got[k]+neighbourWeight*extra[k])/w); c > part {
			part, which = c, k
		}
	}
	return whole, part, which, own
}

// queryTerms tells which of a query's terms each note of a wing holds: a
// bit per term and note, set from the terms' postings. A note's terms are
// not kept by the index (see lexIndex), and splitting the texts of the
// notes relevance scores again took a quarter of a search's time.
type queryTerms struct {
	ids []int32 // the query's terms the wing has, in increasing order
	// bits are by note, then by term's place in ids, width bytes a note:
	// one for a query of up to eight distinct terms, which most are.
	width int
	bits  []byte
	// docs, when set, are the notes bits holds, in increasing order;
	// the others hold none of the terms. Else bits holds every note.
	docs []int32
}

// newQueryTerms makes the table for the distinct terms ids over the
// documents bits has room for, all zero, none of them set.
func newQueryTerms(ids []int32, bits []byte) queryTerms {
	ids = slices.Sorted(slices.Values(ids))
	return queryTerms{ids: ids, width: termsWidth(len(ids)), bits: bits}
}

// termsWidth is the bytes a note takes in the table of terms distinct
// terms.
func termsWidth(terms int) int { return (terms + 7) / 8 }

// row returns document d's place in bits, false if it holds no term.
func (f *queryTerms) row(d int32) (int, bool) {
	if f.docs == nil {
		return int(d), true
	}
	return slices.BinarySearch(f.docs, d)
}

// bit is term t's place in the table; t is one of its terms.
func (f *queryTerms) bit(t int32) int {
	i, _ := slices.BinarySearch(f.ids, t)
	return i
}

// set records that document d holds the term at place bit, in a table of
// every note (before lexScratch.keep).
func (f *queryTerms) set(d int32, bit int) {
	f.bits[int(d)*f.width+bit/8] |= 1 << (bit % 8)
}

// has reports whether document d holds term t.
func (f *queryTerms) has(d, t int32) bool {
	r, ok := f.row(d)
	if !ok {
		return false
	}
	i, ok := slices.BinarySearch(f.ids, t)
	return ok && f.bits[r*f.width+i/8]&(1<<(i%8)) != 0
}

// of yields the query's terms that document d holds, in increasing order
// (the order sums over them are taken in, for the same scores each time).
func (f *queryTerms) of(d int32) iter.Seq[int32] {
	r, ok := f.row(d)
	if !ok {
		return func(func(int32) bool) {}
	}
	return f.inRow(r)
}

// inRow yields the terms of the table's r-th note (of its docs, when it
// has them), as of does.
func (f *queryTerms) inRow(r int) iter.Seq[int32] {
	return func(yield func(int32) bool) {
		for w := range f.width {
			word := f.bits[r*f.width+w]
			for word != 0 {
				b := bits.TrailingZeros8(word)
				word &= word - 1
				if !yield(f.ids[w*8+b]) {
					return
				}
			}
		}
	}
}

// queryWeights are the weights of the query's terms in one wing: their
// idf over every searched note (see evidence.go), by the wing's term ids.
type queryWeights struct {
	idf   map[int32]float64
	total float64
	// part maps a term to its coherent part of the query, parts are the
	// parts' weights (evidence.go).
	part  map[int32]int
	parts []float64
	seen  map[int32]bool
}

func (q *queryWeights) counted(t int32) bool {
	if q.seen[t] {
		return true
	}
	q.seen[t] = true
	return false
}

func (q *queryWeights) reset() { clear(q.seen) }

// docs returns the document numbers of the view's notes.
func (v *wingView) docs() []int32 {
	out := make([]int32, 0, len(v.rank))
	for d := range v.rank {
		if v.note(int32(d)) {
			out = append(out, int32(d))
		}
	}
	return out
}
