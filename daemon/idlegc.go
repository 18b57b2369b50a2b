package daemon

import (
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync"
	"time"
)

// idleGC turns the garbage collector's timer off while the daemon is
// idle. The Go runtime forces a collection every two minutes
// (forcegcperiod) even when nothing allocates: each one marks the whole
// live heap (the palace), the largest CPU cost of an idle daemon after
// the mine loop's tick. A collector with GOGC=off does not force one, so
// once the daemon has done no work for restDelay, it collects once and
// switches GOGC off, with a memory limit of what it uses then plus the
// headroom GOGC would allow: whatever allocates meanwhile (searches
// through the socket, the tick) is still collected when it reaches the
// limit, as it would be at GOGC's goal. Work on the mine goroutine (a
// mine, a palace change) restores the settings first, since it may grow
// the live heap past that limit.
//
// The wait is the runtime's own two minutes, so a daemon that works now
// and then collects no more often than the runtime would have forced it
// to; a collection the runtime made since the work ended is not repeated.
// With GOGC=off already (the environment), it does nothing.
//
// The collector's settings are the process's: one idleGC serves every
// daemon of a process (tests, programs embedding the daemon), resting
// only while all of them are idle, and the settings are restored when
// the last one stops.
type idleGC struct {
	mu      sync.Mutex
	read    bool  // percent and limit hold the settings to restore
	percent int   // GOGC to restore; < 0: the user's off, do nothing
	limit   int64 // memory limit to restore
	delay   time.Duration
	timer   *time.Timer
	resting bool
	daemons int    // daemons running
	busy    int    // of them, those working
	cycles  uint64 // collections completed when work last ended
}

// restDelay is how long the daemon is idle before idleGC rests: the
// runtime's forced-collection period.
const restDelay = 2 * time.Minute

// minRestHeadroom is the least the heap may grow while resting before a
// collection, as GOGC's minimum heap of 4 MiB allows.
const minRestHeadroom = 4 << 20

// processGC is the process's idleGC.
var processGC = &idleGC{delay: restDelay}

// gcUser is one daemon's view of an idleGC; only its mine goroutine
// uses it.
type gcUser struct {
	g    *idleGC
	busy bool
}

// join counts a daemon that starts, working.
func (g *idleGC) join() *gcUser {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.daemons == 0 && !g.read {
		s := readMetrics("/gc/gogc:percent", "/gc/gomemlimit:bytes")
		g.percent, g.limit, g.read = int(s[0]), int64(s[1]), true
	}
	g.daemons++
	g.busy++
	g.wakeLocked()
	return &gcUser{g: g, busy: true}
}

// work notes that the mine goroutine is about to work: the collector runs
// as configured again.
func (u *gcUser) work() {
	if u.busy {
		return
	}
	u.busy = true
	u.g.mu.Lock()
	defer u.g.mu.Unlock()
	u.g.busy++
	u.g.wakeLocked()
}

// idle notes that the mine goroutine has nothing left to do: once every
// daemon is, the collector rests after the delay unless work comes first.
func (u *gcUser) idle() {
	if !u.busy {
		return
	}
	u.busy = false
	g := u.g
	g.mu.Lock()
	defer g.mu.Unlock()
	g.busy--
	g.idleLocked()
}

// idleLocked starts the wait once no daemon works (g.mu held).
func (g *idleGC) idleLocked() {
	if g.busy > 0 || g.daemons == 0 || g.percent < 0 || g.resting || g.timer != nil {
		return
	}
	g.cycles = readMetrics("/gc/cycles/total:gc-cycles")[0]
	g.timer = time.AfterFunc(g.delay, g.rest)
}

// leave counts a daemon that stops; after the last one the collector's
// settings are what they were before the first.
func (u *gcUser) leave() {
	g := u.g
	g.mu.Lock()
	defer g.mu.Unlock()
	if u.busy {
		g.busy--
	}
	g.daemons--
	if g.daemons == 0 {
		g.wakeLocked()
		g.read = false
		return
	}
	g.idleLocked()
}

// wakeLocked stops the wait and restores the collector's settings
// (g.mu held).
func (g *idleGC) wakeLocked() {
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	if g.resting {
		debug.SetGCPercent(g.percent)
		debug.SetMemoryLimit(g.limit)
		g.resting = false
	}
}

// rest collects (unless the runtime did since the work ended) and turns
// the collector's timer off.
func (g *idleGC) rest() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timer == nil || g.busy > 0 {
		return // work came meanwhile
	}
	g.timer = nil
	if readMetrics("/gc/cycles/total:gc-cycles")[0] == g.cycles {
		runtime.GC()
	}
	s := readMetrics("/memory/classes/total:bytes", "/memory/classes/heap/released:bytes", "/gc/heap/live:bytes")
	used, live := s[0]-s[1], s[2]
	limit := int64(used + max(live*uint64(g.percent)/100, minRestHeadroom))
	debug.SetMemoryLimit(min(limit, g.limit))
	debug.SetGCPercent(-1)
	g.resting = true
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
