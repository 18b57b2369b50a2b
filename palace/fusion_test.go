package palace

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// tableEmbedder gives each text a fixed vector: the vector of the first
// key (in sorted order) the text contains, or fallback. It lets a test say
// exactly which notes the "model" finds similar to a query.
type tableEmbedder struct {
	vecs     map[string][]float32
	fallback []float32
}

func (e tableEmbedder) Model() string { return "test-table" }

func (e tableEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	keys := make([]string, 0, len(e.vecs))
	for k := range e.vecs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = slices.Clone(e.fallback)
		for _, k := range keys {
			if strings.Contains(t, k) {
				out[i] = slices.Clone(e.vecs[k])
				break
			}
		}
	}
	return out, nil
}

// testView is a wing and its view, with lookups by note id.
type testView struct {
	w *wing
	v *wingView
}

// viewFor applies notes as the source path of wing and returns its view.
func viewFor(t *testing.T, p *Palace, wing, path string, notes []Note) testView {
	t.Helper()
	if _, err := p.ApplySource(context.Background(), wing, Source{Path: path}, notes); err != nil {
		t.Fatal(err)
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	w := p.wings[wing]
	v, err := viewOf(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return testView{w, v}
}

func (tv testView) doc(id string) int32 { return tv.w.lex.byID[id] }

func (tv testView) id(d int32) string { return tv.v.notes[d].id }

// order lists the note ids in file order.
func (tv testView) order() []string {
	ids := make([]string, tv.w.lex.live)
	for d, r := range tv.v.rank {
		if r >= 0 {
			ids[r] = tv.id(int32(d))
		}
	}
	return ids
}

func (tv testView) neighbours(id string) []string {
	var out []string
	d := tv.doc(id)
	for _, nb := range []int32{tv.v.prev[d], tv.v.next[d]} {
		if nb >= 0 {
			out = append(out, tv.id(nb))
		}
	}
	return out
}

func TestNeighboursStayInSectionAndFile(t *testing.T) {
	p := openT(t, filepath.Join(t.TempDir(), "p"), nil, false)
	ctx := context.Background()
	// Applied out of path order: file order goes by path, then line.
	if _, err := p.ApplySource(ctx, "w", Source{Path: "/b.md"}, []Note{
		note("b1", "B", "bee one", 1),
		note("b2", "B", "bee two", 2),
	}); err != nil {
		t.Fatal(err)
	}
	tv := viewFor(t, p, "w", "/a.md", []Note{
		note("a1", "A", "one", 3),
		note("a2", "A", "two", 4),
		note("a3", "A", "three", 5),
		note("a4", "A > Sub", "four", 7),
		note("a5", "A", "five", 9), // same heading again, but after another section
		note("a6", "A", "six", 10),
	})
	want := map[string][]string{
		"a1": {"a2"}, "a2": {"a1", "a3"}, "a3": {"a2"}, "a4": nil, "a5": {"a6"}, "a6": {"a5"},
		"b1": {"b2"}, "b2": {"b1"},
	}
	if got := tv.order(); !slices.Equal(got, []string{"a1", "a2", "a3", "a4", "a5", "a6", "b1", "b2"}) {
		t.Fatalf("order = %q", got)
	}
	for id, nbs := range want {
		if got := tv.neighbours(id); !slices.Equal(got, nbs) {
			t.Errorf("neighbours of %s = %q, want %q", id, got, nbs)
		}
	}
}

func TestViewFollowsChanges(t *testing.T) {
	p := openT(t, filepath.Join(t.TempDir(), "p"), embedtestHashing(), false)
	tv := viewFor(t, p, "w", "/a.md", []Note{note("x", "", "x", 1), note("y", "", "y", 2)})
	if got := tv.order(); !slices.Equal(got, []string{"x", "y"}) {
		t.Fatalf("order = %q", got)
	}
	// Searching again without a change keeps the view.
	p.mu.RLock()
	again, err := viewOf(context.Background(), p.wings["w"])
	p.mu.RUnlock()
	if err != nil || again != tv.v {
		t.Errorf("view rebuilt without a change (err %v)", err)
	}
	// The file is mined again with a note inserted at the top.
	tv = viewFor(t, p, "w", "/a.md", []Note{note("z", "", "z", 1), note("x", "", "x", 2), note("y", "", "y", 3)})
	if got := tv.order(); !slices.Equal(got, []string{"z", "x", "y"}) {
		t.Fatalf("order after re-mine = %q", got)
	}
	if got := tv.neighbours("x"); !slices.Equal(got, []string{"z", "y"}) {
		t.Errorf("neighbours of x after re-mine = %q", got)
	}
	if v, want := tv.v.vecs[tv.doc("z")], p.Vector("w", "z"); v == nil || !slices.Equal(v, want) {
		t.Errorf("new note's vector in the view = %v, the collection has %v", v, want)
	}
	// A file removed takes its notes out.
	if _, err := p.ApplySource(context.Background(), "w", Source{Path: "/b.md"}, []Note{note("b", "", "b", 1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.RemoveSource("w", "/a.md"); err != nil {
		t.Fatal(err)
	}
	p.mu.RLock()
	v, err := viewOf(context.Background(), p.wings["w"])
	p.mu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	tv = testView{p.wings["w"], v}
	if got := tv.order(); !slices.Equal(got, []string{"b"}) {
		t.Errorf("order after removing a file = %q", got)
	}
}

// bruteWindowBM25 scores a window as one text built from the notes' terms,
// neighbours' term counts and lengths weighted by neighbourWeight, straight
// from the definition.
func bruteWindowBM25(texts []string, neighbours [][]int, query string) []float64 {
	terms := make([][]string, len(texts))
	total := 0
	df := map[string]int{}
	for i, t := range texts {
		terms[i] = lexTerms(t)
		total += len(terms[i])
		seen := map[string]bool{}
		for _, w := range terms[i] {
			if !seen[w] {
				df[w]++
				seen[w] = true
			}
		}
	}
	n := float64(len(texts))
	avgWin := (1 + 2*neighbourWeight) * float64(total) / n
	count := func(i int, w string) float64 {
		c := 0.0
		for _, x := range terms[i] {
			if x == w {
				c++
			}
		}
		return c
	}
	out := make([]float64, len(texts))
	seen := map[string]bool{}
	for _, w := range lexTerms(query) {
		if seen[w] || df[w] == 0 {
			continue
		}
		seen[w] = true
		idf := math.Log(1 + (n-float64(df[w])+0.5)/(float64(df[w])+0.5))
		for i := range texts {
			tf, l := count(i, w), float64(len(terms[i]))
			for _, j := range neighbours[i] {
				tf += neighbourWeight * count(j, w)
				l += neighbourWeight * float64(len(terms[j]))
			}
			if tf > 0 {
				out[i] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*l/avgWin))
			}
		}
	}
	return out
}

func TestLexChannels(t *testing.T) {
	notes := []Note{
		note("n1", "Trip", "We went camping last weekend.", 1),
		note("n2", "Trip", "Where did you go?", 2),
		note("n3", "Trip", "Lake Tahoe, camping by the lake with the kids.", 3),
		note("n4", "Work", "The release branch freezes on Thursday.", 5),
		note("n5", "Work", "Camping gear budget approved.", 6),
	}
	p := openT(t, filepath.Join(t.TempDir(), "p"), nil, false)
	// Re-applying with an edit leaves a removed document in the index.
	viewFor(t, p, "w", "/m.md", append(slices.Clone(notes), note("n6", "Work", "camping stove", 7)))
	tv := viewFor(t, p, "w", "/m.md", notes)
	ids := tv.order()
	texts := make([]string, len(ids))
	nbs := make([][]int, len(ids))
	for i, id := range ids {
		texts[i] = tv.w.note(id).embedText()
		for _, nb := range tv.neighbours(id) {
			nbs[i] = append(nbs[i], slices.Index(ids, nb))
		}
	}
	tests := []struct {
		query    string
		coverage float64 // -1: not checked
	}{
		{"camping at lake tahoe", 1},
		{"where did we go camping", -1},
		{"release freeze thursday", -1},
		{"camping skiing", -1},
		{"nothing matches zzz", 0},
	}
	for _, tt := range tests {
		ws := &wingScores{w: tv.w, v: tv.v}
		coverage := ws.lexChannels(lexTerms(tt.query))
		want := bruteWindowBM25(texts, nbs, tt.query)
		note, win := ws.chans[chanLexNote], ws.chans[chanLexWin]
		if !note.set() {
			if slices.ContainsFunc(want, func(x float64) bool { return x != 0 }) {
				t.Errorf("%q: no lexical channels, brute force scores %v", tt.query, want)
			}
		} else {
			var matched []string
			for i, id := range ids {
				if got := win.at(tv.doc(id)); math.Abs(got-want[i]) > 1e-9 {
					t.Errorf("%q: window score of %s = %v, want %v", tt.query, id, got, want[i])
				}
				if want[i] > 0 {
					matched = append(matched, id)
				}
			}
			var gotMatched []string
			for _, d := range ws.matched {
				gotMatched = append(gotMatched, tv.id(d))
			}
			slices.Sort(gotMatched)
			if !slices.Equal(gotMatched, matched) {
				t.Errorf("%q: matched %q, want %q", tt.query, gotMatched, matched)
			}
			// The note channel is the index's own BM25.
			for _, s := range tv.w.lex.search(tt.query, 10) {
				if d := tv.doc(s.id); math.Abs(note.at(d)-s.score) > 1e-9 {
					t.Errorf("%q: note score of %s = %v, index says %v", tt.query, s.id, note.at(d), s.score)
				}
			}
		}
		if tt.coverage >= 0 && math.Abs(coverage-tt.coverage) > 1e-9 {
			t.Errorf("%q: coverage %v, want %v", tt.query, coverage, tt.coverage)
		}
		if coverage < 0 || coverage > 1 {
			t.Errorf("%q: coverage %v outside [0, 1]", tt.query, coverage)
		}
	}
	// "skiing" is in no note: it counts against coverage as the rarest term.
	ws := &wingScores{w: tv.w, v: tv.v}
	if c := ws.lexChannels(lexTerms("camping skiing")); !(c > 0 && c < 0.5) {
		t.Errorf("coverage of half-unknown query = %v, want in (0, 0.5)", c)
	}
}

func TestMoments(t *testing.T) {
	tests := []struct {
		name     string
		chans    []channel
		n        []int
		mean, sd float64
	}{
		{"dense", []channel{denseChannel([]float64{1, 2, 3, 4})}, []int{4}, 2.5, math.Sqrt(1.25)},
		{"unset channel counts as zeros", []channel{denseChannel([]float64{2, 2}), {}}, []int{2, 2}, 1, 1},
		{"sparse counts the rest as zeros", []channel{{vals: []float64{4}, docs: []int32{2}}}, []int{4}, 1, math.Sqrt(3)},
		{"no spread", []channel{denseChannel([]float64{3, 3, 3})}, []int{3}, 3, 0},
		{"empty", nil, nil, 0, 0},
	}
	for _, tt := range tests {
		var m moments
		for i, c := range tt.chans {
			m.add(c, tt.n[i])
		}
		mean, sd := m.z()
		if math.Abs(mean-tt.mean) > 1e-12 || math.Abs(sd-tt.sd) > 1e-12 {
			t.Errorf("%s: mean %v sd %v, want %v %v", tt.name, mean, sd, tt.mean, tt.sd)
		}
	}
}

// A sparse channel read with a cursor gives what its lookup does.
func TestChannelNext(t *testing.T) {
	c := channel{vals: []float64{1, 2, 3}, docs: []int32{2, 5, 9}}
	i := 0
	for _, d := range []int32{0, 2, 3, 5, 9, 10} { // increasing, some skipped
		if got, want := c.next(d, &i), c.at(d); got != want {
			t.Errorf("next(%d) = %v, at says %v", d, got, want)
		}
	}
	dense := denseChannel([]float64{4, 5})
	if j := 0; dense.next(1, &j) != 5 {
		t.Error("dense next")
	}
}

func TestPickDemotesNeighbours(t *testing.T) {
	p := openT(t, filepath.Join(t.TempDir(), "p"), nil, false)
	tv := viewFor(t, p, "w", "/m.md", []Note{
		note("a", "S", "a", 1), note("b", "S", "b", 2), note("c", "S", "c", 3),
		note("d", "T", "d", 5), note("e", "T", "e", 6),
	})
	ws := &wingScores{w: tv.w, v: tv.v}
	c := func(id string, s float64) candidate { return candidate{ws: ws, d: tv.doc(id), score: s} }
	tests := []struct {
		name    string
		cands   []candidate
		n       int
		penalty float64
		want    []string
	}{
		{"no penalty keeps score order", []candidate{c("a", 3), c("b", 2.9), c("d", 1)}, 3, 0, []string{"a", "b", "d"}},
		{"neighbour demoted below a far note", []candidate{c("a", 3), c("b", 2.9), c("d", 2)}, 3, 1, []string{"a", "d", "b"}},
		{"demotion too small to matter", []candidate{c("a", 3), c("b", 2.9), c("d", 2)}, 3, 0.5, []string{"a", "b", "d"}},
		// c and d are next to each other in the file but in different sections.
		{"no demotion across sections", []candidate{c("c", 3), c("d", 2.9), c("a", 2.5)}, 3, 1, []string{"c", "d", "a"}},
		{"cut at n", []candidate{c("a", 3), c("c", 2), c("e", 1)}, 2, 1, []string{"a", "c"}},
		{"ties go by file order", []candidate{c("e", 1), c("d", 1)}, 2, 0, []string{"d", "e"}},
		{"fewer candidates than n", []candidate{c("b", 1)}, 5, 1, []string{"b"}},
	}
	for _, tt := range tests {
		var got []string
		for _, x := range pick(slices.Clone(tt.cands), tt.n, tt.penalty) {
			got = append(got, tv.id(x.d))
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: picked %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCandHeapKeepsBest(t *testing.T) {
	p := openT(t, filepath.Join(t.TempDir(), "p"), nil, false)
	var notes []Note
	for i := range 20 {
		notes = append(notes, note(string(rune('a'+i)), "", "x", i+1))
	}
	tv := viewFor(t, p, "w", "/m.md", notes)
	ws := &wingScores{w: tv.w, v: tv.v}
	var h candHeap
	for d := range int32(20) {
		h.offer(candidate{ws: ws, d: d, score: float64((d * 7) % 20)}, 5)
	}
	var scores []float64
	for _, c := range h {
		scores = append(scores, c.score)
	}
	sort.Float64s(scores)
	if !slices.Equal(scores, []float64{15, 16, 17, 18, 19}) {
		t.Fatalf("kept %v, want the five best", scores)
	}
}

// TestSearchFusion checks how the retrievers are combined, on a wing whose
// "model" is a table: each case says which note the vectors prefer.
func TestSearchFusion(t *testing.T) {
	emb := tableEmbedder{
		vecs: map[string][]float32{
			// notes
			"Fridays":  {1, 0, 0, 0},
			"publish":  {0, 1, 0, 0},
			"Postgres": {0, 0, 1, 0},
			"staging":  {0.6, 0, 0, 0.8},
			// queries
			"end of the week":       {0.82, 0.57, 0, 0},
			"primary database":      {0.1, 0, 0.9, 0},
			"database wiped Sunday": {0, 0, 0.8, 0.6},
		},
		fallback: []float32{0, 0, 0, 1},
	}
	notes := []Note{
		note("tag", "Release", "Tag as vMAJOR.MINOR.PATCH and let CI publish.", 1),
		note("fri", "Release", "No release on Fridays.", 2),
		note("e2e", "Release", "Run the end-to-end suite; it takes 40 minutes at the end of the pipeline.", 3),
		note("pg", "Infra", "Production Postgres runs on db-2 since the migration.", 5),
		note("pool", "Infra", "Connection pooling goes through pgbouncer.", 6),
		note("wipe", "Infra", "The staging database is wiped every Sunday.", 7),
	}
	tests := []struct {
		name  string
		query string
		mode  Mode
		first string
	}{
		// BM25 matches stray words ("publish", "end") and covers a third
		// of the query; the vectors prefer the answer only moderately
		// (0.82 against 0.57 for the "publish" note), enough once BM25's
		// vote is scaled by its coverage, not without.
		{"paraphrase goes to the vectors", "can we publish at the end of the week?", Hybrid, "fri"},
		{"lexical alone takes the stray words", "can we publish at the end of the week?", LexicalOnly, "e2e"},
		// Every query word is in one note: BM25 wins though the vectors
		// lean elsewhere (Postgres 0.8, the note 0.48).
		{"covered query goes to BM25", "staging database wiped Sunday", Hybrid, "wipe"},
		{"vectors alone lean elsewhere", "staging database wiped Sunday", VectorOnly, "pg"},
		{"vectors alone", "which is the primary database?", VectorOnly, "pg"},
	}
	p := openT(t, filepath.Join(t.TempDir(), "p"), emb, false)
	if _, err := p.ApplySource(context.Background(), "w", Source{Path: "/m.md"}, notes); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		hits, err := p.Search(context.Background(), tt.query, SearchOptions{Results: 4, Mode: tt.mode})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if len(hits) == 0 || hits[0].ID != tt.first {
			var got []string
			for _, h := range hits {
				got = append(got, h.ID)
			}
			t.Errorf("%s: hits %q, want %s first", tt.name, got, tt.first)
			continue
		}
		if hits[0].Score != 1 {
			t.Errorf("%s: first hit scores %v, want 1", tt.name, hits[0].Score)
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score <= 0 || hits[i].Score > hits[i-1].Score {
				t.Errorf("%s: scores not in (0, 1] and falling: %v then %v", tt.name, hits[i-1].Score, hits[i].Score)
			}
		}
	}
}

func TestSearchOwnMatchBeatsNeighbours(t *testing.T) {
	// In a small section every note's window holds the matching note; the
	// note that matches by itself must still come first, in every mode.
	for _, mode := range []Mode{Hybrid, LexicalOnly} {
		p := openT(t, filepath.Join(t.TempDir(), "p"), nil, false)
		if _, err := p.ApplySource(context.Background(), "w", Source{Path: "/m.md"}, []Note{
			note("a", "", "alpha beta gamma", 1),
			note("b", "", "delta epsilon", 2),
			note("c", "", "zeta eta theta", 3),
		}); err != nil {
			t.Fatal(err)
		}
		hits, err := p.Search(context.Background(), "epsilon", SearchOptions{Results: 3, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 3 || hits[0].ID != "b" {
			t.Errorf("%s: hits %+v, want b first of 3 (the others through their window)", mode, hits)
		}
	}
}

func TestSearchAcrossWingsIsComparable(t *testing.T) {
	// A one-note wing must not win just because standardising over one
	// note would make anything look exceptional.
	p := openT(t, filepath.Join(t.TempDir(), "p"), nil, false)
	ctx := context.Background()
	if _, err := p.ApplySource(ctx, "big", Source{Path: "/big.md"}, []Note{
		note("hit", "", "pgbouncer runs in transaction mode", 1),
		note("x1", "", "the web bundle", 3),
		note("x2", "", "dark mode follows the OS", 5),
		note("x3", "", "fonts look blurry", 7),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ApplySource(ctx, "tiny", Source{Path: "/tiny.md"}, []Note{note("weak", "", "a mode of transport", 1)}); err != nil {
		t.Fatal(err)
	}
	hits, err := p.Search(ctx, "pgbouncer transaction mode", SearchOptions{Results: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].ID != "hit" {
		t.Fatalf("hits %+v, want the pgbouncer note first", hits)
	}
}

func TestVectorModeNeedsModel(t *testing.T) {
	p := openT(t, filepath.Join(t.TempDir(), "p"), nil, false)
	if _, err := p.ApplySource(context.Background(), "w", Source{Path: "/m.md"}, []Note{note("a", "", "alpha", 1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Search(context.Background(), "alpha", SearchOptions{Mode: VectorOnly}); err == nil {
		t.Fatal("vector search of a lexical palace did not fail")
	}
}

// textTerms returns the ids of the terms of document d's text, split
// again, in increasing order.
func textTerms(ws *wingScores, d int32) []int32 {
	var ids []int32
	for _, w := range lexTerms(ws.v.notes[d].embedText()) {
		if t, ok := ws.w.lex.termIDs[w]; ok {
			ids = append(ids, t)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// textCoverage is coverage as found from the texts of d and its
// neighbours rather than from the postings.
func textCoverage(ws *wingScores, q *queryWeights, d int32) float64 {
	v := ws.v
	if q.total == 0 {
		return 0
	}
	var got float64
	terms := textTerms(ws, d)
	for _, t := range terms {
		got += q.idf[t]
	}
	if got >= q.total {
		return 1
	}
	var extra float64
	counted := map[int32]bool{}
	for _, nb := range [2]int32{v.prev[d], v.next[d]} {
		if nb < 0 {
			continue
		}
		for _, t := range textTerms(ws, nb) {
			if w := q.idf[t]; w > 0 && !slices.Contains(terms, t) && !counted[t] {
				counted[t] = true
				extra += w
			}
		}
	}
	return min(1, (got+neighbourWeight*extra)/q.total)
}

// TestCoverageMatchesNoteTexts checks that the query terms search records
// from the postings give every note the coverage, bit for bit, that its
// text and its neighbours' do, also for a query of more than 64 terms.
func TestCoverageMatchesNoteTexts(t *testing.T) {
	p := hivePalace(t, 600, 3)
	var long []string
	for w := range p.wings["agent-000"].lex.termIDs {
		long = append(long, w)
	}
	slices.Sort(long)
	if len(long) < 70 {
		t.Fatalf("only %d terms in the wing", len(long))
	}
	queries := []string{
		"pgbouncer depends on vault after the incident review",
		"electron-vite staging-db port-5432",
		"nothing matches zzz",
		"redis qqq unknown",
		strings.Join(long[:70], " "),
	}
	for _, query := range queries {
		terms := lexTerms(query)
		for id, w := range p.wings {
			v, err := viewOf(context.Background(), w)
			if err != nil {
				t.Fatal(err)
			}
			ws := &wingScores{w: w, v: v}
			best := ws.lexChannels(terms)
			q := weightsOf(w.lex, terms)
			wantBest := 0.0
			if note := ws.chans[chanLexNote]; note.set() {
				top := int32(-1)
				for d := range int32(len(v.rank)) {
					s := note.at(d)
					if s > 0 && (top < 0 || s > note.at(top) || s == note.at(top) && v.rank[d] < v.rank[top]) {
						top = d
					}
				}
				for _, t := range textTerms(ws, top) {
					wantBest += q.idf[t]
				}
				wantBest /= q.total
			}
			if best != wantBest {
				t.Errorf("%q in %s: coverage of the best note %v, its text gives %v", query, id, best, wantBest)
			}
			for _, d := range v.docs() {
				if got, want := ws.coverage(q, d), textCoverage(ws, q, d); got != want {
					t.Errorf("%q in %s: coverage of %s = %v, its text gives %v", query, id, v.notes[d].id, got, want)
				}
			}
		}
	}
}

// weightsOf returns the idf of the query's distinct terms in wing x, and
// their total, a term the wing lacks counting as if in no note: the
// weights of a search of wing x alone.
func weightsOf(x *lexIndex, terms []string) *queryWeights {
	q := &queryWeights{idf: map[int32]float64{}, seen: map[int32]bool{}}
	seen := map[string]bool{}
	for _, term := range terms {
		if seen[term] {
			continue
		}
		seen[term] = true
		t, df, idf := x.idf(term)
		q.total += idf
		if df > 0 {
			q.idf[t] = idf
		}
	}
	return q
}
