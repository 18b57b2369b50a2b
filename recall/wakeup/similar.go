package wakeup

import (
	"math"
	"slices"

	"github.com/memminer/memminer/internal/words"
)

// thresholds say, for one way of comparing notes, when two notes are
// related (a ramp from lo to hi), state the same fact, or are near-duplicates.
type thresholds struct {
	relatedLo, relatedHi float64
	sameFact             float64
	duplicate            float64
}

var (
	// Weighted Jaccard of stemmed terms (idf weights). Short notes on one topic share few
	// terms, so the related ramp starts low.
	lexicalThresholds = thresholds{relatedLo: 0.05, relatedHi: 0.35, sameFact: 0.5, duplicate: 0.55}
	// Cosine of unit vectors from a sentence-embedding model, rescaled by
	// the model's median cosine (ranker.calibrate): 0 is a typical pair of
	// notes, 1 the same direction. For the built-in model (median ≈ 0.54)
	// these are cosines of 0.63, 0.82, 0.86 and 0.91.
	vectorThresholds = thresholds{relatedLo: 0.2, relatedHi: 0.6, sameFact: 0.7, duplicate: 0.8}
)

// related maps a similarity onto [0, 1]: 0 below relatedLo, 1 above relatedHi.
func (t thresholds) related(s float64) float64 {
	switch {
	case s <= t.relatedLo:
		return 0
	case s >= t.relatedHi:
		return 1
	}
	return (s - t.relatedLo) / (t.relatedHi - t.relatedLo)
}

// vocab interns terms and keeps their document frequencies, so a note's
// terms are a sorted slice of small ints and overlap is a merge.
type vocab struct {
	ids  map[string]int32
	df   []int32
	docs int
}

func newVocab() *vocab {
	return &vocab{ids: map[string]int32{}}
}

// terms returns the sorted distinct term ids of text and counts them
// towards document frequency.
func (v *vocab) terms(text string) []int32 {
	var out []int32
	for _, w := range words.Split(text) {
		if words.IsStopword(w) {
			continue
		}
		s := words.Term(w)
		id, ok := v.ids[s]
		if !ok {
			id = int32(len(v.df))
			v.ids[s] = id
			v.df = append(v.df, 0)
		}
		out = append(out, id)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	for _, id := range out {
		v.df[id]++
	}
	v.docs++
	return out
}

// weights returns each term's inverse document frequency, so that shared
// rare terms ("pgbouncer") count for more than shared common ones ("use").
func (v *vocab) weights() []float64 {
	w := make([]float64, len(v.df))
	n := float64(v.docs)
	for i, df := range v.df {
		w[i] = math.Log(1 + n/float64(df))
	}
	return w
}

// weightedJaccard is Σ idf over shared terms divided by Σ idf over all
// terms of either note.
func weightedJaccard(a, b []int32, w []float64) float64 {
	var inter, union float64
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter += w[a[i]]
			union += w[a[i]]
			i++
			j++
		case a[i] < b[j]:
			union += w[a[i]]
			i++
		default:
			union += w[b[j]]
			j++
		}
	}
	for ; i < len(a); i++ {
		union += w[a[i]]
	}
	for ; j < len(b); j++ {
		union += w[b[j]]
	}
	if union == 0 {
		return 0
	}
	return inter / union
}

// dot is the cosine of two unit vectors of the same length.
func dot(a, b []float32) float64 {
	var s0, s1, s2, s3 float32
	n := len(a) &^ 3
	for i := 0; i < n; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for i := n; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return float64(s0 + s1 + s2 + s3)
}
