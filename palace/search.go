package palace

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
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

// rrfK is the reciprocal-rank-fusion constant: 60 is the usual value and
// flattens the difference between close ranks.
const rrfK = 60

// SearchOptions narrow a search.
type SearchOptions struct {
	// Wings limits the search to these wings; empty means all.
	Wings []string
	// Results is the number of hits wanted; zero means DefaultResults.
	Results int
	// Mode picks the retrievers; the zero value is Hybrid.
	Mode Mode
}

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

// ParseMode reads a mode name: hybrid, lexical or vector.
func ParseMode(s string) (Mode, error) {
	for _, m := range []Mode{Hybrid, LexicalOnly, VectorOnly} {
		if strings.EqualFold(strings.TrimSpace(s), m.String()) {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown search mode %q (want hybrid, lexical or vector)", s)
}

// Hit is one search result.
type Hit struct {
	Note
	// Score is the fused relevance in (0, 1]: 1 for a note ranked first by
	// every retriever used.
	Score float64
	// Mtime is the source file's modification time when mined.
	Mtime time.Time
}

// Search finds the notes most relevant to query: BM25 over the notes, and
// when the palace has an embedder, vector similarity too, fused by
// reciprocal rank.
func (p *Palace) Search(ctx context.Context, query string, opts SearchOptions) ([]Hit, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, errors.New("empty query")
	}
	n := opts.Results
	if n <= 0 {
		n = DefaultResults
	}
	wings, err := p.searchWings(opts.Wings)
	if err != nil {
		return nil, err
	}
	if opts.Mode == VectorOnly && p.emb == nil {
		return nil, errors.New("vector search needs an embedding model; this palace is lexical")
	}
	var qvec []float32
	if p.emb != nil && opts.Mode != LexicalOnly {
		vs, err := p.emb.Embed(ctx, []string{query})
		if err != nil {
			return nil, fmt.Errorf("embed query: %w", err)
		}
		if len(vs) != 1 || !normalize(vs[0]) {
			return nil, errors.New("embed query: embedder returned no usable vector")
		}
		qvec = vs[0]
	}

	depth := max(100, 4*n)
	p.mu.RLock()
	defer p.mu.RUnlock()
	var lex, vec []scoredNote
	for _, id := range wings {
		w := p.wings[id]
		if w == nil {
			continue
		}
		if opts.Mode != VectorOnly {
			for _, s := range w.lex.search(query, depth) {
				lex = append(lex, scoredNote{w.notes[s.id], s.score})
			}
		}
		if qvec != nil && w.coll != nil && w.coll.Count() > 0 {
			if w.dim != len(qvec) {
				return nil, fmt.Errorf("%w: wing %s has %d-dimension vectors, query has %d", ErrModelMismatch, id, w.dim, len(qvec))
			}
			res, err := w.coll.QueryEmbedding(ctx, qvec, min(depth, w.coll.Count()), nil, nil)
			if err != nil {
				return nil, fmt.Errorf("search wing %s: %w", id, err)
			}
			for _, r := range res {
				vec = append(vec, scoredNote{w.notes[r.ID], float64(r.Similarity)})
			}
		}
	}
	var lists [][]scoredNote
	if opts.Mode != VectorOnly {
		lists = append(lists, rank(lex, depth))
	}
	if qvec != nil {
		lists = append(lists, rank(vec, depth))
	}
	hits := fuse(lists)
	if len(hits) > n {
		hits = hits[:n]
	}
	for i := range hits {
		if s := p.wings[hits[i].Wing].sources[hits[i].Source]; s != nil {
			hits[i].Mtime = s.Mtime
		}
	}
	return hits, nil
}

// searchWings resolves the wings to search and checks their vectors match
// the palace's model.
func (p *Palace) searchWings(requested []string) ([]string, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	notes := 0
	for _, w := range p.wings {
		notes += len(w.notes)
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
			requested = append(requested, id)
		}
		sort.Strings(requested)
	}
	for _, id := range requested {
		w, ok := p.wings[id]
		if !ok {
			if len(known) == 0 {
				return nil, fmt.Errorf("%w %q: the palace has no wings yet", ErrUnknownWing, id)
			}
			return nil, fmt.Errorf("%w %q (known wings: %s)", ErrUnknownWing, id, strings.Join(known, ", "))
		}
		if p.emb != nil && len(w.notes) > 0 && w.model != p.Model() {
			fix := "memminer mine PATH --wing " + id
			if len(w.roots) > 0 {
				fix = "memminer mine " + w.roots[0] + " --wing " + id
			}
			return nil, fmt.Errorf("%w: wing %s was embedded with %s but the configured model is %s; run %q to re-embed it",
				ErrModelMismatch, id, w.model, p.Model(), fix)
		}
	}
	return requested, nil
}

type scoredNote struct {
	note  *Note
	score float64
}

// rank sorts candidates from several wings by score, best first, keeping
// the first depth; ties go by wing, source and line for stable output.
func rank(c []scoredNote, depth int) []scoredNote {
	sort.Slice(c, func(i, j int) bool {
		if c[i].score != c[j].score {
			return c[i].score > c[j].score
		}
		return noteLess(c[i].note, c[j].note)
	})
	if len(c) > depth {
		c = c[:depth]
	}
	return c
}

func noteLess(a, b *Note) bool {
	if a.Wing != b.Wing {
		return a.Wing < b.Wing
	}
	if a.Source != b.Source {
		return a.Source < b.Source
	}
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.ID < b.ID
}

// fuse combines ranked lists by reciprocal rank fusion, normalised so a
// note first in every list scores 1.
func fuse(lists [][]scoredNote) []Hit {
	score := map[*Note]float64{}
	for _, l := range lists {
		for r, s := range l {
			score[s.note] += 1.0 / float64(rrfK+r+1)
		}
	}
	best := float64(len(lists)) / float64(rrfK+1)
	hits := make([]Hit, 0, len(score))
	for n, s := range score {
		hits = append(hits, Hit{Note: *n, Score: s / best})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return noteLess(&hits[i].Note, &hits[j].Note)
	})
	return hits
}
