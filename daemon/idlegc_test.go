package daemon

import (
	"math"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

// gcMetrics reads GOGC and the memory limit through runtime/metrics,
// which idleGC does not link.
func gcMetrics() (int, int64) {
	s := readMetrics("/gc/gogc:percent", "/gc/gomemlimit:bytes")
	return int(s[0]), int64(s[1])
}

// readMetrics reads runtime metrics of kind uint64.
func readMetrics(names ...string) []uint64 {
	samples := make([]rtmetrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	rtmetrics.Read(samples)
	out := make([]uint64, len(names))
	for i, s := range samples {
		if s.Value.Kind() == rtmetrics.KindUint64 {
			out[i] = s.Value.Uint64()
		}
	}
	return out
}

// gcSettings reads the settings runtime/metrics reads, and leaves them.
func TestGCSettingsAreTheMetrics(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	for _, set := range []struct {
		percent int
		limit   int64
	}{{100, math.MaxInt64}, {50, 1 << 30}, {-1, 1 << 29}, {300, math.MaxInt64}} {
		debug.SetGCPercent(set.percent)
		debug.SetMemoryLimit(set.limit)
		p, l := gcSettings()
		if mp, ml := gcMetrics(); p != mp || l != ml || p != set.percent || l != set.limit {
			t.Errorf("set GOGC %d, limit %d: gcSettings %d, %d; runtime/metrics %d, %d", set.percent, set.limit, p, l, mp, ml)
		}
		if mp, ml := gcMetrics(); mp != set.percent || ml != set.limit {
			t.Errorf("after gcSettings GOGC %d, limit %d; want %d, %d", mp, ml, set.percent, set.limit)
		}
	}
}

var sink []byte

// TestIdleGCRestsAndWakes: idle, the collector's timer is turned off
// under a memory limit that still collects garbage; work restores the
// settings.
func TestIdleGCRestsAndWakes(t *testing.T) {
	percent, limit := gcMetrics()
	if percent < 0 {
		t.Skip("GOGC=off in the environment: idleGC does nothing")
	}
	g := &idleGC{delay: time.Millisecond}
	u := g.join()
	other := g.join() // a second daemon: rests once both are idle
	u.idle()
	g.mu.Lock()
	waiting := g.timer != nil
	g.mu.Unlock()
	if waiting {
		t.Fatal("the collector is to rest while a daemon works")
	}
	other.leave()
	testutil.WaitFor(t, "the collector to rest", func() bool { p, _ := gcMetrics(); return p < 0 })
	_, resting := gcMetrics()
	if resting == math.MaxInt64 || resting > limit {
		t.Fatalf("resting memory limit %d, want one below %d", resting, limit)
	}
	// Garbage past the limit is still collected.
	before := readMetrics("/gc/cycles/total:gc-cycles")[0]
	for range 64 {
		sink = make([]byte, 1<<20)
	}
	if after := readMetrics("/gc/cycles/total:gc-cycles")[0]; after == before {
		t.Errorf("64 MiB of garbage while resting with a limit of %d bytes ran no collection", resting)
	}
	u.work()
	if p, l := gcMetrics(); p != percent || l != limit {
		t.Errorf("after work GOGC %d, limit %d; want %d, %d", p, l, percent, limit)
	}
	// Idle again: rests again after the delay.
	u.idle()
	testutil.WaitFor(t, "the collector to rest again", func() bool { p, _ := gcMetrics(); return p < 0 })
	u.leave()
	if p, l := gcMetrics(); p != percent || l != limit {
		t.Errorf("after the last daemon left GOGC %d, limit %d; want %d, %d", p, l, percent, limit)
	}
}

// TestIdleGCWakesForWork: work outside the mine goroutine (Working)
// restores the collector's settings at once and keeps it from resting
// until it is done; then it rests again.
func TestIdleGCWakesForWork(t *testing.T) {
	percent, limit := gcMetrics()
	if percent < 0 {
		t.Skip("GOGC=off in the environment: idleGC does nothing")
	}
	g := &idleGC{delay: time.Millisecond}
	u := g.join()
	u.idle()
	testutil.WaitFor(t, "the collector to rest", func() bool { p, _ := gcMetrics(); return p < 0 })
	done := g.working()
	if p, l := gcMetrics(); p != percent || l != limit {
		t.Errorf("working: GOGC %d, limit %d; want %d, %d", p, l, percent, limit)
	}
	g.mu.Lock()
	waiting := g.timer != nil
	g.mu.Unlock()
	if waiting {
		t.Error("the collector is to rest while work goes on")
	}
	done()
	done() // a second call changes nothing
	testutil.WaitFor(t, "the collector to rest again", func() bool { p, _ := gcMetrics(); return p < 0 })
	u.leave()
	if p, l := gcMetrics(); p != percent || l != limit {
		t.Errorf("after the last daemon left GOGC %d, limit %d; want %d, %d", p, l, percent, limit)
	}
}
