package daemon

import (
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// idleGC turns the garbage collector's timer off while the daemon is
// idle. The Go runtime forces a collection every two minutes
// (forcegcperiod) even when nothing allocates: each one marks the whole
// live heap (the palace) and wakes the scavenger, about 12 ms of CPU for
// 10,000 notes, more than an idle daemon's tick. A collector with
// GOGC=off forces none, so once the daemon has done no work for
// restDelay, idleGC sets GOGC=off with a memory limit at the heap goal
// GOGC had set: what allocates meanwhile (searches through the socket,
// the tick) is collected when it reaches the limit, where GOGC would
// have collected it. Work on the mine goroutine (a mine, a palace
// change), which may grow the live heap past that limit, restores the
// settings first. With GOGC=off already (the environment), it does
// nothing; a GOMEMLIMIT below the resting limit stays the limit.
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
	daemons int // daemons running
	busy    int // of them, those working
}

// restDelay is how long the daemon is idle before idleGC rests, so a
// burst of work does not switch the settings at every piece.
const restDelay = 10 * time.Second

// minRestHeadroom is the least the heap may grow while resting before a
// collection (GOGC's minimum heap is 4 MiB).
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
		g.percent, g.limit = gcSettings()
		g.read = true
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

// Working notes work outside a daemon's mine goroutine that allocates as
// much as a mine (the page of memminer ui reading every note): the
// collector runs as configured until done is called, rather than at the
// resting memory limit, where such work collects a hundred times over
// (seen: 147 collections in one read of 100k notes, 2 s instead of 0.2).
// Without a daemon in the process it changes nothing.
func Working() (done func()) { return processGC.working() }

func (g *idleGC) working() (done func()) {
	g.mu.Lock()
	g.busy++
	g.wakeLocked()
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.busy--
			g.idleLocked()
		})
	}
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

// rest turns the collector's timer off: GOGC=off under a memory limit
// that lets the heap grow to the goal of the next collection GOGC set,
// and no further. Nothing is collected now: the next collection comes
// when GOGC's would have, only no timer forces one before.
func (g *idleGC) rest() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.timer == nil || g.busy > 0 {
		return // work came meanwhile
	}
	g.timer = nil
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	used, objects, goal := ms.Sys-ms.HeapReleased, ms.HeapAlloc, ms.NextGC
	headroom := uint64(minRestHeadroom)
	if goal > objects+headroom {
		headroom = goal - objects
	}
	debug.SetMemoryLimit(min(int64(used+headroom), g.limit))
	debug.SetGCPercent(-1)
	g.resting = true
}

// gcSettings returns GOGC and the memory limit as they are. Setting
// either returns the setting before; a negative limit sets nothing.
// (runtime/metrics reads both, but its package init took 0.1 ms of every
// command, which all link this package.)
func gcSettings() (percent int, limit int64) {
	percent = debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}
