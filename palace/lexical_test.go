package palace

import (
	"math"
	"sort"
)

// scored is a note id with a score, higher is better.
type scored struct {
	id    string
	score float64
}

// search scores the index's live notes by plain BM25 for query and returns
// the best k, ties by id. Search itself scores through fusion.go; this
// reads the index directly, to check its postings, counts and lengths.
func (x *lexIndex) search(query string, k int) []scored {
	if x.live == 0 || k <= 0 {
		return nil
	}
	n := float64(x.live)
	avg := float64(x.totalLen) / n
	if avg == 0 {
		avg = 1
	}
	acc := map[int32]float64{}
	seen := map[int32]bool{}
	for _, w := range lexTerms(query) {
		t, ok := x.termIDs[w]
		if !ok || seen[t] || x.df[t] == 0 {
			continue
		}
		seen[t] = true
		df := float64(x.df[t])
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range x.postings[t] {
			if d := &x.docs[p.doc]; !d.dead {
				acc[p.doc] += bm25(idf, float64(p.tf), float64(d.length), avg)
			}
		}
	}
	out := make([]scored, 0, len(acc))
	for doc, s := range acc {
		out = append(out, scored{x.docs[doc].id, s})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id < out[j].id
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}
