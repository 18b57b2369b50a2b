package palace

import (
	"iter"
	"math"
	"math/bits"
	"slices"
)

// How Search tells how relevant a hit is, the same way for every query.
//
// A hit's Score is relative to the first hit, so it cannot say that nothing
// matched. Relevance is absolute, in [0, 1], from two measures that do not
// depend on the other notes' scores:
//
//   - lexical: how much of the query the note holds, the share of the
//     query's weight (summed idf of its distinct terms, a term no note has
//     counting as the rarest) found in the note, a term found only in a
//     neighbour of the note (its window, see fusion.go) counting
//     neighbourWeight, unless the search leaves that neighbour out;
//   - vector: the note's cosine to the query (negative counts as 0).
//
// A hit's relevance is the larger of the two. Rescaling the cosine by the
// query's or the wing's typical cosine, or by the note's own, separated
// unrelated queries from paraphrases worse on the built-in model; models
// differ in their typical cosine, so with another model the floor
// (SearchOptions.MinRelevance) may need to change. BENCHMARKS.md has the
// measurements behind the default floor.

// coverage is the share of the query's weight that document d holds,
// counting a term found only in its neighbours neighbourWeight.
func (ws *wingScores) coverage(q *queryWeights, d int32) float64 {
	if q.total == 0 {
		return 0
	}
	v := ws.v
	var got float64
	for t := range ws.found.of(d) {
		got += q.idf[t]
	}
	if got >= q.total {
		return 1
	}
	// Terms only in the window: the neighbours' terms not in the note.
	var extra float64
	for _, nb := range [2]int32{v.prev[d], v.next[d]} {
		// A neighbour the filters leave out lends no relevance: a note is
		// not relevant for what a superseded note beside it says.
		if nb < 0 || ws.prior != nil && math.IsInf(ws.prior[nb], -1) {
			continue
		}
		for t := range ws.found.of(nb) {
			if w := q.idf[t]; w > 0 && !ws.found.has(d, t) && !q.counted(t) {
				extra += w
			}
		}
	}
	q.reset()
	return min(1, (got+neighbourWeight*extra)/q.total)
}

// queryTerms tells which of a query's terms each note of a wing holds: a
// bit per term and note, set from the terms' postings. A note's terms are
// not kept by the index (see lexIndex), and splitting the texts of the
// notes relevance scores again took a quarter of a search's time.
type queryTerms struct {
	ids   []int32  // the query's terms the wing has, in increasing order
	words int      // uint64s per note
	bits  []uint64 // by note, then by term's place in ids
}

// newQueryTerms makes the table for the distinct terms ids over notes
// documents, none of them set.
func newQueryTerms(ids []int32, notes int) queryTerms {
	ids = slices.Sorted(slices.Values(ids))
	words := (len(ids) + 63) / 64
	return queryTerms{ids: ids, words: words, bits: make([]uint64, words*notes)}
}

// bit is term t's place in the table; t is one of its terms.
func (f *queryTerms) bit(t int32) int {
	i, _ := slices.BinarySearch(f.ids, t)
	return i
}

// set records that document d holds the term at place bit.
func (f *queryTerms) set(d int32, bit int) {
	f.bits[int(d)*f.words+bit/64] |= 1 << (bit % 64)
}

// has reports whether document d holds term t.
func (f *queryTerms) has(d, t int32) bool {
	i, ok := slices.BinarySearch(f.ids, t)
	return ok && f.bits[int(d)*f.words+i/64]&(1<<(i%64)) != 0
}

// of yields the query's terms that document d holds, in increasing order
// (the order sums over them are taken in, for the same scores each time).
func (f *queryTerms) of(d int32) iter.Seq[int32] {
	return func(yield func(int32) bool) {
		for w := range f.words {
			word := f.bits[int(d)*f.words+w]
			for word != 0 {
				b := bits.TrailingZeros64(word)
				word &= word - 1
				if !yield(f.ids[w*64+b]) {
					return
				}
			}
		}
	}
}

// queryWeights are the idf of the query's terms in one wing.
type queryWeights struct {
	idf   map[int32]float64
	total float64
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

// weightsOf returns the idf of the query's distinct terms in wing x, and
// their total, a term the wing lacks counting as if in no note.
func weightsOf(x *lexIndex, terms []string) *queryWeights {
	q := &queryWeights{idf: map[int32]float64{}, seen: map[int32]bool{}}
	seen := map[string]bool{}
	for _, term := range terms {
		if seen[term] {
			continue
		}
		seen[term] = true
		t, df, idf := x.idf(term)
		q.total += idf
		if df > 0 {
			q.idf[t] = idf
		}
	}
	return q
}

// relevance is the candidate's absolute relevance: the larger of its
// lexical coverage (when BM25 is in use) and its cosine.
func (c candidate) relevance(q *queryWeights, useLex bool) float64 {
	r := 0.0
	if useLex {
		r = c.ws.coverage(q, c.d)
	}
	if ch := c.ws.chans[chanVecNote]; ch != nil {
		r = max(r, min(1, ch[c.d]))
	}
	return r
}

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
