package mine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/memminer/memminer/bench/hivegen"
	"github.com/memminer/memminer/palace"
)

// BenchmarkMineAfterAppend is the in-process part of `memminer mine`
// after one note is appended to one agent's file of a 100,000-note hive
// (100 agents): open the palace as the CLI does (leaving the unchanged
// wings unloaded, mine.Plan), mine the hive, close.
// The whole command adds the process's start (bench/vsfts5).
func BenchmarkMineAfterAppend(b *testing.B) {
	dir := b.TempDir()
	hiveDir := filepath.Join(dir, "hive")
	if _, err := hivegen.Write(hiveDir, hivegen.Options{Notes: 100_000}); err != nil {
		b.Fatal(err)
	}
	// Aged, as files an agent wrote a while ago are: a file written
	// within racyWindow of a mine is read again by the next one.
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(hiveDir, func(path string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(path, old, old)
	})
	if err != nil {
		b.Fatal(err)
	}
	pdir := filepath.Join(dir, "palace")
	ctx := context.Background()
	mineOnce := func() Summary {
		pl := NewPlan(hiveDir, Options{})
		p, err := palace.Open(ctx, pdir, palace.Options{Unchanged: pl.Unchanged})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close()
		s, err := MinePlan(ctx, p, pl)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	mineOnce()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		path := filepath.Join(hiveDir, "agents", "agent-000", "memory.md")
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		_, err = fmt.Fprintf(f, "- Appended note %d: the canary-%d deploy runs on node-20.\n", i, i)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		// The label lets a CPU profile leave out the cold mine above:
		// go tool pprof -tagfocus phase=append.
		pprof.Do(ctx, pprof.Labels("phase", "append"), func(context.Context) {
			if s := mineOnce(); s.FilesChanged != 1 {
				b.Fatalf("mined %d changed files, want 1", s.FilesChanged)
			}
		})
	}
}
