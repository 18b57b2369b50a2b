package palace

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memminer/memminer/internal/words"
	"github.com/memminer/memminer/memory/govern"
)

// Search errors callers tell apart.
var (
	// ErrEmpty means the palace has no notes to search.
	ErrEmpty = errors.New("palace is empty")
	// ErrUnknownWing means a requested wing does not exist.
	ErrUnknownWing = errors.New("unknown wing")
)

// DefaultResults is how many hits Search returns when not told.
const DefaultResults = 5

// SearchOptions narrow a search.
type SearchOptions struct {
	// Wings limits the search to these wings; empty means all.
	Wings []string
	// ExcludeWings leaves these wings out of the search; each must be a
	// wing of the palace. Leaving out every wing finds nothing.
	ExcludeWings []string
	// Results is the number of hits wanted; zero means DefaultResults.
	Results int
	// Mode picks the retrievers; the zero value is Hybrid.
	Mode Mode
	// Filters are the governance filters; the zero value leaves out
	// superseded notes only.
	Filters
	// MinRelevance drops hits whose Relevance is below it; zero keeps
	// every hit, those of a query naming an identifier no note has too.
	// DefaultMinRelevance is the floor the CLI uses.
	MinRelevance float64
	// Scope keeps the search inside the caller's domains (ScopeWings):
	// Wings must lie in it, and no Wings means the wings it sees.
	Scope DomainScope
	// Prompt asks the prompt hook's question rather than search's: does
	// the prompt need something from memory? Only notes that hold its
	// words (Evidence.Answers) are returned, at most PromptResults, and
	// most prompts get none.
	Prompt bool
}

// PromptResults is the most notes a Prompt search returns: an agent's
// prompt gets the few notes it needs, not a page of results.
const PromptResults = 3

// DefaultMinRelevance is the relevance below which search reports no
// match: lexical coverage or grounded cosine (evidence.go). BENCHMARKS.md,
// "Relevance", has the measurements it was chosen with.
const DefaultMinRelevance = 0.22

// Mode selects which retrievers a search uses.
type Mode int

// Search modes.
const (
	// Hybrid uses BM25 and, when the palace has an embedder, vectors.
	Hybrid Mode = iota
	// LexicalOnly uses BM25 alone.
	LexicalOnly
	// VectorOnly uses vector similarity alone; it needs an embedder.
	VectorOnly
)

// String returns the mode's name as flags spell it.
func (m Mode) String() string {
	switch m {
	case Hybrid:
		return "hybrid"
	case LexicalOnly:
		return "lexical"
	case VectorOnly:
		return "vector"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Hit is one search result.
type Hit struct {
	Note
	// Score is the hit's relevance relative to the first hit, in (0, 1]:
	// the first hit scores 1, and a hit's score falls by a factor e for
	// every standard deviation (averaged over the retrievers) its fused
	// score trails the first hit's by, never above the hit before it
	// (a note that answers ranks first whatever its fused score:
	// answerLead). See fusion.go.
	Score float64
	// Mtime is the source file's modification time when mined.
	Mtime time.Time
	// Relevance is absolute, in [0, 1], comparable across queries (see
	// evidence.go), unlike Score.
	Relevance float64
	// Stale tells that the note may be out of date, and StaleReason why
	// (govern.Note.Staleness at the search's Now).
	Stale       bool
	StaleReason string
	// Evidence is what Relevance was decided from; set by Explain only.
	Evidence *Evidence
}

// Search finds the notes most relevant to query: BM25 over the notes and
// over each note with its neighbours, and when the palace has an embedder
// vector similarity too, the retrievers' scores standardised per wing and
// summed (see fusion.go for how and why).
func (p *Palace) Search(ctx context.Context, query string, opts SearchOptions) ([]Hit, error) {
	hits, _, err := p.search(ctx, query, opts, false)
	return hits, err
}

// Explain searches as Search does and says why: each hit carries its
// Evidence, and the explanation holds the query's evidence and the best
// candidates the relevance floor dropped.
func (p *Palace) Explain(ctx context.Context, query string, opts SearchOptions) ([]Hit, *Explanation, error) {
	return p.search(ctx, query, opts, true)
}

func (p *Palace) search(ctx context.Context, query string, opts SearchOptions, explain bool) ([]Hit, *Explanation, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, nil, errors.New("empty query")
	}
	wings, err := p.searchWings(opts.Wings, opts.ExcludeWings, opts.Scope)
	if err != nil {
		return nil, nil, err
	}
	r, err := p.newSearchRun(ctx, query, opts, explain)
	if err != nil {
		return nil, nil, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	r.joinCompounds(query, wings)
	scores, err := r.score(ctx, wings)
	if err != nil {
		return nil, nil, err
	}
	dec := newDecider(scores, r.toks, r.wordVecs, r.terms, r.useLex, p.emb)
	kept, missed, evidence := r.decide(fuse(scores, r.keep), dec)
	picked := pick(kept, r.n, adjacencyPenalty*float64(r.channels))
	picked = coverParts(picked, kept, evidence, len(dec.parts))
	hits, err := r.hits(picked, evidence)
	if err != nil || !explain {
		return hits, nil, err
	}
	ex := dec.explanation(opts.MinRelevance)
	ex.Prompt = opts.Prompt
	if ex.NearMisses, err = r.hits(pick(missed, min(nearMisses, len(missed)), 0), evidence); err != nil {
		return nil, nil, err
	}
	return hits, ex, nil
}

// searchRun is one search: the query as the retrievers take it and how
// many notes it looks at.
type searchRun struct {
	p       *Palace
	opts    SearchOptions
	explain bool
	// n is the number of hits wanted; keep how many of the fused ranking's
	// best notes relevance judges.
	n, keep int
	toks    []queryToken
	terms   []string
	// qvec is the query's vector and wordVecs its words' (nil without
	// vectors).
	qvec     []float32
	wordVecs [][]float32
	useLex   bool
	useVec   bool
	channels int
	filters  Filters
}

// newSearchRun prepares a search of query: its terms and, with vectors,
// its vector and its words' vectors.
func (p *Palace) newSearchRun(ctx context.Context, query string, opts SearchOptions, explain bool) (*searchRun, error) {
	if opts.Mode == VectorOnly && p.emb == nil {
		return nil, errors.New("vector search needs an embedding model; this palace is lexical")
	}
	r := &searchRun{p: p, opts: opts, explain: explain, n: opts.Results, toks: queryTokens(query), terms: lexTerms(query), filters: opts.Filters}
	if r.n <= 0 {
		r.n = DefaultResults
	}
	if opts.Prompt {
		r.n = min(r.n, PromptResults)
	}
	// Demoting a neighbour can promote at most two later notes per pick,
	// so the best 3n+3 notes hold the n results; a note that answers
	// (answerLead) can rank far above its place in the fused ranking, so
	// relevance looks further down it.
	r.keep = max(3*r.n+3, 3*DefaultResults+3)
	if r.filters.Now.IsZero() {
		r.filters.Now = time.Now()
	}
	if p.emb != nil && opts.Mode != LexicalOnly {
		vs, err := p.emb.Embed(ctx, []string{query})
		if err != nil {
			return nil, fmt.Errorf("embed query: %w", err)
		}
		if len(vs) != 1 || !normalize(vs[0]) {
			return nil, errors.New("embed query: embedder returned no usable vector")
		}
		r.qvec = vs[0]
		if r.wordVecs, err = p.wordVectors(ctx, r.toks); err != nil {
			return nil, err
		}
	}
	r.useLex, r.useVec = opts.Mode != VectorOnly, r.qvec != nil
	if r.useLex {
		r.channels += 2
	}
	if r.useVec {
		r.channels += 2
	}
	return r, nil
}

// score runs the retrievers over each of wings that has notes. The caller
// holds the palace's read lock.
func (r *searchRun) score(ctx context.Context, wings []string) ([]*wingScores, error) {
	var scores []*wingScores
	for _, id := range wings {
		w := r.p.wings[id]
		if w == nil || w.noteCount() == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ws, err := r.scoreWing(ctx, w)
		if err != nil {
			return nil, err
		}
		scores = append(scores, ws)
	}
	return scores, nil
}

// scoreWing runs the retrievers over w's notes.
func (r *searchRun) scoreWing(ctx context.Context, w *wing) (*wingScores, error) {
	hasVecs := w.vectorCount() > 0
	if r.useVec && hasVecs && w.dim != len(r.qvec) {
		return nil, fmt.Errorf("%w: wing %s has %d-dimension vectors, query has %d", ErrModelMismatch, w.id, w.dim, len(r.qvec))
	}
	v, err := viewOf(ctx, w)
	if err != nil {
		return nil, err
	}
	// Filters that narrow read every note's governance; otherwise only
	// hits need the tables.
	if v.fz != nil && r.filters.narrows() {
		if err := v.fz.loadTables(); err != nil {
			return nil, fmt.Errorf("wing %s: %w", w.id, err)
		}
	}
	ws := &wingScores{w: w, v: v, lexWeight: 1}
	if r.useLex {
		coverage := ws.lexChannels(r.terms)
		if r.useVec {
			ws.lexWeight = lexicalTrust(coverage)
		}
	}
	if r.useVec && hasVecs {
		if v.fz != nil {
			if err := v.fz.checkVectors(); err != nil {
				return nil, fmt.Errorf("wing %s: %w", w.id, err)
			}
		}
		ws.vecChannels(r.qvec)
	}
	ws.prior = r.filters.priors(ws, r.channels)
	return ws, nil
}

// decide judges each candidate's relevance: kept are those that pass, an
// answering note raised above those that do not answer (answerLead);
// missed are the others; evidence is every candidate's.
func (r *searchRun) decide(cands []candidate, dec *decider) (kept, missed []candidate, evidence map[candidate]Evidence) {
	evidence = make(map[candidate]Evidence, len(cands))
	kept = cands[:0]
	for _, c := range cands {
		e := dec.judge(c, r.opts.MinRelevance)
		if r.opts.Prompt && e.Passed && !e.Answers {
			e.Passed = false
			e.Reason = fmt.Sprintf("not for the prompt hook: lexical coverage %.2f below %.2f (%s)", e.Coverage, answerCoverage, e.Reason)
		}
		if e.Answers {
			c.lead = answerLead(e.Coverage) + subjectLead*r.subjectShare(c)
			c.score += c.lead
		}
		evidence[candidate{ws: c.ws, d: c.d}] = e
		if !e.Passed {
			missed = append(missed, c)
			continue
		}
		kept = append(kept, c)
	}
	return kept, missed, evidence
}

// hits makes the hits of cands, best first, scored relative to the first
// by their fused scores (Hit.Score), never above the hit before.
func (r *searchRun) hits(cands []candidate, evidence map[candidate]Evidence) ([]Hit, error) {
	hits := make([]Hit, 0, len(cands))
	shown := 1.0
	for _, c := range cands {
		note, err := c.ws.v.noteAt(c.d)
		if err != nil {
			return nil, fmt.Errorf("wing %s: %w", c.ws.w.id, err)
		}
		e := evidence[candidate{ws: c.ws, d: c.d}]
		fused, first := c.score-c.lead, cands[0].score-cands[0].lead
		shown = min(shown, math.Exp((fused-first)/float64(r.channels)))
		h := Hit{Note: note.note(), Score: shown, Relevance: e.Relevance}
		h.Mtime = c.ws.w.mtimeOf(h.Source)
		h.Stale, h.StaleReason = note.gov.Staleness(h.Mtime, r.filters.Now, r.filters.StaleAfter)
		if r.explain {
			h.Evidence = &e
		}
		hits = append(hits, h)
	}
	return hits, nil
}

// searchWings resolves the wings to search, sorted and each once, and
// checks their vectors match the palace's model. The requested wings are
// checked before the excluded ones, and then against the scope.
func (p *Palace) searchWings(requested, excluded []string, scope DomainScope) ([]string, error) {
	sc, err := p.ScopeWings(scope)
	if err != nil {
		return nil, err
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	notes := 0
	for _, w := range p.wings {
		notes += w.noteCount()
	}
	known := make([]string, 0, len(p.wings))
	for id := range p.wings {
		known = append(known, id)
	}
	for id := range p.known {
		if _, ok := p.wings[id]; !ok {
			known = append(known, id)
		}
	}
	sort.Strings(known)
	if len(requested) == 0 {
		if notes == 0 {
			return nil, ErrEmpty
		}
		for id := range p.wings {
			if sc.Sees(id) {
				requested = append(requested, id)
			}
		}
	}
	requested = slices.Compact(slices.Sorted(slices.Values(requested)))
	for _, id := range requested {
		if _, ok := p.wings[id]; !ok {
			return nil, UnknownWingError(id, known)
		}
		if !sc.Sees(id) {
			return nil, sc.Outside(id)
		}
	}
	for _, id := range excluded {
		if _, ok := slices.BinarySearch(known, id); !ok {
			return nil, UnknownWingError(id, known)
		}
	}
	requested = slices.DeleteFunc(requested, func(id string) bool { return slices.Contains(excluded, id) })
	var mismatch *ModelMismatchError
	for _, id := range requested {
		w := p.wings[id]
		if p.emb != nil && w.noteCount() > 0 && w.model != p.Model() {
			if mismatch == nil {
				mismatch = &ModelMismatchError{Model: p.Model()}
			}
			mismatch.Wings = append(mismatch.Wings, WingModel{ID: id, Model: w.model, Roots: slices.Clone(w.roots)})
		}
	}
	if mismatch != nil {
		return nil, mismatch
	}
	return requested, nil
}

// ModelMismatchError names the wings a search cannot compare with the
// query: their vectors come from another model than the palace's. It
// matches ErrModelMismatch.
// Its JSON carries it across the daemon's socket.
type ModelMismatchError struct {
	// Model is the palace's (the query's) model.
	Model string `json:"model"`
	// Wings are the wings embedded with another model, sorted by id.
	Wings []WingModel `json:"wings"`
}

// WingModel is a wing, the model its vectors come from, and where it was
// mined from.
type WingModel struct {
	ID    string   `json:"id"`
	Model string   `json:"model"`
	Roots []string `json:"roots"`
}

func (e *ModelMismatchError) Error() string {
	parts := make([]string, len(e.Wings))
	for i, w := range e.Wings {
		parts[i] = fmt.Sprintf("%s (%s)", w.ID, w.Model)
	}
	if len(parts) == 1 {
		return fmt.Sprintf("wing %s was embedded with another model than %s", parts[0], e.Model)
	}
	return fmt.Sprintf("wings %s were embedded with another model than %s", strings.Join(parts, ", "), e.Model)
}

// Is makes the error match ErrModelMismatch.
func (e *ModelMismatchError) Is(target error) bool { return target == ErrModelMismatch }

// subjectShare is the share of a note's first subjectTerms index terms
// that the query holds: how far the note is about what the query names
// ("LF-3307: hitch of ~300 ms…" for "what's LF-3307", not a note naming
// LF-3307 in a path at its end).
func (r *searchRun) subjectShare(c candidate) float64 {
	note, err := c.ws.v.noteAt(c.d)
	if err != nil {
		return 0 // the hit's own read reports it
	}
	// Only the first terms count, and no word runs over a line: the
	// terms are cut line by line until there are enough.
	var subject []string
	for line := range strings.Lines(govern.Statement(note.text)) {
		if subject = words.AppendTerms(subject, line); len(subject) >= subjectTerms {
			break
		}
	}
	subject = subject[:min(len(subject), subjectTerms)]
	if len(subject) == 0 {
		return 0
	}
	var n int
	for _, t := range subject {
		if slices.Contains(r.terms, t) {
			n++
		}
	}
	return float64(n) / float64(len(subject))
}
