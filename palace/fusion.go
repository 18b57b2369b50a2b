package palace

import (
	"container/heap"
	"context"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"unique"

	"github.com/memminer/memminer/memory/govern"
)

// How Search ranks notes.
//
// A wing is scored by up to four retrievers ("channels"), each over every
// note of the wing:
//
//   - BM25 of the note;
//   - BM25 of the note's window: the note with the notes just before and
//     after it in the same file and section (same heading path), as if they
//     were one text in which the neighbours' words count half
//     (neighbourWeight). A fact is often spread over neighbouring bullets
//     or turns ("We went camping." / "Where?" / "Lake Tahoe, last week."),
//     and the window finds the note whose neighbours hold the rest of the
//     query; weighting the neighbours less keeps a note that matches by
//     itself ahead of the neighbours that match only through it;
//   - cosine similarity of the note's vector to the query's;
//   - the same similarity averaged over the window, neighbours again
//     weighted half.
//
// Each channel's scores are standardised over every note of the searched
// wings together (z-score: minus the mean, divided by the standard
// deviation; a note without a lexical match scores zero before that), and a
// note's fused score is the sum of its z-scores (CombSUM). Standardising
// makes the channels comparable without weights tuned to a data set, and
// it keeps how far ahead a note is: when BM25 finds one note far ahead of
// the rest, its z-score is large and it wins even if the vectors are
// lukewarm. Reciprocal rank fusion throws that away, and on LoCoMo it loses
// to BM25 alone. Pooling the wings keeps scores of a small wing and a large
// one comparable.
//
// With vectors, the BM25 channels of a wing are weighted by lexicalTrust:
// how much of the query the best BM25 note explains. When BM25 matches only
// stray words of a paraphrase, the vectors decide.
//
// Because windows overlap, the neighbours of a strong note also score well.
// When the results are picked, a note next to an already picked one (same
// file and section) is demoted by adjacencyPenalty per channel, so the
// results cover more places instead of repeating one passage.
// BENCHMARKS.md has the measurements behind these choices.

// adjacencyPenalty is what a result loses, per channel in use, for being
// the neighbour of a better result: a quarter of a standard deviation.
const adjacencyPenalty = 0.25

// neighbourWeight is how much a neighbour counts in a note's window.
const neighbourWeight = 0.5

// wingView is what a search needs of a wing besides its indexes, by BM25
// document number: each note's neighbours, its place in file order and its
// vector. Building it walks every note and reads the vectors from the
// wing's chromem-go collection, so a wing keeps its view until one of its
// notes changes (see wing.invalidate).
type wingView struct {
	// By document number; -1 where there is none (and for removed notes).
	prev, next []int32
	// rank is the note's place in file order: by source path, then line.
	rank []int32
	// vecs are the notes' vectors as the wing's chromem-go collection holds
	// them (see wing.vectors).
	vecs [][]float32
	// notes are the notes themselves; marked are the documents of notes
	// with a status search treats apart (see Filters.priors).
	notes  []*storedNote
	marked []int32
	// fz is the frozen wing the view reads in place, notes then nil.
	fz *frozenWing
}

// noteAt returns the note of document d (made of the frozen wing's
// section for a frozen view, which fails if that is damaged).
func (v *wingView) noteAt(d int32) (*storedNote, error) {
	if v.fz != nil {
		return v.fz.note(d)
	}
	return v.notes[d], nil
}

// statusAt returns the status of the note of document d if search treats
// it apart (approved, superseded, unapproved), else "" (see statusCode).
func (v *wingView) statusAt(d int32) govern.Status {
	if v.fz != nil {
		return statusOf(v.fz.status[d])
	}
	return statusOf(statusCode(v.notes[d].gov.Status))
}

// govAt returns the governance of the note of document d; for a frozen
// view the caller has loaded its tables.
func (v *wingView) govAt(d int32) *govern.Note {
	if v.fz != nil {
		return v.fz.govs[v.fz.govIdx[d]]
	}
	return v.notes[d].gov
}

// pathAt returns the source path of the note of document d.
func (v *wingView) pathAt(d int32) string {
	if v.fz != nil {
		return v.fz.places[v.fz.placeIdx[d]].Value().source
	}
	return v.notes[d].path()
}

// viewOf returns w's view, building it after a change. The caller holds
// the palace's read lock, so no writer runs; concurrent searches may build
// the same view twice, and either copy serves.
func viewOf(ctx context.Context, w *wing) (*wingView, error) {
	if v := w.view.Load(); v != nil {
		return v, nil
	}
	vecs, err := w.vectors(ctx)
	if err != nil {
		return nil, err
	}
	v := buildView(w, vecs)
	w.view.CompareAndSwap(nil, v)
	return v, nil
}

// buildView makes w's view; vecs are its vectors by note id.
func buildView(w *wing, vecs map[string][]float32) *wingView { return makeView(w, vecs, false) }

// makeView makes w's view, with only the notes' order and marks (prev,
// next, rank, marked) if orderOnly, which is what a wing file holds.
func makeView(w *wing, vecs map[string][]float32, orderOnly bool) *wingView {
	paths := make([]string, 0, len(w.sources))
	for p := range w.sources {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	x := w.lex
	n := len(x.docs)
	v := &wingView{prev: make([]int32, n), next: make([]int32, n), rank: make([]int32, n)}
	if !orderOnly {
		v.vecs, v.notes = make([][]float32, n), make([]*storedNote, n)
	}
	for i := range n {
		v.prev[i], v.next[i], v.rank[i] = -1, -1, -1
	}
	var rank int32
	for _, path := range paths {
		last, heading := int32(-1), unique.Make("")
		for _, id := range w.sources[path].NoteIDs {
			d, ok := x.byID[id]
			if !ok || x.notes[d] == nil || v.rank[d] >= 0 {
				continue
			}
			n := x.notes[d]
			v.rank[d] = rank
			rank++
			if !orderOnly {
				v.vecs[d], v.notes[d] = vecs[id], n
			}
			if st := n.gov.Status; st == govern.Approved || st == govern.Superseded || st == govern.Unapproved {
				v.marked = append(v.marked, d)
			}
			if last >= 0 && n.heading == heading {
				v.prev[d], v.next[last] = last, d
			}
			last, heading = d, n.heading
		}
	}
	return v
}

// note reports whether document d is a note of the view.
func (v *wingView) note(d int32) bool { return v.rank[d] >= 0 }

// channel is one retriever's scores over a wing's notes. A dense channel
// (the vectors') holds every note's score by document number; a sparse one
// (BM25's) only those of the notes it matched, docs, in increasing order,
// the rest scoring zero: a search of 100,000 notes allocated megabytes of
// zeros for them, which cost it two garbage collections. A channel that
// was not set means the retriever found nothing in the wing: every note
// scores zero.
type channel struct {
	vals []float64
	docs []int32 // nil for a dense channel
}

// denseChannel is the channel of every note's score, by document number.
func denseChannel(vals []float64) channel { return channel{vals: vals} }

// set reports whether the retriever found anything in the wing.
func (c channel) set() bool { return c.vals != nil }

// next returns document d's score, for a caller that asks for documents
// in increasing order: *i is where the last one was, 0 at first.
func (c channel) next(d int32, i *int) float64 {
	if c.docs == nil {
		return c.at(d)
	}
	for *i < len(c.docs) && c.docs[*i] < d {
		*i++
	}
	if *i < len(c.docs) && c.docs[*i] == d {
		return c.vals[*i]
	}
	return 0
}

// at returns document d's score.
func (c channel) at(d int32) float64 {
	if c.docs == nil {
		if c.vals == nil {
			return 0
		}
		return c.vals[d]
	}
	if i, ok := slices.BinarySearch(c.docs, d); ok {
		return c.vals[i]
	}
	return 0
}

// Channels, in the order wingScores holds them.
const (
	chanLexNote = iota
	chanLexWin
	chanVecNote
	chanVecWin
	numChannels
)

// wingScores is what the retrievers found in one wing.
type wingScores struct {
	w     *wing
	v     *wingView
	chans [numChannels]channel
	// matched lists the notes whose window holds a query term.
	matched []int32
	// found tells which query terms each note holds, as lexChannels saw
	// them in the postings, so that coverage need not split notes' texts
	// again (see queryTerms).
	found queryTerms
	// lexWeight scales the BM25 channels (see lexicalTrust).
	lexWeight float64
	// prior is added to a note's fused score, by document number; -Inf
	// leaves the note out (see filter.go). Nil adds nothing.
	prior []float64
}

// lexicalTrust is how much BM25's vote counts next to the vectors': the
// coverage of the query by its best note, the share of the query's weight
// (summed idf of its distinct terms, a term no note has counting as the
// rarest) that the note holds. A question that reuses the words of the
// answer ("When did Caroline go to the LGBTQ support group?") is mostly
// covered by one note and BM25 keeps its full say; a paraphrase ("can we
// publish at the end of the week?" for "No release on Fridays") matches
// stray words in unrelated notes, covers little, and the vectors decide.
func lexicalTrust(coverage float64) float64 {
	return max(0, min(1, coverage))
}

// moments accumulates the mean and spread of one channel over every note
// of the searched wings.
type moments struct {
	n, sum, sq float64
}

func (m *moments) add(c channel, notes int) {
	m.n += float64(notes)
	// A sparse channel's zeros add nothing, and its scores are in the
	// order of a dense one's: the sums are the same to the bit.
	for _, x := range c.vals {
		m.sum += x
		m.sq += x * x
	}
}

// z returns the mean and the standard deviation; sd is 0 when the channel
// cannot tell notes apart.
func (m moments) z() (mean, sd float64) {
	if m.n == 0 {
		return 0, 0
	}
	mean = m.sum / m.n
	sd = math.Sqrt(math.Max(0, m.sq/m.n-mean*mean))
	if sd < 1e-12 {
		sd = 0
	}
	return mean, sd
}

// lexChannels scores the wing's notes by BM25 of the note and of its
// window, and returns the notes whose window matched and the coverage of
// the query by the best note (see lexicalTrust). The channels are nil when
// no query term occurs in the wing.
func (ws *wingScores) lexChannels(terms []string) (coverage float64) {
	x, v := ws.w.lex, ws.v
	if x.live == 0 {
		return 0
	}
	live := float64(x.live)
	avg := float64(x.totalLen) / live
	if avg == 0 {
		avg = 1
	}
	// A window's length is its note's plus its neighbours' weighted; the
	// average is taken as if every note had two neighbours, which measured
	// as well as the exact figure.
	avgWin := (1 + 2*neighbourWeight) * avg
	length := func(d int32) float64 {
		if d < 0 {
			return 0
		}
		return float64(x.docs[d].length)
	}
	seen := map[string]bool{}
	idfs := map[int32]float64{}
	var total float64  // idf of every distinct query term, unknown ones as if in no note
	var inWing []int32 // the distinct query terms some note of the wing has, in query order
	for _, term := range terms {
		if seen[term] {
			continue
		}
		seen[term] = true
		t, df, idf := x.idf(term)
		total += idf
		if df > 0 {
			idfs[t] = idf
			inWing = append(inWing, t)
		}
	}
	if len(inWing) == 0 {
		return 0
	}
	// The scores are summed in arrays over every note, reused from search
	// to search, and kept of the matched notes alone (sparse).
	sc := getLexScratch(len(v.rank), len(inWing))
	defer lexScratches.Put(sc)
	note, win, tfWin := sc.note, sc.win, sc.tfWin
	touched, matched := sc.touched[:0], sc.matched[:0]
	ws.found = newQueryTerms(inWing, sc.found)
	for _, t := range inWing {
		idf, bit := idfs[t], ws.found.bit(t)
		add := func(d int32, f float64) {
			if d < 0 {
				return
			}
			if tfWin[d] == 0 {
				touched = append(touched, d)
			}
			tfWin[d] += f
		}
		for p := range x.postings(t) {
			d := p.doc
			if x.docs[d].dead() || !v.note(d) {
				continue
			}
			f := float64(p.tf)
			note[d] += bm25(idf, f, length(d), avg)
			ws.found.set(d, bit)
			add(d, f)
			add(v.prev[d], neighbourWeight*f)
			add(v.next[d], neighbourWeight*f)
		}
		for _, d := range touched {
			l := length(d) + neighbourWeight*(length(v.prev[d])+length(v.next[d]))
			if win[d] == 0 {
				matched = append(matched, d)
			}
			win[d] += bm25(idf, tfWin[d], l, avgWin)
			tfWin[d] = 0
		}
		touched = touched[:0]
	}
	sc.touched, sc.matched = touched, matched
	docs, noteKept, winKept := sc.keep(matched, &ws.found)
	ws.matched = docs
	ws.chans[chanLexNote], ws.chans[chanLexWin] = channel{vals: noteKept, docs: docs}, channel{vals: winKept, docs: docs}
	kept, best := ws.chans[chanLexNote], -1
	for i, s := range kept.vals {
		if s > 0 && (best < 0 || s > kept.vals[best] || (s == kept.vals[best] && v.rank[kept.docs[i]] < v.rank[kept.docs[best]])) {
			best = i
		}
	}
	if best < 0 {
		return 0 // matches only in notes outside the view (cannot happen when the view is current)
	}
	var got float64
	for t := range ws.found.inRow(best) {
		got += idfs[t]
	}
	return got / total
}

// lexScratch holds the arrays over every note of a wing that lexChannels
// sums scores in, all zero between uses.
type lexScratch struct {
	note, win, tfWin []float64
	found            []byte
	// touched and matched are lists of documents, reused.
	touched, matched []int32
}

var lexScratches = sync.Pool{New: func() any { return new(lexScratch) }}

// getLexScratch returns a scratch for notes documents and terms distinct
// query terms.
func getLexScratch(notes, terms int) *lexScratch {
	sc := lexScratches.Get().(*lexScratch)
	grow := func(a []float64) []float64 {
		if cap(a) < notes {
			return make([]float64, notes)
		}
		return a[:notes]
	}
	sc.note, sc.win, sc.tfWin = grow(sc.note), grow(sc.win), grow(sc.tfWin)
	if n := termsWidth(terms) * notes; cap(sc.found) < n {
		sc.found = make([]byte, n)
	} else {
		sc.found = sc.found[:n]
	}
	return sc
}

// keep returns the matched documents sorted, a copy, with their note and
// window scores; makes found's table theirs alone;
// and zeroes what they used of the scratch. The order of matched does not
// matter to its users, and a search's results are the same either way.
func (sc *lexScratch) keep(matched []int32, found *queryTerms) (docs []int32, note, win []float64) {
	// Never nil, even when nothing matched: a nil docs is a dense channel.
	docs = make([]int32, len(matched))
	copy(docs, matched)
	slices.Sort(docs)
	// One allocation for both channels' scores.
	vals := make([]float64, 2*len(docs))
	note, win = vals[:len(docs):len(docs)], vals[len(docs):]
	w := found.width
	bits := make([]byte, w*len(docs))
	for i, d := range docs {
		note[i], win[i] = sc.note[d], sc.win[d]
		sc.note[d], sc.win[d] = 0, 0
		copy(bits[i*w:(i+1)*w], found.bits[int(d)*w:])
		clear(found.bits[int(d)*w : int(d+1)*w])
	}
	found.bits, found.docs = bits, docs
	return docs, note, win
}

// idf returns term's id (when the index has it), its document frequency
// and its BM25 idf; a term no live note holds gets the idf of a term in no
// note, which is what relevance's coverage counts it as.
func (x *lexIndex) idf(term string) (t int32, df, idf float64) {
	t, ok := x.termID(term)
	if ok {
		df = float64(x.df[t])
	}
	live := float64(x.live)
	return t, df, math.Log(1 + (live-df+0.5)/(df+0.5))
}

func bm25(idf, tf, length, avg float64) float64 {
	return idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*length/avg))
}

// vecChannels scores the wing's notes by cosine similarity to qvec and by
// the weighted mean similarity over each note's window.
//
// Fusion needs every note's similarity (it standardises over all of them,
// and a window needs its neighbours'), so this scans the collection's
// vectors itself rather than asking chromem-go's QueryEmbedding: that
// computes the same similarities several times slower, and its top-k loses
// recall (BENCHMARKS.md, BenchmarkVectorChannel).
func (ws *wingScores) vecChannels(qvec []float32) {
	v := ws.v
	note := make([]float64, len(v.rank))
	workers := min(runtime.GOMAXPROCS(0), max(1, len(note)/2048))
	var wg sync.WaitGroup
	for k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := k * len(note) / workers; d < (k+1)*len(note)/workers; d++ {
				if vec := v.vecs[d]; len(vec) == len(qvec) {
					note[d] = float64(dot(qvec, vec))
				}
			}
		}()
	}
	wg.Wait()
	win := make([]float64, len(note))
	for d := range win {
		if !v.note(int32(d)) {
			continue
		}
		s, wt := note[d], 1.0
		for _, nb := range [2]int32{v.prev[d], v.next[d]} {
			if nb >= 0 {
				s += neighbourWeight * note[nb]
				wt += neighbourWeight
			}
		}
		win[d] = s / wt
	}
	ws.chans[chanVecNote], ws.chans[chanVecWin] = denseChannel(note), denseChannel(win)
}

func dot(a, b []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a) && i+4 <= len(b); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a) && i < len(b); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// candidate is a scored note of one wing.
type candidate struct {
	ws    *wingScores
	d     int32
	score float64
	// lead is the part of score an answering note gained (answerLead);
	// a hit's shown Score leaves it out.
	lead float64
}

// better orders candidates: higher score first, then by wing and file
// order (source path, then line), so results are deterministic.
func better(a, b *candidate) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.ws != b.ws {
		return a.ws.w.id < b.ws.w.id
	}
	return a.ws.v.rank[a.d] < b.ws.v.rank[b.d]
}

// candHeap is a min-heap (worst on top) that keeps the best candidates.
type candHeap []candidate

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return better(&h[j], &h[i]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *candHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// offer adds c if it is among the best keep seen so far.
func (h *candHeap) offer(c candidate, keep int) {
	if h.Len() < keep {
		heap.Push(h, c)
		return
	}
	if better(&c, &(*h)[0]) {
		(*h)[0] = c
		heap.Fix(h, 0)
	}
}

// channelStats returns each channel's mean and standard deviation over
// every note of the searched wings.
func channelStats(wings []*wingScores) (mean, sd [numChannels]float64) {
	for c := range numChannels {
		var m moments
		for _, ws := range wings {
			m.add(ws.chans[c], ws.w.lex.live)
		}
		mean[c], sd[c] = m.z()
	}
	return mean, sd
}

// fuse standardises the channels of the searched wings over all their
// notes together (so that scores of different wings stay comparable), sums
// them per note and returns the best keep notes. With vectors every note is
// a candidate; with BM25 alone, the notes whose window matched a query term.
func fuse(wings []*wingScores, keep int) []candidate {
	mean, sd := channelStats(wings)
	var h candHeap
	// Each wing's documents are scored in increasing order, so a sparse
	// channel is read with a cursor (next) rather than searched.
	var cur [numChannels]int
	score := func(ws *wingScores, d int32) {
		var s float64
		if ws.prior != nil {
			if math.IsInf(ws.prior[d], -1) {
				return // left out by the search's filters
			}
			s = ws.prior[d]
		}
		for c, ch := range ws.chans {
			if sd[c] == 0 {
				continue
			}
			z := (ch.next(d, &cur[c]) - mean[c]) / sd[c]
			if c == chanLexNote || c == chanLexWin {
				z *= ws.lexWeight
			}
			s += z
		}
		h.offer(candidate{ws: ws, d: d, score: s}, keep)
	}
	for _, ws := range wings {
		cur = [numChannels]int{}
		if !ws.chans[chanVecNote].set() {
			for _, d := range ws.matched { // sorted
				score(ws, d)
			}
			continue
		}
		for d := range int32(len(ws.v.rank)) {
			if ws.v.note(d) {
				score(ws, d)
			}
		}
	}
	return h
}

// pick returns up to n of cands, best first, demoting a candidate that
// neighbours an already picked one by penalty.
func pick(cands []candidate, n int, penalty float64) []candidate {
	sort.Slice(cands, func(i, j int) bool { return better(&cands[i], &cands[j]) })
	picked := make([]bool, len(cands))
	type key struct {
		ws *wingScores
		d  int32
	}
	taken := map[key]bool{}
	out := make([]candidate, 0, n)
	for len(out) < n {
		best := -1
		var bestC candidate
		for i := range cands {
			if picked[i] {
				continue
			}
			c := cands[i]
			v := c.ws.v
			demoted := (v.prev[c.d] >= 0 && taken[key{c.ws, v.prev[c.d]}]) || (v.next[c.d] >= 0 && taken[key{c.ws, v.next[c.d]}])
			if demoted {
				c.score -= penalty
			}
			if best < 0 || better(&c, &bestC) {
				best, bestC = i, c
			}
			// Later candidates score no higher and demotion only lowers
			// scores, so none after an undemoted one can beat the best.
			if !demoted {
				break
			}
		}
		if best < 0 {
			break
		}
		picked[best] = true
		taken[key{bestC.ws, bestC.d}] = true
		out = append(out, bestC)
	}
	return out
}
