package wakeup

import (
	"math"
	"slices"

	"github.com/memminer/memminer/palace"
)

// ranker holds the story's candidates with all their signals and picks
// them one by one, best first, penalising redundancy with what it picked.
type ranker struct {
	weights []float64 // idf of each term id
	// median is, per model, the median cosine of unrelated-looking pairs
	// (see calibrate).
	median map[string]float64
	wings  []*wingData
	pool   []*cand // story candidates
	// candidates counts the notes that could enter the story: the story
	// wing's, or every wing's without one (the pool is the best of them);
	// duplicates those left out as near-duplicates of a picked note.
	candidates, duplicates int
	red                    []float64 // highest relatedness to a picked note, per pool entry
	gone                   []bool    // picked or a near-duplicate of a picked note
}

// newRanker measures the pairwise signals. Comparisons are bounded: each
// wing keeps a pool of its best candidates by recency and markers, pinned
// ones first, poolTotal in all (at least minPool per wing); centrality
// compares a pool entry with an evenly spaced sample of its wing, and
// corroboration compares pool entries across wings. With poolTotal 320
// and sampleSize 128 that is at most ~41k comparisons for centrality and
// ~100k for corroboration, whatever the palace's size (until the wings
// outnumber poolTotal/minPool).
func newRanker(p *palace.Palace, wings []*wingData, story string) *ranker {
	r := &ranker{}
	per := poolTotal / max(1, len(wings))
	per = min(max(per, minPool), poolTotal)
	voc := newVocab()
	prepared := map[*cand]bool{}
	prepare := func(w *wingData, c *cand) {
		if prepared[c] {
			return
		}
		prepared[c] = true
		c.terms = voc.terms(c.text)
		c.vec = p.Vector(w.info.ID, c.note.ID)
		c.model = w.info.Model
	}
	for _, w := range wings {
		size := per
		if story != "" && w.info.ID == story {
			size = poolTotal
		}
		w.pool = slices.Clone(w.cands)
		slices.SortStableFunc(w.pool, func(a, b *cand) int {
			if better(a, b, a.pre, b.pre) {
				return -1
			}
			if better(b, a, b.pre, a.pre) {
				return 1
			}
			return 0
		})
		// Pinned notes sort first, so they are the last to be left out.
		w.pool = w.pool[:min(size, len(w.pool))]
		w.sample = evenSample(w.cands, sampleSize)
		for _, c := range w.pool {
			prepare(w, c)
		}
		for _, c := range w.sample {
			prepare(w, c)
		}
	}
	r.weights = voc.weights()
	r.calibrate(wings)

	for _, w := range wings {
		r.centrality(w)
	}
	r.wings = wings
	for _, w := range wings {
		if story != "" && w.info.ID != story {
			continue
		}
		r.candidates += len(w.cands)
		for _, c := range w.pool {
			c.wing = w
			// Corroboration is measured lazily, by next: until then the
			// base score assumes the most it could add.
			c.corr = 1
			c.base = c.score()
			r.pool = append(r.pool, c)
		}
	}
	r.red = make([]float64, len(r.pool))
	r.gone = make([]bool, len(r.pool))
	return r
}

// score is the candidate's base score: its weighted signals, penalised
// when stale.
func (c *cand) score() float64 {
	return (WeightRecency*c.rec + WeightMarkers*c.mark + WeightCentrality*c.central + WeightCorroboration*c.corr) * staleFactor(c.stale)
}

// evenSample picks up to n entries spread evenly over s, keeping order.
func evenSample(s []*cand, n int) []*cand {
	if len(s) <= n {
		return s
	}
	out := make([]*cand, n)
	for i := range out {
		out[i] = s[i*len(s)/n]
	}
	return out
}

// match is what comparing two candidates tells.
type match struct {
	related   float64 // in [0, 1]
	sameFact  bool
	duplicate bool
	// shared is the weighted Jaccard of the two notes' terms.
	shared float64
}

// minSharedForVector is the weighted Jaccard two notes need before their
// vectors alone may call them the same fact or near-duplicates.
const minSharedForVector = 0.15

// compare measures two candidates both ways it can: the weighted Jaccard
// of their terms always, and the cosine of their vectors when both have
// vectors of the same model. They are related as much as the more
// generous measure says, and the same fact or near-duplicates if either
// measure says so: wording that is nearly identical is a duplicate whatever
// a model makes of it, and a paraphrase is one when the model sees it and
// the two share some words (minSharedForVector).
func (r *ranker) compare(a, b *cand) match {
	lex := weightedJaccard(a.terms, b.terms, r.weights)
	m := match{
		shared:    lex,
		related:   lexicalThresholds.related(lex),
		sameFact:  lex >= lexicalThresholds.sameFact,
		duplicate: lex >= lexicalThresholds.duplicate,
	}
	if a.vec != nil && b.vec != nil && len(a.vec) == len(b.vec) && a.model == b.model {
		med := r.median[a.model]
		cos := (dot(a.vec, b.vec) - med) / (1 - med)
		m.related = math.Max(m.related, vectorThresholds.related(cos))
		// Notes shaped alike ("X runs on Y", "X runs on Z") can be close
		// vectors; the same fact also shares some of its rarer words.
		if lex >= minSharedForVector {
			m.sameFact = m.sameFact || cos >= vectorThresholds.sameFact
			m.duplicate = m.duplicate || cos >= vectorThresholds.duplicate
		}
	}
	return m
}

// calibrationNotes bounds the notes per model whose pairwise cosines
// calibrate (at most n(n-1)/2 = 4,560 comparisons).
const calibrationNotes = 96

// calibrate measures, for each model, the median cosine between the notes
// of the wings' samples. Models differ widely in what an unrelated pair
// scores (about 0.54 for the built-in model, near 0 for others), so
// cosines are rescaled to (cos - median) / (1 - median) before the vector
// thresholds apply: 0 is a typical pair, 1 the same direction.
func (r *ranker) calibrate(wings []*wingData) {
	byModel := map[string][]*cand{}
	var models []string
	for _, w := range wings {
		for _, c := range w.sample {
			if c.vec == nil {
				continue
			}
			if _, ok := byModel[c.model]; !ok {
				models = append(models, c.model)
			}
			byModel[c.model] = append(byModel[c.model], c)
		}
	}
	r.median = map[string]float64{}
	for _, m := range models {
		cs := evenSample(byModel[m], calibrationNotes)
		var cos []float64
		for i := range cs {
			for j := i + 1; j < len(cs); j++ {
				if len(cs[i].vec) == len(cs[j].vec) {
					cos = append(cos, dot(cs[i].vec, cs[j].vec))
				}
			}
		}
		if len(cos) == 0 {
			continue
		}
		slices.Sort(cos)
		// A median pulled up by a few related notes only makes the
		// thresholds stricter; it is capped so that 1 - median stays sane.
		r.median[m] = min(max(cos[len(cos)/2], 0), 0.9)
	}
}

// centrality sets each pool entry's centrality: its mean relatedness to
// the wing's sample, relative to the wing's most central entry.
func (r *ranker) centrality(w *wingData) {
	if len(w.cands) < 3 {
		return
	}
	top := 0.0
	for _, c := range w.pool {
		sum, n := 0.0, 0
		for _, s := range w.sample {
			if s == c {
				continue
			}
			sum += r.compare(c, s).related
			n++
		}
		if n > 0 {
			c.central = sum / float64(n)
		}
		top = math.Max(top, c.central)
	}
	top = math.Max(top, minCentralTop)
	for _, c := range w.pool {
		c.central /= top
	}
}

// corroboration counts the other wings whose pool states the same fact as
// c; one wing gives 0.5, two 0.75, k wings 1-2^-k.
func (r *ranker) corroboration(c *cand, own *wingData, wings []*wingData) {
	c.also = c.also[:0]
	for _, w := range wings {
		if w == own {
			continue
		}
		for _, o := range w.pool {
			if r.compare(c, o).sameFact {
				c.also = append(c.also, w.info.ID)
				break
			}
		}
	}
	c.corr = 1 - math.Exp2(-float64(len(c.also)))
}

// next picks the best remaining candidate by its base score less the
// redundancy penalty, pinned ones first, and returns it with the score and
// redundancy it was picked with. Candidates that nearly duplicate a picked
// one are dropped. It returns nil when none is left.
//
// Corroboration, the costliest signal, is measured only for candidates that
// reach the top: a candidate not yet measured competes with the highest
// score it could have, and when it comes out best it is measured and the
// contest is run again. The pick is the one measuring every candidate first
// would make.
func (r *ranker) next() (*cand, float64, float64) {
	best := -1
	bestScore := 0.0
	for {
		best = -1
		for i, c := range r.pool {
			if r.gone[i] {
				continue
			}
			s := c.base - Redundancy*r.red[i]
			if best < 0 || better(c, r.pool[best], s, bestScore) {
				best, bestScore = i, s
			}
		}
		if best < 0 {
			return nil, 0, 0
		}
		c := r.pool[best]
		if c.corrDone {
			break
		}
		r.corroboration(c, c.wing, r.wings)
		c.corrDone = true
		c.base = c.score()
	}
	r.gone[best] = true
	pick := r.pool[best]
	for i, c := range r.pool {
		if r.gone[i] {
			continue
		}
		m := r.compare(pick, c)
		if m.duplicate {
			r.gone[i] = true
			r.duplicates++
			if c.note.Wing != pick.note.Wing && !slices.Contains(pick.also, c.note.Wing) {
				pick.also = append(pick.also, c.note.Wing)
				slices.Sort(pick.also)
			}
			continue
		}
		r.red[i] = math.Max(r.red[i], m.related)
	}
	return pick, bestScore, r.red[best]
}
