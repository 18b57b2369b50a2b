package syncthing

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

// collector gathers what a Watcher delivers.
type collector struct {
	mu  sync.Mutex
	evs []ConflictEvent
}

func (c *collector) handle(_ context.Context, ev ConflictEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evs = append(c.evs, ev)
}

func (c *collector) all() []ConflictEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ConflictEvent(nil), c.evs...)
}

// waitPath waits until an event for path with action was delivered.
func (c *collector) waitPath(t *testing.T, path, action string) ConflictEvent {
	t.Helper()
	var found ConflictEvent
	defer func() {
		if t.Failed() {
			t.Logf("delivered: %+v", c.all())
		}
	}()
	testutil.WaitFor(t, "delivery of "+action+" "+path, func() bool {
		for _, ev := range c.all() {
			if ev.Path == path && ev.Action == action {
				found = ev
				return true
			}
		}
		return false
	})
	return found
}

// fastOpts keeps the unit tests quick.
func fastOpts(log *logBuffer) WatcherOptions {
	return WatcherOptions{
		Logger:          log.logger(),
		PollTimeout:     time.Second,
		MinBackoff:      5 * time.Millisecond,
		MaxBackoff:      40 * time.Millisecond,
		StatusInterval:  time.Minute,
		RefreshInterval: 50 * time.Millisecond,
	}
}

// runWatcher starts w.Run and returns a function that cancels it and waits
// until Run has returned.
func runWatcher(t *testing.T, w *Watcher) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	testutil.WaitFor(t, "watcher to start", func() bool { return w.Status().Running })
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			wait, stop := testutil.CleanupContext(t)
			defer stop()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run returned %v", err)
				}
			case <-wait.Done():
				t.Fatal("Run did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

const conflictFile = "memory.sync-conflict-20250102-030405-"

// touch creates root/rel (and its directories) and returns its path.
func touch(t *testing.T, root, rel string) string {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("losing version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWatcherDeliversConflicts(t *testing.T) {
	t.Parallel()
	f := newFakeSyncthing(t)
	root := t.TempDir()
	f.addFolder("hive", "Hive", root)
	winner := testDeviceID("dwight-laptop")
	f.addDevice(winner, "dwight-laptop")
	short := winner.Short()
	copyRel := filepath.Join("agents", "dwight", conflictFile+short+".md")

	var log logBuffer
	var got collector
	w := NewWatcher(f.client(t), got.handle, fastOpts(&log))
	runWatcher(t, w)

	// Noise first: ordinary files, directories, failed pulls.
	f.emitDisk("hive", "agents/dwight/memory.md", "modified")
	f.emit("disk", EventLocalChangeDetected, map[string]string{"folder": "hive", "path": "x.sync-conflict-20250102-030405-" + short, "type": "dir", "action": "modified"})
	f.emit("items", EventItemFinished, map[string]any{"folder": "hive", "item": copyRel, "type": "file", "action": "update", "error": "pull failed"})
	// The conflict copy, reported by three events; one delivery expected.
	abs := touch(t, root, copyRel)
	f.emitDisk("hive", copyRel, "modified")
	f.emit("items", EventItemFinished, map[string]any{"folder": "hive", "item": copyRel, "type": "file", "action": "update", "error": nil})
	f.emit("items", EventLocalIndexUpdated, map[string]any{"folder": "hive", "filenames": []string{copyRel}})

	ev := got.waitPath(t, abs, ActionModified)
	if ev.Original != filepath.Join(root, "agents", "dwight", "memory.md") {
		t.Errorf("Original = %q", ev.Original)
	}
	if ev.FolderID != "hive" || ev.FolderLabel != "Hive" || ev.RelPath != copyRel {
		t.Errorf("folder fields = %q %q %q", ev.FolderID, ev.FolderLabel, ev.RelPath)
	}
	if !ev.WinnerKnown || ev.Winner.ID != winner || ev.Winner.Name != "dwight-laptop" || ev.Name.ShortDevice != short {
		t.Errorf("winner = %+v (known %v), short %q", ev.Winner, ev.WinnerKnown, ev.Name.ShortDevice)
	}
	if ev.Time.IsZero() || ev.Source == "" {
		t.Errorf("event lacks time or source: %+v", ev)
	}

	// Resolution: the copy is deleted; LocalIndexUpdated finds it gone.
	if err := os.Remove(abs); err != nil {
		t.Fatal(err)
	}
	f.emit("items", EventLocalIndexUpdated, map[string]any{"folder": "hive", "filenames": []string{copyRel}})
	got.waitPath(t, abs, ActionDeleted)
	f.emitDisk("hive", copyRel, "deleted")

	// An unknown winner still gets delivered.
	other := filepath.Join("agents", "jim", conflictFile+"ZZZZZZZ.md")
	touch(t, root, other)
	f.emitDisk("hive", other, "modified")
	ev = got.waitPath(t, filepath.Join(root, other), ActionModified)
	if ev.WinnerKnown {
		t.Errorf("unknown short id resolved to %+v", ev.Winner)
	}

	// A stream moves since on after the handler took the event.
	testutil.WaitFor(t, "since to advance", func() bool { st := w.Status(); return st.Since == 5 && st.ItemSince == 4 })
	st := w.Status()
	if !st.Connected || st.LastError != nil || st.ItemSince != 4 || st.Delivered != 3 || st.Restarts != 0 {
		t.Errorf("status = %+v", st)
	}
	if n := len(got.all()); n != 3 {
		t.Errorf("delivered %d events, want 3: %+v", n, got.all())
	}
}

func TestWatcherRefreshesFolderMap(t *testing.T) {
	t.Parallel()
	f := newFakeSyncthing(t)
	rootA, rootB := t.TempDir(), t.TempDir()
	f.addFolder("a", "A", rootA)
	var log logBuffer
	var got collector
	w := NewWatcher(f.client(t), got.handle, fastOpts(&log))
	runWatcher(t, w)

	touch(t, rootA, conflictFile+"ABCDEFG.md")
	touch(t, rootB, conflictFile+"ABCDEFG.md")
	touch(t, rootA, filepath.Join("z", conflictFile+"ABCDEFG.md"))
	f.emitDisk("a", conflictFile+"ABCDEFG.md", "modified")
	got.waitPath(t, filepath.Join(rootA, conflictFile+"ABCDEFG.md"), ActionModified)
	before := f.requestCount("/rest/config/folders")

	// A folder added after the watcher loaded its map.
	f.addFolder("b", "B", rootB)
	f.emitDisk("b", conflictFile+"ABCDEFG.md", "modified")
	got.waitPath(t, filepath.Join(rootB, conflictFile+"ABCDEFG.md"), ActionModified)
	if after := f.requestCount("/rest/config/folders"); after != before+1 {
		t.Errorf("folder map fetched %d more times, want 1", after-before)
	}

	// A folder nobody knows: dropped with one warning, not refetched per event.
	for range 3 {
		f.emitDisk("ghost", conflictFile+"ABCDEFG.md", "modified")
	}
	f.emitDisk("a", "z/"+conflictFile+"ABCDEFG.md", "modified")
	got.waitPath(t, filepath.Join(rootA, "z", conflictFile+"ABCDEFG.md"), ActionModified)
	if n := log.count("does not list"); n != 1 {
		t.Errorf("%d warnings about the unknown folder, want 1\n%s", n, log.String())
	}
	if n := len(got.all()); n != 3 {
		t.Errorf("delivered %d, want 3", n)
	}
}

func TestWatcherRecoversFromRestart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// eventsAfter is how many events the restarted Syncthing logs
		// before the conflict: fewer than before (stale since would
		// hide them) or more (ids look valid but skip the first ones).
		eventsAfter int
		down        bool // the restart also drops connections
		emptyBody   bool // the poll in flight ends with an empty 200
		sameSecond  bool // startTime unchanged, only uptime went back
	}{
		{"fewer events, seen by empty polls", 0, false, false, false},
		{"more events, seen by startTime", 8, false, false, false},
		{"connections dropped", 0, true, false, false},
		{"empty 200 body", 0, false, true, false},
		{"same start second, seen by uptime", 0, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeSyncthing(t)
			root := t.TempDir()
			f.addFolder("hive", "Hive", root)
			var log logBuffer
			var got collector
			w := NewWatcher(f.client(t), got.handle, fastOpts(&log))
			runWatcher(t, w)
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("status %+v\n%s", w.Status(), log.String())
				}
			})

			for i := range 5 {
				f.emitDisk("hive", filepath.Join("n", strings.Repeat("x", i+1)+".md"), "modified")
			}
			first := filepath.Join("a", conflictFile+"ABCDEFG.md")
			touch(t, root, first)
			f.emitDisk("hive", first, "modified")
			got.waitPath(t, filepath.Join(root, first), ActionModified)
			testutil.WaitFor(t, "since 6", func() bool { return w.Status().Since == 6 })

			if tt.emptyBody {
				var once sync.Once
				f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
					hit := false
					if r.URL.Path == "/rest/events/disk" {
						once.Do(func() { hit = true })
					}
					if hit {
						w.WriteHeader(http.StatusOK) // and no body
					}
					return hit
				})
			}
			f.age(30)
			if tt.sameSecond {
				// Let the watcher see the old uptime first: a request
				// counted may not have read it yet.
				testutil.WaitFor(t, "the watcher to see uptime 30", func() bool {
					w.mu.Lock()
					defer w.mu.Unlock()
					return w.uptime == 30
				})
			}
			if tt.down {
				f.down()
			}
			if tt.sameSecond {
				f.restartSameSecond()
			} else {
				f.restart()
			}
			if tt.down {
				f.upAgain()
			}
			// The conflict gets id 1, which the watcher has already
			// passed; with eventsAfter the new ids then overtake the old
			// since, so the stale poll returns events (but not this one).
			second := filepath.Join("b", conflictFile+"HIJKLMN.md")
			touch(t, root, second)
			if id := f.emitDisk("hive", second, "modified"); id != 1 {
				t.Fatalf("test setup: conflict got id %d, want 1", id)
			}
			for i := range tt.eventsAfter {
				f.emitDisk("hive", filepath.Join("m", strings.Repeat("y", i+1)+".md"), "modified")
			}
			got.waitPath(t, filepath.Join(root, second), ActionModified)
			testutil.WaitFor(t, "restart to be counted", func() bool { return w.Status().Restarts == 1 })
			if n := log.count("syncthing restarted"); n != 1 {
				t.Errorf("%d restart log lines, want 1\n%s", n, log.String())
			}
		})
	}
}

func TestWatcherIDsGoBackwards(t *testing.T) {
	t.Parallel()
	// Ids reset although the start time stays the same (a restart within
	// the clock's resolution, or a proxy in between): the watcher must
	// still re-read from the start.
	f := newFakeSyncthing(t)
	root := t.TempDir()
	f.addFolder("hive", "Hive", root)
	var log logBuffer
	var got collector
	w := NewWatcher(f.client(t), got.handle, fastOpts(&log))
	runWatcher(t, w)
	for i := range 3 {
		f.emitDisk("hive", strings.Repeat("x", i+1)+".md", "modified")
	}
	testutil.WaitFor(t, "since 3", func() bool { return w.Status().Since == 3 })

	// Replace the stream with one whose first id is below since, but make
	// the answer non-empty by serving it directly.
	f.setHook(func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/rest/events/disk" || r.URL.Query().Get("since") != "3" {
			return false
		}
		writeJSON(w, []Event{{ID: 1, Type: EventLocalChangeDetected, Time: time.Now(),
			Data: []byte(`{"folder":"hive","path":"ignored.md","action":"modified","type":"file"}`)}})
		return true
	})
	f.resetStreams()
	touch(t, root, conflictFile+"ABCDEFG.md")
	f.emitDisk("hive", conflictFile+"ABCDEFG.md", "modified")
	got.waitPath(t, filepath.Join(root, conflictFile+"ABCDEFG.md"), ActionModified)
}

func TestWatcherServerDownThenUp(t *testing.T) {
	t.Parallel()
	f := newFakeSyncthing(t)
	root := t.TempDir()
	f.addFolder("hive", "Hive", root)
	var log logBuffer
	var got collector
	tr := &countingTransport{rt: http.DefaultTransport}
	w := NewWatcher(f.client(t, WithHTTPClient(&http.Client{Transport: tr})), got.handle, fastOpts(&log))
	runWatcher(t, w)
	testutil.WaitFor(t, "first contact", func() bool { return w.Status().Connected })

	f.down()
	testutil.WaitFor(t, "many failed attempts", func() bool { return tr.failed.Load() >= 10 })
	st := w.Status()
	if st.Connected || st.LastError == nil {
		t.Errorf("while down: status = %+v", st)
	}

	f.upAgain()
	touch(t, root, conflictFile+"ABCDEFG.md")
	f.emitDisk("hive", conflictFile+"ABCDEFG.md", "modified")
	got.waitPath(t, filepath.Join(root, conflictFile+"ABCDEFG.md"), ActionModified)
	testutil.WaitFor(t, "connected again", func() bool { return w.Status().Connected })

	if n := log.count("syncthing unreachable"); n != 1 {
		t.Errorf("%d 'unreachable' lines for one outage, want 1\n%s", n, log.String())
	}
	if n := log.count("syncthing reachable again"); n != 1 {
		t.Errorf("%d 'reachable again' lines, want 1\n%s", n, log.String())
	}
	if n := log.count("connected to syncthing"); n != 1 {
		t.Errorf("%d 'connected' lines, want 1\n%s", n, log.String())
	}
}

func TestWatcherWrongKey(t *testing.T) {
	f := newFakeSyncthing(t)
	c, err := NewClient(f.url(), "wrong-key-that-must-not-leak")
	if err != nil {
		t.Fatal(err)
	}
	var log logBuffer
	var got collector
	w := NewWatcher(c, got.handle, fastOpts(&log))
	runWatcher(t, w)
	testutil.WaitFor(t, "an error", func() bool { return w.Status().LastError != nil })
	st := w.Status()
	if st.Connected || !errors.Is(st.LastError, ErrUnauthorized) {
		t.Errorf("status = %+v", st)
	}
	if !strings.Contains(st.LastError.Error(), "API key rejected") || strings.Contains(st.LastError.Error(), "wrong-key") {
		t.Errorf("error text = %q", st.LastError)
	}
	if strings.Contains(log.String(), "wrong-key") {
		t.Errorf("log leaks the key:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "API key rejected") {
		t.Errorf("log does not say why:\n%s", log.String())
	}
}

func TestWatcherStopsPromptly(t *testing.T) {
	f := newFakeSyncthing(t)
	f.addFolder("hive", "Hive", t.TempDir())
	base := runtime.NumGoroutine()

	var log logBuffer
	opts := fastOpts(&log)
	opts.PollTimeout = time.Minute // polls are in flight when we cancel
	ctx, cancel := context.WithCancel(context.Background())
	w := NewWatcher(f.client(t), func(context.Context, ConflictEvent) {}, opts)
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	testutil.WaitFor(t, "both polls in flight", func() bool {
		return f.requestCount("/rest/events/disk") > 0 && f.requestCount("/rest/events") > 0
	})
	if err := w.Run(ctx); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second Run = %v, want 'already running'", err)
	}
	cancel()
	wait, stop := testutil.WaitContext(t)
	defer stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v", err)
		}
	case <-wait.Done():
		t.Fatal("Run did not return after cancel")
	}
	if w.Status().Running {
		t.Error("status still says running")
	}
	// Idle keep-alive connections of the client are not ours; drop them.
	http.DefaultClient.CloseIdleConnections()
	testutil.WaitFor(t, "goroutines to wind down", func() bool {
		runtime.GC()
		return runtime.NumGoroutine() <= base+2 // +2: the server's side of closed conns settling
	})

	if err := NewWatcher(f.client(t), nil, opts).Run(context.Background()); err == nil {
		t.Error("Run with nil handler returned no error")
	}
}

func TestWatcherLocalIndexUpdatedSkipsDirs(t *testing.T) {
	f := newFakeSyncthing(t)
	root := t.TempDir()
	f.addFolder("hive", "Hive", root)
	dirRel := "d" + conflictFile[len("memory"):] + "ABCDEFG"
	if err := os.MkdirAll(filepath.Join(root, dirRel), 0o755); err != nil {
		t.Fatal(err)
	}
	fileRel := conflictFile + "ABCDEFG.md"
	touch(t, root, fileRel)
	var log logBuffer
	var got collector
	w := NewWatcher(f.client(t), got.handle, fastOpts(&log))
	runWatcher(t, w)
	f.emit("items", EventLocalIndexUpdated, map[string]any{"folder": "hive", "filenames": []string{dirRel, fileRel}})
	got.waitPath(t, filepath.Join(root, fileRel), ActionModified)
	testutil.WaitFor(t, "item since", func() bool { return w.Status().ItemSince == 1 })
	if n := len(got.all()); n != 1 {
		t.Errorf("delivered %d, want 1 (directory must be skipped): %+v", n, got.all())
	}
}

func TestBackoff(t *testing.T) {
	// The waits themselves are internal/backoff's (tested there); the
	// watcher's options bound them.
	w := NewWatcher(&Client{base: &url.URL{}}, nil, WatcherOptions{MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second})
	if d := w.backoff(0); d < 50*time.Millisecond || d > 100*time.Millisecond {
		t.Fatalf("first wait %s, want within [50ms, 100ms]", d)
	}
	if d := w.backoff(60); d < 500*time.Millisecond || d > time.Second {
		t.Fatalf("wait after 60 failures %s, want within [500ms, 1s]", d)
	}
}

// TestLateAnswersKeepOneLinePerOutage: the two streams' requests overlap,
// so one can be answered (or fail) after another stream has already
// noted the change. An answer to a request made before an outage was
// noted once logged "reachable again" in the middle of it; a failure of a
// request dialled during the outage, noted after the reconnect, once
// logged a second "unreachable" (TestWatcherServerDownThenUp under load).
// Only a request made after the last change of state changes it again.
func TestLateAnswersKeepOneLinePerOutage(t *testing.T) {
	refused := errors.New("connection refused")
	tests := []struct {
		name string
		// run notes outcomes on a watcher that noted first contact for
		// a request made at connect.
		run           func(w *Watcher, connect time.Time)
		wantConnected bool
		wantDown      int // "unreachable" lines
		wantBack      int // "reachable again" lines
	}{
		{"answer from before the outage", func(w *Watcher, connect time.Time) {
			w.noteFailure(time.Now(), refused)
			w.noteSuccess(connect)
		}, false, 1, 0},
		{"failure from during the outage, noted after the reconnect", func(w *Watcher, _ time.Time) {
			w.noteFailure(time.Now(), refused)
			during := time.Now()
			w.noteSuccess(time.Now())
			w.noteFailure(during, refused)
		}, true, 1, 1},
		{"failure from before first contact", func(w *Watcher, connect time.Time) {
			w.noteFailure(connect, refused)
		}, true, 0, 0},
		{"a second outage", func(w *Watcher, _ time.Time) {
			for range 2 {
				w.noteFailure(time.Now(), refused)
				w.noteFailure(time.Now(), refused)
				w.noteSuccess(time.Now())
			}
		}, true, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSyncthing(t)
			var log logBuffer
			w := NewWatcher(f.client(t), func(context.Context, ConflictEvent) {}, fastOpts(&log))
			connect := time.Now()
			w.noteSuccess(connect)
			tt.run(w, connect)
			if st := w.Status(); st.Connected != tt.wantConnected {
				t.Errorf("connected = %v, want %v", st.Connected, tt.wantConnected)
			}
			for line, want := range map[string]int{"syncthing unreachable": tt.wantDown, "syncthing reachable again": tt.wantBack, "connected to syncthing": 1} {
				if n := log.count(line); n != want {
					t.Errorf("%d %q lines, want %d\n%s", n, line, want, log.String())
				}
			}
		})
	}
}

// TestStatusAnswersAppliedInOrder: both streams check /rest/system/status,
// and an answer can arrive after one to a request made later. Applied
// late, an answer from before a restart looked like a second restart (and
// the next like a third), and an older, smaller uptime like a restart.
func TestStatusAnswersAppliedInOrder(t *testing.T) {
	tests := []struct {
		name string
		// change is what happens between the slow request and the fast one.
		change       func(f *fakeSyncthing)
		wantRestarts int
	}{
		{"answer from before a restart", (*fakeSyncthing).restart, 1},
		{"answer with a smaller uptime", func(f *fakeSyncthing) { f.age(1) }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeSyncthing(t)
			var log logBuffer
			w := NewWatcher(f.client(t), func(context.Context, ConflictEvent) {}, fastOpts(&log))
			ctx := context.Background()
			if err := w.checkRestart(ctx); err != nil {
				t.Fatal(err)
			}
			f.age(10)

			// The first status request reads the state, then waits to
			// be released before it answers.
			arrived, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			f.setHook(func(rw http.ResponseWriter, r *http.Request) bool {
				slow := false
				if r.URL.Path == "/rest/system/status" {
					once.Do(func() { slow = true })
				}
				if !slow {
					return false
				}
				f.mu.Lock()
				st := map[string]any{"myID": f.myID.String(), "startTime": f.startTime, "uptime": f.uptime}
				f.mu.Unlock()
				close(arrived)
				<-release
				writeJSON(rw, st)
				return true
			})
			slowDone := make(chan error, 1)
			go func() { slowDone <- w.checkRestart(ctx) }()
			<-arrived
			tt.change(f)
			if err := w.checkRestart(ctx); err != nil {
				t.Fatal(err)
			}
			want := w.Status()
			close(release)
			if err := <-slowDone; err != nil {
				t.Fatal(err)
			}
			got := w.Status()
			if got.Restarts != tt.wantRestarts || !got.StartTime.Equal(want.StartTime) {
				t.Errorf("after the late answer: restarts %d, start %s; want %d, %s\n%s",
					got.Restarts, got.StartTime, tt.wantRestarts, want.StartTime, log.String())
			}
		})
	}
}
