package relevance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/bench/internal/harness"
	"github.com/memminer/memminer/bench/paraphrase"
	"github.com/memminer/memminer/palace"
)

// TestDumpSignals writes every query's evidence (palace.Explain, no
// floor) to the file RELEVANCE_DUMP names, one JSON object a line, for
// fitting relevance's constants (BENCHMARKS.md, "Relevance").
func TestDumpSignals(t *testing.T) {
	out := os.Getenv("RELEVANCE_DUMP")
	if out == "" {
		t.Skip("RELEVANCE_DUMP not set")
	}
	ctx := context.Background()
	e := harness.BuiltinModel(t)
	p, err := harness.Mine(ctx, filepath.Join(t.TempDir(), "p"), hiveDir, e)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	type row struct {
		Set, Query, Target string
		Hits               []palace.Hit
		Explanation        *palace.Explanation
	}
	emit := func(set, q, target string) {
		hits, ex, err := p.Explain(ctx, q, palace.SearchOptions{Results: K, Filters: palace.Filters{IncludeSuperseded: true}})
		if err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(row{set, q, target, hits, ex}); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range unanswerable {
		qs, err := s.get()
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			emit(s.name, q, "")
		}
	}
	sets, err := paraphrase.Sets()
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range sets {
		for _, q := range set.Queries {
			emit("paraphrase-"+set.Name, q.Query, q.Target)
		}
	}
}
