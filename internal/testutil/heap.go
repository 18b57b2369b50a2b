package testutil

import (
	"runtime/metrics"
	"sync"
	"time"
)

// heapObjects is the runtime metric of the bytes held by heap objects,
// live ones and those the GC has not yet freed.
const heapObjects = "/memory/classes/heap/objects:bytes"

// HeapBytes returns the bytes heap objects hold now.
func HeapBytes() uint64 {
	s := []metrics.Sample{{Name: heapObjects}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// HeapPeak samples HeapBytes every millisecond until the function it
// returns is called, which returns the highest sample. A sample can miss
// a short peak but never exceeds one, so a test may assert only that
// memory stayed below a bound.
func HeapPeak() (stop func() uint64) {
	var (
		mu   sync.Mutex
		peak = HeapBytes()
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	sample := func() {
		if b := HeapBytes(); b > peak {
			peak = b
		}
	}
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				mu.Lock()
				sample()
				mu.Unlock()
			}
		}
	})
	return func() uint64 {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		sample()
		return peak
	}
}
