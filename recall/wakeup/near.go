package wakeup

import (
	"math"
	"slices"

	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace"
)

// Similar returns the note of wing most like text by the digest's
// measure, if it is at least half related (minSimilar) or the same fact or
// a near-duplicate by that measure (the first in source order on a tie):
// the weighted Jaccard of their terms (idf over the wing and text), or,
// when vec is a vector of the wing's model, the calibrated cosine of their
// vectors; either way the two must share some of their rarer words
// (minSharedForVector). It is a resemblance, not
// identity: "db-2 is the primary" and "db-3 is the primary" are similar.
// Whether a note says the same fact is remember's rule (remember.SameFact),
// decided from the text. vec must be a vector of the wing's model
// (palace.ModelOf) or nil (lexical only). Superseded notes and notes whose
// ids are in except are not compared.
func Similar(p *palace.Palace, wing, text string, vec []float32, except ...string) (palace.Note, bool) {
	var info palace.WingInfo
	for _, w := range p.Wings() {
		if w.ID == wing {
			info = w
		}
	}
	if info.ID == "" {
		return palace.Note{}, false
	}
	voc := newVocab()
	var cands []*cand
	for _, n := range p.Notes(wing) {
		if slices.Contains(except, n.ID) || n.Governance.Status == govern.Superseded {
			continue
		}
		c := &cand{note: n, text: flatten(govern.WithoutAdded(n.Text))}
		if c.text == "" {
			continue
		}
		c.terms = voc.terms(c.text)
		c.vec = p.Vector(wing, n.ID)
		c.model = info.Model
		cands = append(cands, c)
	}
	if len(cands) == 0 {
		return palace.Note{}, false
	}
	probe := &cand{text: flatten(govern.WithoutAdded(text)), vec: unit(vec), model: info.Model}
	probe.terms = voc.terms(probe.text)
	r := &ranker{weights: voc.weights()}
	r.calibrate([]*wingData{{info: info, sample: evenSample(cands, sampleSize)}})
	var best *cand
	bestScore := 0.0
	for _, c := range cands {
		m := r.compare(probe, c)
		if m.shared < minSharedForVector {
			// A note it could replace is about the same thing: it shares
			// some of its rarer words. The built-in model puts notes of one
			// wing close whatever they say ("Never commit .env files" and
			// "The web app uses Vite").
			continue
		}
		score := m.related
		if m.duplicate || m.sameFact {
			score++
		}
		if score >= minSimilar && score > bestScore {
			best, bestScore = c, score
		}
	}
	if best == nil {
		return palace.Note{}, false
	}
	return best.note, true
}

// minSimilar is how related (on the digest's [0, 1] scale) a note must
// be to text for Similar to name it, unless the two are the same fact or
// near-duplicates by the digest's measure.
const minSimilar = 0.5

// unit returns v scaled to length 1 (the palace stores unit vectors), or
// nil for a zero or missing vector.
func unit(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return nil
	}
	out := make([]float32, len(v))
	n := float32(1 / math.Sqrt(sum))
	for i, x := range v {
		out[i] = x * n
	}
	return out
}
