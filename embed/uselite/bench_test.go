package uselite

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// benchNotes returns n distinct notes of about pieces pieces each.
func benchNotes(m *Model, n, pieces int) []string {
	words := strings.Fields(`the agent decided to keep the palace on disk and rebuild it from markdown
		whenever the chunking rules change syncthing replicates memory files between machines while the
		daemon watches them and mines new notes into vectors for semantic search across every wing`)
	notes := make([]string, n)
	for i := range notes {
		var b strings.Builder
		for j := 0; len(m.Tokenize(b.String())) < pieces; j++ {
			b.WriteString(words[(i*7+j*3)%len(words)])
			b.WriteByte(' ')
		}
		notes[i] = strings.TrimSpace(b.String())
	}
	return notes
}

// The benchmarks that compare core counts (-cpu 1,2) loop over b.N
// instead of using b.Loop. A b.Loop benchmark is measured in full by the
// testing package's first call, which it makes before applying the first
// -cpu value: that row is measured at the GOMAXPROCS left over from the
// previous benchmark (or the default, all CPUs) and, with -count 1, the
// "-cpu 1" row of a 2-core machine is really a 2-core run (Go 1.26; see
// golang/go#49980). With b.N, that first call runs one iteration and is
// thrown away. Each benchmark also reports the GOMAXPROCS it ran at.

// BenchmarkQuery embeds one short search query.
func BenchmarkQuery(b *testing.B) {
	m := loadRealModel(b)
	q := []string{"how do we handle sync conflicts between agents?"}
	ctx := context.Background()
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		if _, err := m.Embed(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuTime()-cpu0).Seconds()*1e3/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
}

// BenchmarkBatch embeds batches of 50-piece notes and reports notes a
// second of wall time and of CPU time.
func BenchmarkBatch(b *testing.B) {
	m := loadRealModel(b)
	for _, size := range []int{1, 16, 64} {
		notes := benchNotes(m, size, 50)
		b.Run("notes="+strconv.Itoa(size), func(b *testing.B) {
			ctx := context.Background()
			cpu0 := cpuTime()
			b.ResetTimer()
			for range b.N {
				if _, err := m.Embed(ctx, notes); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(size*b.N)/b.Elapsed().Seconds(), "notes/s")
			// CPU time is steadier than wall time on a shared machine.
			cpu := (cpuTime() - cpu0).Seconds()
			b.ReportMetric(cpu*1e3/float64(size*b.N), "cpu-ms/note")
			b.ReportMetric(float64(size*b.N)/cpu, "notes/cpu-s")
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
		})
	}
}

// BenchmarkLoad opens the converted file.
func BenchmarkLoad(b *testing.B) {
	m := loadRealModel(b)
	for b.Loop() {
		if _, err := Open(m.Path()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResident embeds batches of 64 notes and reports the process's
// resident memory afterwards and at its peak (Linux). Run it alone
// (-run '^$' -bench Resident) so that other benchmarks do not add to the
// peak.
func BenchmarkResident(b *testing.B) {
	m := loadRealModel(b)
	notes := benchNotes(m, 64, 50)
	ctx := context.Background()
	for b.Loop() {
		if _, err := m.Embed(ctx, notes); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	if rss, ok := residentMB("VmRSS"); ok {
		b.ReportMetric(rss, "rss-MB")
	}
	if peak, ok := residentMB("VmHWM"); ok {
		b.ReportMetric(peak, "peak-rss-MB")
	}
}

// residentMB reads a memory figure (VmRSS, VmHWM) of this process in MB.
func residentMB(field string) (float64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kb float64
			if _, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &kb); err == nil {
				return kb / 1024, true
			}
		}
	}
	return 0, false
}
