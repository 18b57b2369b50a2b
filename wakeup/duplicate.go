package wakeup

import (
	"math"
	"slices"

	"github.com/memminer/memminer/govern"
	"github.com/memminer/memminer/palace"
)

// Duplicate returns the note of wing that text nearly duplicates, by the
// rule Build uses to keep near-duplicates out of a digest: the weighted
// Jaccard of their terms (idf over the wing and text), or, when vec is a
// vector of the wing's model and the two share some words, the calibrated
// cosine of their vectors. vec must be a vector of the wing's model
// (palace.ModelOf) or nil (lexical only). Superseded notes
// are not compared: restating a superseded fact is news. The first
// duplicate in source order is returned; notes whose ids are in except
// are not compared.
func Duplicate(p *palace.Palace, wing, text string, vec []float32, except ...string) (palace.Note, bool) {
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
		c := &cand{note: n, text: flatten(govern.WithoutInboxMarkers(n.Text))}
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
	for _, c := range cands {
		if r.compare(probe, c).duplicate {
			return c.note, true
		}
	}
	return palace.Note{}, false
}

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
