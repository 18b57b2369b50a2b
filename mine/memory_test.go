package mine

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/palace"
)

// Parse holds the syntax tree of one section at a time, never that of
// the whole file, which takes about ten times the file (issue 11). The
// bound holds whatever the GC's timing: with GOGC at 100 the heap stays
// below twice what is live (the source and the notes, some 2.5 times the
// source) plus a section, while a whole tree alone is live for seconds
// and far above it (16 times), where the samples cannot miss it.
func TestParseMemoryStaysBelowEightTimesTheFile(t *testing.T) {
	src := benchMemory(100_000)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	runtime.GC()
	base := testutil.HeapBytes()
	stop := testutil.HeapPeak()
	doc, err := Parse(src, ParseOptions{})
	peak := stop()
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(doc)
	ratio := float64(peak-base) / float64(len(src))
	t.Logf("parsing %d bytes took up to %.1f times the file on the heap", len(src), ratio)
	if ratio > 8 {
		t.Fatalf("parsing %d bytes took up to %.1f times the file on the heap, want at most 8", len(src), ratio)
	}
}

// BenchmarkMineLargeFile mines one large memory file into a new lexical
// palace and reports the heap it took: peak-heap-MB is the most the heap
// held beyond what it held before (live and not yet collected objects),
// heap/file that over the file's size, palace-MB what the palace holds
// live once mined.
func BenchmarkMineLargeFile(b *testing.B) {
	src := benchMemory(200_000)
	dir := b.TempDir()
	path := filepath.Join(dir, "agents", "big", "memory.md")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		b.Fatal(err)
	}
	src = nil
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	var peak, held uint64
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p, err := palace.Open(context.Background(), filepath.Join(dir, "palace", string(rune('a'+i%26))), palace.Options{})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		base := testutil.HeapBytes()
		stop := testutil.HeapPeak()
		if _, err := Mine(context.Background(), p, path, Options{MaxFileBytes: 64 << 20}); err != nil {
			b.Fatal(err)
		}
		peak = max(peak, stop()-base)
		runtime.GC()
		held = testutil.HeapBytes() - base
		p.Close()
		b.StopTimer()
		_ = os.RemoveAll(filepath.Join(dir, "palace"))
		b.StartTimer()
	}
	b.ReportMetric(float64(info.Size())/(1<<20), "file-MB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peak)/float64(info.Size()), "heap/file")
	b.ReportMetric(float64(held)/(1<<20), "palace-MB")
}
