package palace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/govern"
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
	return flushedSize(tb, p, "w")
}

// flushedSize flushes p and returns the size of the file of wing.
func flushedSize(tb testing.TB, p *Palace, wing string) int64 {
	tb.Helper()
	if err := p.Flush(); err != nil {
		tb.Fatal(err)
	}
	info, err := os.Stat(p.wingPath(wing))
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

// Writing a wing streams its notes' strings and vectors to disk, and a
// read-only open reads only its index section (wingfile.go): neither
// holds the wing encoded whole (issue 11), so what they allocate is
// proportional to the notes. The bytes allocated are the same on every
// run, so the bounds are exact enough to hold without timing. Per note (of
// 88 bytes of text), writing allocates about 235 bytes (265 with -race): the numbers the
// index section holds per note and the postings, which are written once
// all are known, the snapshot of the term dictionary (these notes have two
// terms no other note has, "postgres-N" and "N") and the index of note ids
// of the meta part (80 bytes in all for version 2, which held no index;
// 1,320 when gob built the notes as one message, 2,800 before the file was
// streamed). Opening allocates next to nothing: the index section is
// mapped, no note is decoded (1,670 for version 2, which built the notes and their
// BM25 index; 5,400 before the file was streamed).
func TestWingFilesAreStreamed(t *testing.T) {
	const notes = 50_000
	dir := filepath.Join(t.TempDir(), "palace")
	size := largeWing(t, dir, notes)
	t.Logf("wing file of %d notes: %d bytes", notes, size)

	p := openT(t, dir, nil, false)
	p.thaw("w")
	p.wings["w"].dirty = true
	before := totalAlloc()
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	perNote := float64(totalAlloc()-before) / notes
	t.Logf("writing the wing file allocated %.0f bytes a note", perNote)
	if perNote > 300 {
		t.Errorf("writing the wing file allocated %.0f bytes a note, want at most 300", perNote)
	}
	p.Close()

	before = totalAlloc()
	q := openT(t, dir, nil, true)
	perNote = float64(totalAlloc()-before) / notes
	t.Logf("opening the wing allocated %.0f bytes a note", perNote)
	if perNote > 50 {
		t.Errorf("opening the wing allocated %.0f bytes a note, want at most 50", perNote)
	}
	if n := len(q.Notes("w")); n != notes {
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
