package palace

import (
	"slices"
	"testing"
)

// The table of a query's terms tells each note's terms, for queries of a
// byte a note and of more, before and after it is kept for the matched
// notes alone.
func TestQueryTermsTable(t *testing.T) {
	for _, terms := range []int{1, 8, 9, 20} {
		ids := make([]int32, terms)
		for i := range ids {
			ids[i] = int32(100 - 3*i) // not sorted: the table sorts them
		}
		const notes = 6
		sc := getLexScratch(notes, terms)
		q := newQueryTerms(ids, sc.found)
		holds := map[int32][]int32{1: {ids[0]}, 4: ids, 5: {ids[terms-1], ids[terms/2]}}
		for d, ts := range holds {
			for _, id := range ts {
				q.set(d, q.bit(id))
			}
		}
		check := func(when string) {
			for d := range int32(notes) {
				want := slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(holds[d])))))
				if got := slices.Collect(q.of(d)); !slices.Equal(got, want) {
					t.Errorf("%d terms, %s: note %d holds %v, want %v", terms, when, d, got, want)
				}
				for _, id := range ids {
					if q.has(d, id) != slices.Contains(want, id) {
						t.Errorf("%d terms, %s: note %d has %d: %v", terms, when, d, id, q.has(d, id))
					}
				}
			}
		}
		check("over every note")
		docs, _, _ := sc.keep([]int32{5, 1, 4}, &q)
		if !slices.Equal(docs, []int32{1, 4, 5}) {
			t.Errorf("kept docs %v", docs)
		}
		check("kept")
		if slices.ContainsFunc(sc.found, func(b byte) bool { return b != 0 }) {
			t.Errorf("%d terms: scratch not zeroed after keep", terms)
		}
		lexScratches.Put(sc)
	}
	// Nothing matched: the channels are sparse and empty, every note zero.
	sc := getLexScratch(3, 1)
	q := newQueryTerms([]int32{7}, sc.found)
	docs, note, _ := sc.keep(nil, &q)
	if ch := (channel{vals: note, docs: docs}); !ch.set() || ch.at(2) != 0 || slices.Collect(q.of(2)) != nil {
		t.Errorf("empty kept channel: set %v, at(2) %v", ch.set(), ch.at(2))
	}
	lexScratches.Put(sc)
}
