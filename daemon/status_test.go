package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/internal/testutil"
)

// TestStatusHeldUpMissesNoWork: a status caller held up while reading the
// daemon's state for any time (a loaded machine) never reports the daemon
// idle while work it found is in flight, nor reports it idle with a palace
// that lacks what was mined. Each case moves the daemon on, by its own
// code, in the middle of a status.
func TestStatusHeldUpMissesNoWork(t *testing.T) {
	type fixture struct {
		d      *Daemon
		w      *watcher
		angela string // angela's agent directory, keyed as the daemon keys it
	}
	// step runs the next piece of queued work as the worker does, and
	// reports whether there was one.
	step := func(f fixture) bool {
		w, ok := f.d.q.next()
		if ok {
			f.d.do(context.Background(), w)
			f.d.q.done()
		}
		return ok
	}
	drain := func(f fixture) {
		for step(f) {
		}
	}
	edit := func(t *testing.T, f fixture) {
		testutil.AppendFile(t, filepath.Join(f.angela, "memory.md"), "\n- The held-up status note.\n")
		f.w.touch(f.angela, time.Now())
	}
	tests := []struct {
		name  string
		setup func(*testing.T, fixture)
		// held is what the daemon does while the status is held up.
		held func(fixture)
		idle bool
	}{
		{
			name:  "the first scan runs",
			setup: func(t *testing.T, f fixture) { f.d.q.requestScan(triggerStart) },
			held:  func(f fixture) { step(f) },
		},
		{
			name: "the worker mines what the first scan queued",
			setup: func(t *testing.T, f fixture) {
				f.d.q.requestScan(triggerStart)
				step(f)
			},
			held: drain,
			idle: true,
		},
		{
			name: "a debounce window ends",
			setup: func(t *testing.T, f fixture) {
				f.d.q.requestScan(triggerStart)
				drain(f)
				edit(t, f)
			},
			held: func(f fixture) { f.w.fire(time.Now().Add(time.Hour)) },
		},
		{
			name: "the worker takes an agent whose debounce window runs",
			setup: func(t *testing.T, f fixture) {
				f.d.q.requestScan(triggerStart)
				drain(f)
				edit(t, f)
				f.w.fire(time.Now().Add(time.Hour))
				edit(t, f) // written again while queued
			},
			held: func(f fixture) {
				// Taken and mined, not yet marked done.
				if w, ok := f.d.q.next(); ok {
					f.d.do(context.Background(), w)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			hive := testHive(t, tmp)
			d, err := New(context.Background(), Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, ModelSpec: embed.Lexical, Logger: testLogger(t)})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			t.Cleanup(func() { d.Close() })
			w, err := newWatcher(d.hive, d, d.log, time.Millisecond, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.fw.Close() })
			f := fixture{d: d, w: w}
			for _, a := range d.listAgents().agents {
				if a.wing == "angela" {
					f.angela = a.dir
				}
			}
			if f.angela == "" {
				t.Fatal("no agent directory for angela in the example hive")
			}
			tt.setup(t, f)
			held := false
			d.testActivityGap = func() {
				if !held {
					held = true
					tt.held(f)
				}
			}
			st := d.Status(context.Background())
			if !held {
				t.Fatal("the status was not held up")
			}
			if got := st.Daemon.Idle(); got != tt.idle {
				t.Fatalf("idle %t, want %t: %+v", got, tt.idle, *st.Daemon)
			}
			if !st.Daemon.Idle() {
				return
			}
			agents, err := os.ReadDir(filepath.Join(hive, "agents"))
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range agents {
				if w, _ := wingOf(st, a.Name()); w.Notes == 0 || w.LastMine == nil {
					t.Errorf("idle, but wing %s shows %d notes, last mine %+v", a.Name(), w.Notes, w.LastMine)
				}
			}
		})
	}
}
