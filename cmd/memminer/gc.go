package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// firstCollectionAt is the heap a command may reach before its first
// garbage collection. The runtime's first goal is 4 MiB, which a search
// of a large palace or a mine after one append passes two to four times:
// each collection costs a millisecond or more, several percent of such a
// command (BENCHMARKS.md). Commands that need more than this collect as
// usual from then on.
const firstCollectionAt = 64 << 20

// lateGC defers a short command's first collection (see firstCollectionAt)
// and puts the collector back as configured when that collection has run,
// or when a long-running command (the daemon, an MCP server) starts and
// calls [lateGC.restore]. It does nothing when GOGC or GOMEMLIMIT is set:
// the user's settings stand.
type lateGC struct {
	once   sync.Once
	active atomic.Bool
}

// processGC is the process's lateGC; main starts it, so commands run in
// process by the tests collect as usual.
var processGC lateGC

// start turns the collector off until the heap reaches firstCollectionAt.
func (g *lateGC) start(getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	g.active.Store(true)
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(firstCollectionAt)
	// The cleanup runs after the first collection, whatever triggered it.
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(g *lateGC) { g.restore() }, g)
}

// restore puts the collector back to the defaults (GOGC=100, no memory
// limit); after the first call it does nothing.
func (g *lateGC) restore() {
	if !g.active.Load() {
		return
	}
	g.once.Do(func() {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
}
