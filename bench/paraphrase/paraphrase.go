// Package paraphrase measures recall on queries that share no content word
// with the note they look for: the case lexical search cannot answer and the
// embedding model must. The queries target examples/hive.
package paraphrase

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
)

// Query is a paraphrase query and a snippet that identifies its target note.
type Query struct {
	Query  string `json:"query"`
	Target string `json:"target"`
}

//go:embed queries.json
var queriesJSON []byte

// Queries returns the paraphrase set.
func Queries() ([]Query, error) {
	var qs []Query
	if err := json.Unmarshal(queriesJSON, &qs); err != nil {
		return nil, fmt.Errorf("queries.json: %w", err)
	}
	return qs, nil
}

// Result is the outcome of one mode over the set.
type Result struct {
	Mode   string
	Hits   int // target among the top K
	Total  int
	Misses []string
}

// Run mines hive into a fresh palace under tmp with e (nil: lexical) and
// asks every query in the given search mode, counting targets in the top k.
func Run(ctx context.Context, hive, tmp string, e embed.Embedder, mode palace.Mode, k int) (Result, error) {
	qs, err := Queries()
	if err != nil {
		return Result{}, err
	}
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
	r := Result{Mode: mode.String(), Total: len(qs)}
	for _, q := range qs {
		hits, err := p.Search(ctx, q.Query, palace.SearchOptions{Results: k, Mode: mode})
		if err != nil {
			return r, fmt.Errorf("search %q: %w", q.Query, err)
		}
		found := false
		for _, h := range hits {
			if strings.Contains(h.Text, q.Target) {
				found = true
				break
			}
		}
		if found {
			r.Hits++
		} else {
			r.Misses = append(r.Misses, q.Query)
		}
	}
	return r, nil
}

func runMine(ctx context.Context, p *palace.Palace) (mine.Summary, error) {
	return mine.Mine(ctx, p, hiveDir, mine.Options{})
}

// hiveDir is examples/hive, relative to this package's directory (tests
// run there).
const hiveDir = "../../examples/hive"
