package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestLateGC(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	settings := func() (int, int64) {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p, debug.SetMemoryLimit(-1)
	}

	t.Run("user settings stand", func(t *testing.T) {
		for _, e := range []func(string) string{env("GOGC", "200"), env("GOMEMLIMIT", "1GiB")} {
			debug.SetGCPercent(100)
			var g lateGC
			g.start(e)
			if p, l := settings(); p != 100 || l != math.MaxInt64 {
				t.Fatalf("with the user's setting: GOGC %d, limit %d; want untouched", p, l)
			}
			g.restore()
			if p, _ := settings(); p != 100 {
				t.Fatalf("restore changed the user's GOGC to %d", p)
			}
		}
	})
	t.Run("restore", func(t *testing.T) {
		var g lateGC
		g.start(env())
		if p, l := settings(); p != -1 || l != firstCollectionAt {
			t.Fatalf("started: GOGC %d, limit %d; want off, %d", p, l, firstCollectionAt)
		}
		g.restore()
		if p, l := settings(); p != 100 || l != math.MaxInt64 {
			t.Fatalf("restored: GOGC %d, limit %d; want 100, none", p, l)
		}
	})
	t.Run("first collection restores", func(t *testing.T) {
		var g lateGC
		g.start(env())
		deadline := time.Now().Add(10 * time.Second)
		for {
			runtime.GC()
			if p, l := settings(); p == 100 && l == math.MaxInt64 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the collector is still off after collections")
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}
