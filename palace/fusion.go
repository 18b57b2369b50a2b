package palace

import (
	"container/heap"
	"math"
	"runtime"
	"sort"
	"sync"
	"weak"
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
// Each channel's scores are standardised over the wing (z-score: minus the
// mean, divided by the standard deviation, notes without a lexical match
// scoring zero), and a note's fused score is the sum of its z-scores
// (CombSUM). Standardising makes the channels comparable without weights
// tuned to a data set, and it adapts to the query: when BM25 finds one note
// far ahead of the rest, that note's z-score is large and it wins even if
// the vectors are lukewarm; when BM25 finds nothing its channels are zero
// and the vectors decide. Reciprocal rank fusion, by contrast, throws away
// how far ahead a note is, and on LoCoMo it loses to BM25 alone.
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

// sourceOrder is one source's notes in file order.
type sourceOrder struct {
	ids []string
	pos map[string]int
	// cont[i] reports that note i continues the section of note i-1
	// (same heading path), so the two are neighbours.
	cont []bool
}

// orderCache holds the order of each source, keyed weakly by its *Source:
// the palace replaces a Source (never edits its NoteIDs) whenever the file
// is mined again, so an entry is valid as long as its key is alive, and it
// is dropped when the Source is collected.
var orderCache = struct {
	sync.Mutex
	m map[weak.Pointer[Source]]*sourceOrder
}{m: map[weak.Pointer[Source]]*sourceOrder{}}

// orderOf returns s's notes in file order; notes must be the wing's notes.
func orderOf(s *Source, notes map[string]*Note) *sourceOrder {
	key := weak.Make(s)
	orderCache.Lock()
	o := orderCache.m[key]
	orderCache.Unlock()
	if o != nil {
		return o
	}
	o = &sourceOrder{pos: make(map[string]int, len(s.NoteIDs))}
	prev := ""
	for _, id := range s.NoteIDs {
		n, ok := notes[id]
		if !ok {
			continue
		}
		o.pos[id] = len(o.ids)
		o.cont = append(o.cont, len(o.ids) > 0 && n.Heading == prev)
		o.ids = append(o.ids, id)
		prev = n.Heading
	}
	orderCache.Lock()
	if old, ok := orderCache.m[key]; ok {
		o = old
	} else {
		orderCache.m[key] = o
		runtime.AddCleanup(s, func(k weak.Pointer[Source]) {
			orderCache.Lock()
			delete(orderCache.m, k)
			orderCache.Unlock()
		}, key)
	}
	orderCache.Unlock()
	return o
}

// wingSpace numbers a wing's notes 0…n-1 in file order, source after
// source (by path), so neighbours are adjacent numbers.
type wingSpace struct {
	w      *wing
	orders []*sourceOrder
	bases  []int // bases[i] is the number of orders[i]'s first note
	index  map[string]int
	n      int
}

func newWingSpace(w *wing) *wingSpace {
	paths := make([]string, 0, len(w.sources))
	for p := range w.sources {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	sp := &wingSpace{w: w, index: make(map[string]int, len(paths))}
	for _, p := range paths {
		o := orderOf(w.sources[p], w.notes)
		sp.index[p] = len(sp.orders)
		sp.orders = append(sp.orders, o)
		sp.bases = append(sp.bases, sp.n)
		sp.n += len(o.ids)
	}
	return sp
}

// at returns the id of note g.
func (sp *wingSpace) at(g int) string {
	i := sort.Search(len(sp.bases), func(i int) bool { return sp.bases[i] > g }) - 1
	return sp.orders[i].ids[g-sp.bases[i]]
}

// number returns the number of the note with id, or -1.
func (sp *wingSpace) number(id string) int {
	n, ok := sp.w.notes[id]
	if !ok {
		return -1
	}
	i, ok := sp.index[n.Source]
	if !ok {
		return -1
	}
	pos, ok := sp.orders[i].pos[id]
	if !ok {
		return -1
	}
	return sp.bases[i] + pos
}

// hasPrev reports whether note g has a neighbour before it.
func (sp *wingSpace) hasPrev(g int) bool {
	if g <= 0 || g >= sp.n {
		return false
	}
	i := sort.Search(len(sp.bases), func(i int) bool { return sp.bases[i] > g }) - 1
	return sp.orders[i].cont[g-sp.bases[i]]
}

// neighbours returns the numbers of g's neighbours: none, one or two.
func (sp *wingSpace) neighbours(g int, buf []int) []int {
	buf = buf[:0]
	if sp.hasPrev(g) {
		buf = append(buf, g-1)
	}
	if sp.hasPrev(g + 1) {
		buf = append(buf, g+1)
	}
	return buf
}

// channel is one retriever's scores over a wing's notes, by note number.
type channel []float64

// standardize turns scores into z-scores over all n notes; a channel with
// no spread becomes all zeros (it cannot tell notes apart).
func (c channel) standardize() {
	if len(c) == 0 {
		return
	}
	var sum, sq float64
	for _, x := range c {
		sum += x
		sq += x * x
	}
	n := float64(len(c))
	mean := sum / n
	sd := math.Sqrt(math.Max(0, sq/n-mean*mean))
	if sd < 1e-12 {
		clear(c)
		return
	}
	for i, x := range c {
		c[i] = (x - mean) / sd
	}
}

// lexChannels scores every note by BM25 of the note and of its window.
// It returns nil channels when no query term occurs in the wing.
func (sp *wingSpace) lexChannels(terms []string) (note, win channel) {
	x := sp.w.lex
	if x.live == 0 || sp.n == 0 {
		return nil, nil
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
	length := map[int]int{} // note number -> BM25 length, filled on demand
	lengthOf := func(g int) int {
		if l, ok := length[g]; ok {
			return l
		}
		l := 0
		if d, ok := x.byID[sp.at(g)]; ok {
			l = x.docs[d].length
		}
		length[g] = l
		return l
	}
	var buf []int
	seen := map[int32]bool{}
	for _, term := range terms {
		t, ok := x.termIDs[term]
		if !ok || seen[t] || x.df[t] == 0 {
			continue
		}
		seen[t] = true
		if note == nil {
			note, win = make(channel, sp.n), make(channel, sp.n)
		}
		df := float64(x.df[t])
		idf := math.Log(1 + (live-df+0.5)/(df+0.5))
		tfWin := map[int]float64{}
		for _, p := range x.postings[t] {
			d := &x.docs[p.doc]
			if d.dead {
				continue
			}
			g := sp.number(d.id)
			if g < 0 {
				continue
			}
			length[g] = d.length
			f := float64(p.tf)
			note[g] += bm25(idf, f, float64(d.length), avg)
			tfWin[g] += f
			for _, h := range sp.neighbours(g, buf) {
				tfWin[h] += neighbourWeight * f
			}
		}
		for g, f := range tfWin {
			l := float64(lengthOf(g))
			for _, h := range sp.neighbours(g, buf) {
				l += neighbourWeight * float64(lengthOf(h))
			}
			win[g] += bm25(idf, f, l, avgWin)
		}
	}
	return note, win
}

func bm25(idf, tf, length, avg float64) float64 {
	return idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*length/avg))
}

// vecChannels scores every note by cosine similarity to qvec (vectors are
// normalised) and by the weighted mean similarity over its window.
func (sp *wingSpace) vecChannels(qvec []float32) (note, win channel) {
	note = make(channel, sp.n)
	workers := min(runtime.GOMAXPROCS(0), max(1, sp.n/2048))
	var wg sync.WaitGroup
	for k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := k*sp.n/workers, (k+1)*sp.n/workers
			for g := lo; g < hi; g++ {
				if v, ok := sp.w.vecs[sp.at(g)]; ok && len(v) == len(qvec) {
					note[g] = float64(dot(qvec, v))
				}
			}
		}()
	}
	wg.Wait()
	win = make(channel, sp.n)
	var buf []int
	for g := range win {
		s, w := note[g], 1.0
		for _, h := range sp.neighbours(g, buf) {
			s += neighbourWeight * note[h]
			w += neighbourWeight
		}
		win[g] = s / w
	}
	return note, win
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
	sp    *wingSpace
	g     int
	score float64
}

// better orders candidates: higher score first, then by wing and file
// order (source path, then line), so results are deterministic.
func better(a, b *candidate) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.sp != b.sp {
		return a.sp.w.id < b.sp.w.id
	}
	return a.g < b.g
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

// fuse standardises a wing's channels, sums them and offers the notes to
// h. With BM25 alone only the notes whose window matched a query term are
// offered (the others were not found at all); with vectors, every note.
func (sp *wingSpace) fuse(lexNote, lexWin, vecNote, vecWin channel, h *candHeap, keep int) {
	var found []bool
	if vecNote == nil {
		if lexWin == nil {
			return
		}
		found = make([]bool, sp.n)
		for g, x := range lexWin {
			found[g] = x > 0
		}
	}
	chans := make([]channel, 0, 4)
	for _, c := range []channel{lexNote, lexWin, vecNote, vecWin} {
		if c != nil {
			c.standardize()
			chans = append(chans, c)
		}
	}
	for g := range sp.n {
		if found != nil && !found[g] {
			continue
		}
		var s float64
		for _, c := range chans {
			s += c[g]
		}
		h.offer(candidate{sp: sp, g: g, score: s}, keep)
	}
}

// pick returns up to n of cands, best first, demoting a candidate that
// neighbours an already picked one by penalty.
func pick(cands []candidate, n int, penalty float64) []candidate {
	sort.Slice(cands, func(i, j int) bool { return better(&cands[i], &cands[j]) })
	picked := make([]bool, len(cands))
	type key struct {
		sp *wingSpace
		g  int
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
			demoted := (c.sp.hasPrev(c.g) && taken[key{c.sp, c.g - 1}]) || (c.sp.hasPrev(c.g+1) && taken[key{c.sp, c.g + 1}])
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
		taken[key{bestC.sp, bestC.g}] = true
		out = append(out, bestC)
	}
	return out
}
