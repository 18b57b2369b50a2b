// Package paraphrase measures recall on queries that share no content word
// with the note they look for: the case lexical search cannot answer and the
// embedding model must. The queries target examples/hive.
//
// There are two sets. queries.json was written with the model at hand
// (while the search was being developed); queries-blind.json was written
// later by someone who never ran a search or the model on it, and is the
// held-out check that what helps on the first set is not fitted to it.
package paraphrase

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/memminer/memminer/bench/internal/harness"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/palace"
)

// Query is a paraphrase query and a snippet that identifies its target note.
type Query struct {
	Query  string `json:"query"`
	Target string `json:"target"`
}

// Set is a named list of queries.
type Set struct {
	Name    string
	Queries []Query
}

var (
	//go:embed queries.json
	queriesJSON []byte
	//go:embed queries-blind.json
	blindJSON []byte
)

// Sets returns the paraphrase sets: "first" (queries.json) and "blind"
// (queries-blind.json).
func Sets() ([]Set, error) {
	var sets []Set
	for _, f := range []struct {
		name, file string
		data       []byte
	}{{"first", "queries.json", queriesJSON}, {"blind", "queries-blind.json", blindJSON}} {
		qs, err := harness.Decode[[]Query](f.file, f.data)
		if err != nil {
			return nil, err
		}
		sets = append(sets, Set{Name: f.name, Queries: qs})
	}
	return sets, nil
}

// Result is the outcome of one mode over one set.
type Result struct {
	Mode string
	// Ranks holds each query's target rank, 1-based, or 0 when the target
	// is not among the results searched for (see Run).
	Ranks []int
	// Hits counts targets among the top K.
	Hits  int
	Total int
}

// depth is how many results Run asks for to find a rank beyond K.
const depth = 20

// Run mines hive into a fresh palace under tmp with e (nil: lexical) and
// asks every query of qs in the given search mode, counting targets in the
// top k.
func Run(ctx context.Context, hive, tmp string, e embed.Embedder, mode palace.Mode, k int, qs []Query) (Result, error) {
	p, done, err := harness.MineTemp(ctx, tmp, hive, e)
	if err != nil {
		return Result{}, err
	}
	defer done()
	r := Result{Mode: mode.String(), Total: len(qs)}
	for _, q := range qs {
		// Retrieval is measured apart from governance: one target (the
		// Notion board) is a superseded note, which search leaves out.
		hits, err := p.Search(ctx, q.Query, palace.SearchOptions{Results: max(k, depth), Mode: mode, Filters: palace.Filters{IncludeSuperseded: true}})
		if err != nil {
			return r, fmt.Errorf("search %q: %w", q.Query, err)
		}
		rank := 0
		for i, h := range hits {
			if strings.Contains(h.Text, q.Target) {
				rank = i + 1
				break
			}
		}
		r.Ranks = append(r.Ranks, rank)
		if rank > 0 && rank <= k {
			r.Hits++
		}
	}
	return r, nil
}

// MRR is the mean reciprocal rank of the targets (a target beyond the
// search depth counts zero).
func (r Result) MRR() float64 {
	if len(r.Ranks) == 0 {
		return 0
	}
	var s float64
	for _, x := range r.Ranks {
		if x > 0 {
			s += 1 / float64(x)
		}
	}
	return s / float64(len(r.Ranks))
}

// hiveDir is examples/hive, relative to this package's directory (tests
// run there).
const hiveDir = "../../examples/hive"
