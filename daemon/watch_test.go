package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/testutil"
)

// recordingTarget is a watchTarget that records what the watcher says.
type recordingTarget struct {
	mined, debouncing []string
	dirChanges        []bool
	scans             []string
	skills            int
}

func (r *recordingTarget) skillsChanged() { r.skills++ }

func (r *recordingTarget) watchDegraded(string)    {}
func (r *recordingTarget) watchError()             {}
func (r *recordingTarget) rescan(trigger string)   { r.scans = append(r.scans, trigger) }
func (r *recordingTarget) agentChanged(dir string) { r.mined = append(r.mined, dir) }
func (r *recordingTarget) agentDirsChanged(refresh bool) {
	r.dirChanges = append(r.dirChanges, refresh)
}
func (r *recordingTarget) setDebouncing(dir string, on bool) {
	if on {
		r.debouncing = append(r.debouncing, dir)
	}
}

// TestWatcherEvents: the watcher maps events to agent directories by the
// hive's rules, debounces them into one mine, ignores conflict copies and
// hidden files, and tells of agent directories that come and go.
func TestWatcherEvents(t *testing.T) {
	tmp := t.TempDir()
	hv := filepath.Join(tmp, "hive")
	testutil.WriteFile(t, filepath.Join(hv, "agents", "pam", "memory.md"), "- x\n")
	if err := os.MkdirAll(filepath.Join(hv, "agents", "Bad Name"), 0o755); err != nil {
		t.Fatal(err)
	}
	h, err := hive.Open(hv, nil)
	if err != nil {
		t.Fatal(err)
	}
	const debounce = time.Second
	tests := []struct {
		name       string
		event      fsnotify.Event
		mined      bool
		dirChanges []bool
		skills     bool
	}{
		{"memory edit", fsnotify.Event{Name: "agents/pam/memory.md", Op: fsnotify.Write}, true, nil, false},
		{"other markdown", fsnotify.Event{Name: "agents/pam/notes.markdown", Op: fsnotify.Create}, true, nil, false},
		{"conflict copy", fsnotify.Event{Name: "agents/pam/memory.sync-conflict-20261201-095500.md", Op: fsnotify.Create}, false, nil, false},
		{"conflict copy with device", fsnotify.Event{Name: "agents/pam/memory.sync-conflict-20261201-095500-ABCDEF1.md", Op: fsnotify.Create}, false, nil, false},
		{"hidden file", fsnotify.Event{Name: "agents/pam/.memory.md.swp", Op: fsnotify.Write}, false, nil, false},
		{"in a hidden directory", fsnotify.Event{Name: "agents/pam/.git/x.md", Op: fsnotify.Write}, false, nil, false},
		{"not markdown", fsnotify.Event{Name: "agents/pam/image.png", Op: fsnotify.Write}, false, nil, false},
		{"chmod", fsnotify.Event{Name: "agents/pam/memory.md", Op: fsnotify.Chmod}, false, nil, false},
		{"outside agent directories", fsnotify.Event{Name: "README.md", Op: fsnotify.Write}, false, nil, false},
		{"agent directory removed", fsnotify.Event{Name: "agents/pam", Op: fsnotify.Remove}, true, []bool{false}, false},
		{"bad name appears", fsnotify.Event{Name: "agents/Bad Name", Op: fsnotify.Create}, false, []bool{true}, false},
		{"skill published", fsnotify.Event{Name: "skills/published/deploy", Op: fsnotify.Create}, false, nil, true},
		{"skill deprecated", fsnotify.Event{Name: "skills/published/deploy", Op: fsnotify.Rename}, false, nil, true},
		{"published skill edited", fsnotify.Event{Name: "skills/published/deploy/SKILL.md", Op: fsnotify.Write}, false, nil, true},
		{"skills folder made", fsnotify.Event{Name: "skills", Op: fsnotify.Create}, false, nil, true},
		{"packs", fsnotify.Event{Name: "packs/release.md", Op: fsnotify.Write}, false, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			to := &recordingTarget{}
			w, err := newWatcher(h, to, slog.New(slog.DiscardHandler), debounce, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			defer w.fw.Close()
			ev := tt.event
			ev.Name = filepath.Join(hv, filepath.FromSlash(ev.Name))
			now := time.Now()
			w.handle(ev, now)
			w.handle(ev, now.Add(debounce/2)) // a burst mines once
			w.fire(now.Add(2 * debounce))
			pam := hive.ResolveParent(filepath.Join(hv, "agents", "pam"))
			if got := slices.Equal(to.mined, []string{pam}); got != tt.mined {
				t.Errorf("mined %q, want pam's mine: %v", to.mined, tt.mined)
			}
			// A burst of changes to the skills is told once, after it.
			if want := map[bool]int{true: 1}[tt.skills]; to.skills != want {
				t.Errorf("skillsChanged told %d times, want %d", to.skills, want)
			}
			// Each of the two events says so.
			if want := append(slices.Clone(tt.dirChanges), tt.dirChanges...); !slices.Equal(to.dirChanges, want) {
				t.Errorf("agentDirsChanged calls %v, want %v", to.dirChanges, want)
			}
		})
	}
}

// eventGate stands between fsnotify and the watcher: while it is held, it
// reads no event, so fsnotify waits to send its next one and handles none
// after it.
type eventGate struct {
	hold, release chan struct{}
	stop          chan struct{} // closed when the test ends
}

// newEventGate returns a gate whose install is a Daemon.testWatcher hook.
// Call it before start, so the gate outlives the daemon.
func newEventGate(t *testing.T) *eventGate {
	g := &eventGate{hold: make(chan struct{}), release: make(chan struct{}), stop: make(chan struct{})}
	t.Cleanup(func() { close(g.stop) })
	return g
}

func (g *eventGate) install(w *watcher) {
	in, out := w.fw.Events, make(chan fsnotify.Event)
	w.events = out
	go func() {
		defer close(out)
		for {
			select {
			case <-g.stop:
				return
			case <-g.hold:
				select {
				case <-g.release:
				case <-g.stop:
					return
				}
			case ev, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- ev:
				case <-g.stop:
					return
				}
			}
		}
	}()
}

// TestStopsAfterAgentMovedOut: a daemon whose agent directories are moved
// out of the hive, and removed there, goes on watching, and stops when its
// context ends. Held back by the gate, fsnotify meets the move only after
// the directory is gone, when the kernel has dropped its watch already:
// fsnotify then reports an error while it holds the lock its other methods
// take (see watcher.run).
func TestStopsAfterAgentMovedOut(t *testing.T) {
	tmp := t.TempDir()
	hv := testHive(t, tmp)
	// Each move is a chance for the watcher to be inside an fsnotify call
	// when fsnotify reports the error; subdirectories, each a watch to
	// drop, widen the window.
	var movers []string
	for i := range 10 {
		agent := fmt.Sprintf("mover%d", i)
		movers = append(movers, agent)
		for j := range 5 {
			testutil.WriteFile(t, filepath.Join(hv, "agents", agent, fmt.Sprintf("topic%d", j), "notes.md"), fmt.Sprintf("- Note %d of %s.\n", j, agent))
		}
	}
	gate := newEventGate(t)
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hv}, func(d *Daemon) { d.testWatcher = gate.install })
	r.idle(t, 1)
	for _, agent := range movers {
		gate.hold <- struct{}{}
		gone := filepath.Join(tmp, agent+"-moved")
		if err := os.Rename(filepath.Join(hv, "agents", agent), gone); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(gone); err != nil {
			t.Fatal(err)
		}
		gate.release <- struct{}{}
		// The mine loop never ticks (an hour): only the watcher can notice.
		testutil.WaitFor(t, "wing "+agent+" orphaned", func() bool {
			st, err := r.c.Status(context.Background())
			w, _ := wingOf(st, agent)
			return err == nil && w.Orphaned
		})
	}
	testutil.AppendFile(t, filepath.Join(hv, "agents", "pam", "memory.md"), "\n- The kiln schedule moved to Thursdays.\n")
	testutil.WaitFor(t, "an edit after the moves", func() bool { return r.searchFinds(t, "kiln schedule", "pam", "kiln") })
	r.stop(t)
}
