// Package relevance measures search's relevance floor on examples/hive:
// how many queries about things no note mentions (nonsense.json, written
// before the floor was tuned) return nothing, and how many paraphrase
// targets (bench/paraphrase) the floor loses. See BENCHMARKS.md.
package relevance

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/memminer/memminer/bench/internal/harness"
	"github.com/memminer/memminer/bench/paraphrase"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/palace"
)

var (
	//go:embed nonsense.json
	nonsenseJSON []byte
	//go:embed nonsense-blind.json
	blindJSON []byte
	//go:embed identifiers.json
	identifiersJSON []byte
)

// Nonsense returns the queries about things no note of examples/hive
// mentions: the set relevance was tuned on.
func Nonsense() ([]string, error) { return queries("nonsense.json", nonsenseJSON) }

// NonsenseBlind returns more such queries, written before relevance was
// tuned for issue 26 and never tuned on: the held-out check.
func NonsenseBlind() ([]string, error) { return queries("nonsense-blind.json", blindJSON) }

// Identifiers returns identifier-like queries (error codes, tickets,
// CamelCase names) that no note of examples/hive holds, held out too.
func Identifiers() ([]string, error) { return queries("identifiers.json", identifiersJSON) }

// unanswerable are the sets of queries no note answers, by name.
var unanswerable = []struct {
	name string
	get  func() ([]string, error)
}{{"nonsense", Nonsense}, {"blind", NonsenseBlind}, {"identifiers", Identifiers}}

func queries(name string, data []byte) ([]string, error) { return harness.Decode[[]string](name, data) }

// Result is what a floor does in one search mode.
type Result struct {
	Mode  string
	Floor float64
	// Unanswerable are the sets of queries no note answers: nonsense
	// (tuned on), blind and identifiers (held out).
	Unanswerable []SetResult
	// Targets counts the paraphrase targets in the top K without a floor,
	// Lost those the floor drops from it, and TargetRelevance the
	// relevance of each target found (0: not in the top K).
	Targets, Lost   int
	TargetRelevance []float64
	// LostQueries are the queries whose target the floor drops.
	LostQueries []string
}

// SetResult is what a floor does to one set of unanswerable queries.
type SetResult struct {
	Name string
	// Queries counts the set, Empty those that return nothing at the
	// floor, Top their best hits' relevance, Answered the queries that
	// return something.
	Queries, Empty int
	Top            []float64
	Answered       []string
}

// K is the cut-off paraphrase targets are counted at, as in bench/paraphrase.
const K = 5

// Run mines hive into a fresh palace under tmp with e (nil: lexical) and
// measures floor in mode.
func Run(ctx context.Context, hive, tmp string, e embed.Embedder, mode palace.Mode, floor float64) (Result, error) {
	p, done, err := harness.MineTemp(ctx, tmp, hive, e)
	if err != nil {
		return Result{}, err
	}
	defer done()
	r := Result{Mode: mode.String(), Floor: floor}
	for _, set := range unanswerable {
		qs, err := set.get()
		if err != nil {
			return r, err
		}
		sr := SetResult{Name: set.name}
		for _, q := range qs {
			hits, err := p.Search(ctx, q, palace.SearchOptions{Results: K, Mode: mode})
			if err != nil {
				return r, fmt.Errorf("search %q: %w", q, err)
			}
			sr.Queries++
			top := 0.0
			for _, h := range hits {
				top = max(top, h.Relevance)
			}
			sr.Top = append(sr.Top, top)
			if top < floor {
				sr.Empty++
			} else {
				sr.Answered = append(sr.Answered, q)
			}
		}
		r.Unanswerable = append(r.Unanswerable, sr)
	}
	sets, err := paraphrase.Sets()
	if err != nil {
		return r, err
	}
	for _, set := range sets {
		for _, q := range set.Queries {
			// The floor is measured apart from governance: superseded
			// targets are searched for too.
			opts := palace.SearchOptions{Results: K, Mode: mode, Filters: palace.Filters{IncludeSuperseded: true}}
			rel := target(p.Search(ctx, q.Query, opts))(q.Target)
			r.TargetRelevance = append(r.TargetRelevance, rel)
			if rel == 0 {
				continue
			}
			r.Targets++
			opts.MinRelevance = floor
			if target(p.Search(ctx, q.Query, opts))(q.Target) == 0 {
				r.Lost++
				r.LostQueries = append(r.LostQueries, q.Query)
			}
		}
	}
	return r, nil
}

// target returns a function giving the relevance of the hit holding
// snippet, 0 when none does (or the search failed).
func target(hits []palace.Hit, err error) func(string) float64 {
	return func(snippet string) float64 {
		if err != nil {
			return 0
		}
		for _, h := range hits {
			if strings.Contains(h.Text, snippet) {
				return max(h.Relevance, 1e-9)
			}
		}
		return 0
	}
}
