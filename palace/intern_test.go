package palace

import (
	"runtime"
	"testing"
	"time"

	"github.com/memminer/memminer/memory/govern"
)

// internGovernance shares one copy of each governance while a note holds
// it, and its sweep removes the entries of copies nobody holds.
func TestInternGovernanceSharesAndSweeps(t *testing.T) {
	day := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	gov := func(i int) *govern.Note {
		return &govern.Note{Status: govern.Approved, Reason: "test intern", Date: day.AddDate(0, 0, i), Tags: []string{"intern"}}
	}
	governances.Lock()
	before := len(governances.m)
	governances.Unlock()
	held := internGovernance(gov(-1))
	if again := internGovernance(gov(-1)); again != held {
		t.Fatal("the same governance interned twice gave two copies")
	}
	if held.Tags[0] != "intern" || !sameGovernance(held, gov(-1)) {
		t.Fatalf("interned %+v", held)
	}
	// Many values nobody keeps: collected, their entries swept.
	for i := range 4 * minSweep {
		internGovernance(gov(i))
	}
	runtime.GC()
	for i := range 4 * minSweep {
		internGovernance(gov(100_000 + i))
	}
	runtime.GC()
	internGovernance(gov(-2))
	governances.Lock()
	n := len(governances.m)
	governances.Unlock()
	if n > before+5*minSweep {
		t.Errorf("%d entries after interning %d values, most of them collected, to %d", n, 8*minSweep+2, before)
	}
	if again := internGovernance(gov(-1)); again != held {
		t.Fatal("a governance still held lost its shared copy to a sweep")
	}
	runtime.KeepAlive(held)
}
