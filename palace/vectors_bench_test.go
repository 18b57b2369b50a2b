package palace

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkWingVectors times, for one wing of 1k, 10k and 100k notes with
// 512-d vectors (the sizes of bench/scale), reading the wing whole from
// its file into its chromem-go collection ("load": what a mine that
// changes the wing, wake-up or a merge pays; the palace's open is in it)
// and listing its vectors for the search view after a change ("list").
// Both report the process's CPU time per operation (cpu-ms/op), which a
// shared machine disturbs less than the wall time; load also reports the
// heap the read wing holds (MiB-held).
func BenchmarkWingVectors(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1000, 10000, 100000} {
		p := benchPalaceWith(b, hashVectors{}, 1, n)
		if err := p.Flush(); err != nil {
			b.Fatal(err)
		}
		dir := p.dir
		p.Close()
		b.Run(fmt.Sprintf("notes=%d/load", n), func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				openWhole(b, dir).Close()
			}
			reportCPU(b, cpu)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			held := openWhole(b, dir)
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB-held")
			held.Close()
		})
		b.Run(fmt.Sprintf("notes=%d/list", n), func(b *testing.B) {
			p := openWhole(b, dir)
			defer p.Close()
			w := p.wings["w000"]
			b.ReportAllocs()
			defer reportCPU(b, processCPU())
			for b.Loop() {
				w.invalidate()
				if _, err := viewOf(ctx, w); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// openWhole opens the palace at dir without the lock and reads its wings
// whole.
func openWhole(b *testing.B, dir string) *Palace {
	b.Helper()
	p, err := Open(context.Background(), dir, Options{Embedder: hashVectors{}, ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	p.thaw()
	if len(p.WholeWings()) != 1 || len(p.Damaged()) > 0 {
		b.Fatalf("wings read whole %v, damaged %v", p.WholeWings(), p.Damaged())
	}
	return p
}

// reportCPU reports the process's CPU time since cpu (processCPU) per
// operation of b, as cpu-ms/op.
func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(processCPU()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}
