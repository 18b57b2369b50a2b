package palace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/memminer/memminer/govern"
	"github.com/memminer/memminer/internal/testutil"
)

// largeWing writes a palace of one lexical wing of n notes to dir and
// returns the size of its wing file.
func largeWing(tb testing.TB, dir string, n int) int64 {
	tb.Helper()
	p, err := Open(context.Background(), dir, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer p.Close()
	notes := make([]Note, n)
	for i := range notes {
		notes[i] = note(fmt.Sprintf("%032x", i), fmt.Sprintf("Infrastructure > Section %d", i/25),
			fmt.Sprintf("postgres-%d runs on db-%d since the migration of the wal archive (added 2026-01-%02d).", i, i%7, i%28+1), i+1)
	}
	if _, err := p.ApplySource(context.Background(), "w", Source{Path: "/hive/agents/w/memory.md", Agent: "w", Governed: govern.Version}, notes); err != nil {
		tb.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		tb.Fatal(err)
	}
	info, err := os.Stat(p.wingPath("w"))
	if err != nil {
		tb.Fatal(err)
	}
	return info.Size()
}

func totalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// Writing a wing streams it to disk, and opening one decodes it from the
// file: neither builds copies of the whole file in memory (issue 11). The
// bytes allocated are the same on every run, so the bounds are exact
// enough to hold without timing: writing allocates about 6 times the file
// (gob's own buffer as it grows) where it took 12, opening about 14 where
// it took 24.
func TestWingFilesAreStreamed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "palace")
	size := float64(largeWing(t, dir, 50_000))

	p := openT(t, dir, nil, false)
	p.wings["w"].dirty = true
	before := totalAlloc()
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	ratio := float64(totalAlloc()-before) / size
	t.Logf("writing the wing file allocated %.2f times its size", ratio)
	if ratio > 8 {
		t.Errorf("writing the wing file allocated %.1f times its size, want at most 8", ratio)
	}
	p.Close()

	before = totalAlloc()
	q := openT(t, dir, nil, true)
	ratio = float64(totalAlloc()-before) / size
	t.Logf("opening the wing allocated %.2f times its file", ratio)
	if ratio > 20 {
		t.Errorf("opening the wing allocated %.1f times its file, want at most 20", ratio)
	}
	if n := len(q.Notes("w")); n != 50_000 {
		t.Fatalf("opened %d notes", n)
	}
}

// BenchmarkOpenLargeWing opens a palace of one lexical wing of 200,000
// notes read-only and reports the heap it took: peak-heap-MB the most the
// heap held beyond what it held before, wing-MB what the opened wing holds
// live, file-MB the wing file's size.
func BenchmarkOpenLargeWing(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "palace")
	size := largeWing(b, dir, 200_000)
	var peak, held uint64
	b.ReportAllocs()
	for b.Loop() {
		runtime.GC()
		base := testutil.HeapBytes()
		stop := testutil.HeapPeak()
		p, err := Open(context.Background(), dir, Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		peak = max(peak, stop()-base)
		runtime.GC()
		held = testutil.HeapBytes() - base
		p.Close()
	}
	b.ReportMetric(float64(size)/(1<<20), "file-MB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(held)/(1<<20), "wing-MB")
}
