package relevance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/bench/internal/harness"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/palace"
)

// writeTwoWings writes the generated hive: two agents of 40 notes,
// a dozen "the kestrel queue N drains at night" in one and a dozen "the
// osprey shard N rebalances weekly" in the other, the rest about neither.
func writeTwoWings(t *testing.T, dir string) {
	t.Helper()
	filler := []string{"The garden fence was painted green.", "Lunch orders go to the front desk.",
		"The printer on floor three jams on thick paper.", "Badges are renewed every spring.",
		"The coffee machine is descaled on Fridays.", "Parking permits come from facilities.",
		"The wiki has the holiday calendar.", "New laptops are ordered through procurement."}
	for _, w := range []struct{ id, topic string }{{"kestrel", "The kestrel queue %d drains at night."}, {"osprey", "The osprey shard %d rebalances weekly."}} {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\n\n## Operations\n\n", w.id)
		for i := range 40 {
			if i < 12 {
				fmt.Fprintf(&b, "- "+w.topic+"\n", i)
			} else {
				fmt.Fprintf(&b, "- %s (%d)\n", filler[i%len(filler)], i)
			}
		}
		path := filepath.Join(dir, "agents", w.id, "memory.md")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMultiTopic: with the built-in model and with BM25 alone, a query
// whose two parts live in different wings returns notes of both, each
// part alone returns its notes, and an identifier neither holds returns
// nothing.
func TestMultiTopic(t *testing.T) {
	ctx := context.Background()
	e := harness.BuiltinModel(t)
	hive := filepath.Join(t.TempDir(), "hive")
	writeTwoWings(t, hive)
	for _, emb := range []embed.Embedder{nil, e} {
		p, err := harness.Mine(ctx, filepath.Join(t.TempDir(), "p"), hive, emb)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		for _, tt := range []struct {
			query string
			wings []string
		}{
			{"kestrel queue osprey shard", []string{"kestrel", "osprey"}},
			{"when does the kestrel queue drain and the osprey shard rebalance?", []string{"kestrel", "osprey"}},
			{"kestrel queue", []string{"kestrel"}},
			{"osprey shard", []string{"osprey"}},
			{"KSTRL-42 osprey shard", nil},
		} {
			hits, err := p.Search(ctx, tt.query, palace.SearchOptions{Results: 10, MinRelevance: palace.DefaultMinRelevance})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, h := range hits {
				if !strings.Contains(h.Text, h.Wing) {
					t.Errorf("%s %q: hit %q is not about the %s", p.Model(), tt.query, h.Text, h.Wing)
				}
				got[h.Wing] = true
			}
			for _, w := range tt.wings {
				if !got[w] {
					t.Errorf("%s %q: no hit from wing %s", p.Model(), tt.query, w)
				}
			}
			if len(got) != len(tt.wings) {
				t.Errorf("%s %q: hits from %v, want %q", p.Model(), tt.query, got, tt.wings)
			}
		}
	}
}
