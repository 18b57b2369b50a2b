package palace

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// sortTerms sorts as slices.SortFunc does, whatever run of sorted terms
// they start with.
func TestSortTermsIsASort(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 9))
	for range 2000 {
		n := r.IntN(60)
		var terms []termRef
		for len(terms) < n {
			terms = append(terms, termRef{text: fmt.Sprintf("t%03d", r.IntN(400))})
		}
		// Distinct texts, as a wing's terms are; a sorted run of any
		// length first, then any order.
		terms = slices.CompactFunc(slices.SortedFunc(slices.Values(terms), func(a, b termRef) int { return strings.Compare(a.text, b.text) }),
			func(a, b termRef) bool { return a.text == b.text })
		run := r.IntN(len(terms) + 1)
		r.Shuffle(len(terms)-run, func(i, j int) { terms[run+i], terms[run+j] = terms[run+j], terms[run+i] })
		if r.IntN(4) == 0 {
			r.Shuffle(len(terms), func(i, j int) { terms[i], terms[j] = terms[j], terms[i] })
		}
		want := slices.Clone(terms)
		slices.SortFunc(want, func(a, b termRef) int { return strings.Compare(a.text, b.text) })
		got := slices.Clone(terms)
		sortTerms(got)
		if !slices.Equal(texts(got), texts(want)) {
			t.Fatalf("sortTerms(%v) = %v, want %v", texts(terms), texts(got), texts(want))
		}
	}
}

func texts(terms []termRef) []string {
	out := make([]string, len(terms))
	for i, t := range terms {
		out[i] = t.text
	}
	return out
}
