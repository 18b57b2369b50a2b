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
// A nil channel means the retriever found nothing in the wing: every note
// scores zero.
type channel []float64

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
	sp    *wingSpace
	chans [numChannels]channel
	// lexWeight scales the BM25 channels (see lexicalTrust).
	lexWeight float64
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

func (m *moments) add(c channel, n int) {
	m.n += float64(n)
	for _, x := range c {
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

// lexChannels scores every note by BM25 of the note and of its window.
// It returns nil channels when no query term occurs in the wing.
func (sp *wingSpace) lexChannels(terms []string) (note, win channel, coverage float64) {
	x := sp.w.lex
	if x.live == 0 || sp.n == 0 {
		return nil, nil, 0
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
	seen := map[string]bool{}
	idfs := map[int32]float64{}
	var total float64 // idf of every distinct query term, unknown ones as if in no note
	for _, term := range terms {
		if seen[term] {
			continue
		}
		seen[term] = true
		t, ok := x.termIDs[term]
		df := 0.0
		if ok {
			df = float64(x.df[t])
		}
		idf := math.Log(1 + (live-df+0.5)/(df+0.5))
		total += idf
		if df == 0 {
			continue
		}
		idfs[t] = idf
		if note == nil {
			note, win = make(channel, sp.n), make(channel, sp.n)
		}
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
	if note == nil {
		return nil, nil, 0
	}
	best := 0
	for g, x := range note {
		if x > note[best] {
			best = g
		}
	}
	var got float64
	if d, ok := x.byID[sp.at(best)]; ok {
		for _, t := range x.docs[d].terms {
			got += idfs[t]
		}
	}
	return note, win, got / total
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

// fuse standardises the channels of the searched wings over all their
// notes together (so that scores of different wings stay comparable), sums
// them per note and returns the best keep notes. With vectors every note is
// a candidate; with BM25 alone, the notes whose window matched a query term.
func fuse(wings []wingScores, keep int) []candidate {
	var mean, sd [numChannels]float64
	for c := range numChannels {
		var m moments
		for _, ws := range wings {
			m.add(ws.chans[c], ws.sp.n)
		}
		mean[c], sd[c] = m.z()
	}
	var h candHeap
	for _, ws := range wings {
		vectors := ws.chans[chanVecNote] != nil
		if !vectors && ws.chans[chanLexWin] == nil {
			continue
		}
		for g := range ws.sp.n {
			if !vectors && ws.chans[chanLexWin][g] <= 0 {
				continue
			}
			var s float64
			for c, ch := range ws.chans {
				if sd[c] == 0 {
					continue
				}
				x := 0.0
				if ch != nil {
					x = ch[g]
				}
				z := (x - mean[c]) / sd[c]
				if c == chanLexNote || c == chanLexWin {
					z *= ws.lexWeight
				}
				s += z
			}
			h.offer(candidate{sp: ws.sp, g: g, score: s}, keep)
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
