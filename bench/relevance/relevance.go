// Package relevance measures search's relevance floor on examples/hive:
// how many queries about things no note mentions (nonsense.json, written
// before the floor was tuned) return nothing, and how many paraphrase
// targets (bench/paraphrase) the floor loses. See BENCHMARKS.md.
package relevance

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memminer/memminer/bench/paraphrase"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
)

//go:embed nonsense.json
var nonsenseJSON []byte

// Nonsense returns the queries about things no note of examples/hive
// mentions.
func Nonsense() ([]string, error) {
	var qs []string
	if err := json.Unmarshal(nonsenseJSON, &qs); err != nil {
		return nil, fmt.Errorf("nonsense.json: %w", err)
	}
	return qs, nil
}

// Result is what a floor does in one search mode.
type Result struct {
	Mode  string
	Floor float64
	// Nonsense counts the nonsense queries, Empty those that return
	// nothing at the floor, and Top their best hits' relevance.
	Nonsense, Empty int
	Top             []float64
	// Targets counts the paraphrase targets in the top K without a floor,
	// Lost those the floor drops from it, and TargetRelevance the
	// relevance of each target found (0: not in the top K).
	Targets, Lost   int
	TargetRelevance []float64
}

// K is the cut-off paraphrase targets are counted at, as in bench/paraphrase.
const K = 5

// Run mines hive into a fresh palace under tmp with e (nil: lexical) and
// measures floor in mode.
func Run(ctx context.Context, hive, tmp string, e embed.Embedder, mode palace.Mode, floor float64) (Result, error) {
	dir, err := os.MkdirTemp(tmp, "palace-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	p, err := palace.Open(ctx, filepath.Join(dir, "p"), palace.Options{Embedder: e})
	if err != nil {
		return Result{}, err
	}
	defer p.Close()
	if _, err := mine.Mine(ctx, p, hive, mine.Options{}); err != nil {
		return Result{}, err
	}
	r := Result{Mode: mode.String(), Floor: floor}
	nonsense, err := Nonsense()
	if err != nil {
		return r, err
	}
	for _, q := range nonsense {
		hits, err := p.Search(ctx, q, palace.SearchOptions{Results: K, Mode: mode})
		if err != nil {
			return r, fmt.Errorf("search %q: %w", q, err)
		}
		r.Nonsense++
		top := 0.0
		for _, h := range hits {
			top = max(top, h.Relevance)
		}
		r.Top = append(r.Top, top)
		if top < floor {
			r.Empty++
		}
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
