package relevance

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/palace"
)

const hiveDir = "../../examples/hive"

// TestFloor measures the default floor in the lexical and hybrid modes: how
// many nonsense queries return nothing, and how many paraphrase targets
// found in the top 5 are lost to the floor. Hybrid search must lose none;
// the rest is reported (BENCHMARKS.md, "Relevance floor").
func TestFloor(t *testing.T) {
	ctx := context.Background()
	e, err := embed.Open(ctx, embed.UseLite, embed.Options{CacheDir: os.Getenv("MEMMINER_MODEL_CACHE")})
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("built-in model unavailable: %v", err)
		}
		t.Fatal(err)
	}
	for _, m := range []palace.Mode{palace.LexicalOnly, palace.Hybrid} {
		emb := e
		if m == palace.LexicalOnly {
			emb = nil
		}
		r, err := Run(ctx, hiveDir, t.TempDir(), emb, m, palace.DefaultMinRelevance)
		if err != nil {
			t.Fatal(err)
		}
		for _, set := range r.Unanswerable {
			top := slices.Clone(set.Top)
			slices.Sort(top)
			t.Logf("%-7s floor %.2f: %s returning nothing %d/%d; answered: %q", r.Mode, r.Floor, set.Name, set.Empty, set.Queries, set.Answered)
			t.Logf("%-7s %s best relevance, sorted: %.3f", r.Mode, set.Name, top)
		}
		var found []float64
		for _, x := range r.TargetRelevance {
			if x > 0 {
				found = append(found, x)
			}
		}
		slices.Sort(found)
		t.Logf("%-7s floor %.2f: paraphrase targets in the top %d %d, lost to the floor %d %q", r.Mode, r.Floor, K, r.Targets, r.Lost, r.LostQueries)
		t.Logf("%-7s paraphrase target relevance, sorted: %.3f", r.Mode, found)
		if m == palace.Hybrid && r.Lost > 2 {
			t.Errorf("the default floor loses %d of the %d paraphrase targets hybrid search finds, more than 2", r.Lost, r.Targets)
		}
	}
}
