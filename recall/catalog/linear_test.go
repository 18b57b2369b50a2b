package catalog

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/wakeup"
)

// TestBuildLinearInWings: the catalogue's work grows with the wings, not
// with their square (issue 47, item 13: 3,000 wings took 20 s when each
// wing's identity listed every wing). Counted in allocations, which do
// not depend on the machine's load: four times the wings, about four
// times the allocations; a square would be sixteen.
func TestBuildLinearInWings(t *testing.T) {
	allocs := map[int]float64{}
	for _, wings := range []int{50, 200} {
		p, hive := minedHive(t, wings)
		allocs[wings] = testing.AllocsPerRun(1, func() {
			if x, err := Build(p, hive, nil, wakeup.ReadFileLimited, nil); err != nil || len(x.Wings) != wings {
				t.Fatalf("Build: %d wings, %v; want %d", len(x.Wings), err, wings)
			}
		})
	}
	if ratio := allocs[200] / allocs[50]; ratio > 6 {
		t.Errorf("Build allocates %.0f times for 50 wings, %.0f for 200: %.1f×, want about 4× (linear)", allocs[50], allocs[200], ratio)
	}
}

// minedHive mines a hive of n wings, one small file each, into a palace.
func minedHive(t *testing.T, n int) (*palace.Palace, string) {
	t.Helper()
	ctx := context.Background()
	hive := t.TempDir()
	for i := range n {
		dir := filepath.Join(hive, "agents", fmt.Sprintf("agent-%03d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := fmt.Sprintf("# Agent %d\n\n## Identity\n\nAgent %d builds the part %d.\n\n## Notes\n\n- Fact %d (added 2026-12-01)\n", i, i, i, i)
		if err := os.WriteFile(filepath.Join(dir, "memory.md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := palace.Open(ctx, filepath.Join(t.TempDir(), "palace"), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	s, err := mine.Mine(ctx, p, hive, mine.Options{})
	if err != nil || len(s.Problems) > 0 {
		t.Fatalf("mine: %v %v", err, s.Problems)
	}
	return p, hive
}
