package daemon

import (
	"math"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

// gcSettings reads GOGC and the memory limit.
func gcSettings() (int, int64) {
	s := readMetrics("/gc/gogc:percent", "/gc/gomemlimit:bytes")
	return int(s[0]), int64(s[1])
}

var sink []byte

// TestIdleGCRestsAndWakes: idle, the collector's timer is turned off
// under a memory limit that still collects garbage; work restores the
// settings.
func TestIdleGCRestsAndWakes(t *testing.T) {
	percent, limit := gcSettings()
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
	testutil.WaitFor(t, "the collector to rest", func() bool { p, _ := gcSettings(); return p < 0 })
	_, resting := gcSettings()
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
	if p, l := gcSettings(); p != percent || l != limit {
		t.Errorf("after work GOGC %d, limit %d; want %d, %d", p, l, percent, limit)
	}
	// Idle again: rests again after the delay.
	u.idle()
	testutil.WaitFor(t, "the collector to rest again", func() bool { p, _ := gcSettings(); return p < 0 })
	u.leave()
	if p, l := gcSettings(); p != percent || l != limit {
		t.Errorf("after the last daemon left GOGC %d, limit %d; want %d, %d", p, l, percent, limit)
	}
}
