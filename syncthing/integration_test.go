package syncthing_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/syncthing"
	"github.com/memminer/memminer/syncthing/sttest"
)

// delivery is one conflict event with the time the handler got it.
type delivery struct {
	ev syncthing.ConflictEvent
	at time.Time
}

// recorder is a Watcher handler that keeps every delivery.
type recorder struct {
	mu   sync.Mutex
	all  []delivery
	node string
}

func (r *recorder) handle(_ context.Context, ev syncthing.ConflictEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, delivery{ev, time.Now()})
}

// wait returns the first delivery of path in state action, failing the
// test when none arrives before its deadline.
func (r *recorder) wait(t *testing.T, path, action string) delivery {
	t.Helper()
	var found delivery
	testutil.Eventually(t, fmt.Sprintf("%s's watcher to report %s %s", r.node, action, path), func(context.Context) (bool, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, d := range r.all {
			if d.ev.Path == path && d.ev.Action == action {
				found = d
				return true, nil
			}
		}
		return false, nil
	})
	return found
}

// tWriter sends log output to t.Log.
type tWriter struct {
	t    testing.TB
	name string
}

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s: %s", w.name, strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// watch runs a Watcher on n until the test ends.
func watch(t *testing.T, n *sttest.Node) (*syncthing.Watcher, *recorder) {
	t.Helper()
	rec := &recorder{node: n.Name()}
	w := syncthing.NewWatcher(n.Client(), rec.handle, syncthing.WatcherOptions{
		Logger:      slog.New(slog.NewTextHandler(tWriter{t, n.Name()}, nil)),
		PollTimeout: 10 * time.Second,
		MinBackoff:  50 * time.Millisecond,
		MaxBackoff:  time.Second,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil {
			t.Errorf("watcher on %s: %v", n.Name(), err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		wait, stop := testutil.CleanupContext(t)
		defer stop()
		select {
		case <-done:
		case <-wait.Done():
			t.Errorf("watcher on %s did not stop", n.Name())
		}
	})
	return w, rec
}

// checkConflict asserts what the watcher on c.On reported for c.
func checkConflict(t *testing.T, c sttest.Conflict, got syncthing.ConflictEvent) {
	t.Helper()
	if got.Path != c.CopyPath {
		t.Errorf("Path = %s, want %s", got.Path, c.CopyPath)
	}
	wantOriginal := filepath.Join(c.On.FolderPath(), filepath.FromSlash(c.Rel))
	if got.Original != wantOriginal {
		t.Errorf("Original = %s, want %s", got.Original, wantOriginal)
	}
	if got.FolderID != sttest.FolderID || filepath.ToSlash(got.RelPath) != c.CopyRel {
		t.Errorf("folder %q rel %q, want %q %q", got.FolderID, got.RelPath, sttest.FolderID, c.CopyRel)
	}
	if got.Name.ShortDevice != c.Winner.Short() {
		t.Errorf("short device = %q, want the winner %s's %q", got.Name.ShortDevice, c.Winner.Name(), c.Winner.Short())
	}
	if !got.WinnerKnown || got.Winner.ID != c.Winner.ID() || got.Winner.Name != c.Winner.Name() {
		t.Errorf("winner = %+v (known %v), want %s", got.Winner, got.WinnerKnown, c.Winner.Name())
	}
	content, err := os.ReadFile(c.CopyPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(content) != string(c.LoserContent) {
		t.Errorf("conflict copy holds %q, want the loser's %q", content, c.LoserContent)
	}
}

// other returns the node of the pair that is not n.
func other(n, a, b *sttest.Node) *sttest.Node {
	if n == a {
		return b
	}
	return a
}

func TestIntegrationConflicts(t *testing.T) {
	t.Parallel()
	start := time.Now()
	a, b := sttest.StartPair(t)
	t.Logf("pair up after %s", time.Since(start).Round(time.Millisecond))
	ctx := context.Background()

	// The config.xml helper reads the key the nodes were started with.
	key, err := syncthing.APIKeyFromConfig(a.ConfigPath())
	if err != nil || key != a.APIKey() {
		t.Fatalf("APIKeyFromConfig(alpha) = %v (matches: %v)", err, key == a.APIKey())
	}
	folders, err := a.Client().Folders(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if f := folders[sttest.FolderID]; f.Path != a.FolderPath() || len(f.Devices) != 2 {
		t.Fatalf("alpha's folders = %+v", folders)
	}
	devices, err := a.Client().Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := syncthing.DeviceByShort(devices, b.Short()); !ok || d.Name != "bravo" {
		t.Fatalf("alpha resolves bravo's short id to %+v, %v", d, ok)
	}

	wa, ra := watch(t, a)
	wb, rb := watch(t, b)
	recs := map[*sttest.Node]*recorder{a: ra, b: rb}

	const rel = "agents/dwight/memory.md"
	base := []byte("# dwight\n- likes beets\n")
	sttest.WriteFile(t, a, rel, base)
	sttest.WaitContent(t, b, rel, base)

	// Conflict 1: alpha wins, so bravo's version becomes the copy.
	c1 := sttest.ProduceConflict(t, a, b, rel)
	t.Logf("conflict 1: %s on %s", c1.CopyRel, c1.On.Name())
	d := recs[c1.On].wait(t, c1.CopyPath, syncthing.ActionModified)
	checkConflict(t, c1, d.ev)
	t.Logf("conflict 1 reported %s after the copy appeared", d.at.Sub(c1.Appeared).Round(time.Microsecond))
	// Syncthing then replicates the copy; the other side reports it too.
	far := other(c1.On, a, b)
	recs[far].wait(t, filepath.Join(far.FolderPath(), filepath.FromSlash(c1.CopyRel)), syncthing.ActionModified)
	sttest.WaitContent(t, a, rel, c1.WinnerContent)
	sttest.WaitContent(t, b, rel, c1.WinnerContent)

	// Kill alpha and serve the same home again: its event ids restart.
	restarted := a
	restarted.Restart()
	sttest.WaitConnected(t, a, b)
	t.Logf("alpha restarted and reconnected")

	// Conflict 2, the other way round, so the copy appears on alpha.
	c2 := sttest.ProduceConflict(t, b, a, rel)
	t.Logf("conflict 2: %s on %s", c2.CopyRel, c2.On.Name())
	d = recs[c2.On].wait(t, c2.CopyPath, syncthing.ActionModified)
	checkConflict(t, c2, d.ev)
	// Whichever side the copy appeared on first, it reaches alpha, whose
	// watcher must have survived the restart.
	recs[restarted].wait(t, filepath.Join(restarted.FolderPath(), filepath.FromSlash(c2.CopyRel)),
		syncthing.ActionModified)
	if st := wa.Status(); st.Restarts < 1 || !st.Connected {
		t.Errorf("alpha's watcher status after restart = %+v", st)
	}
	if st := wb.Status(); st.Restarts != 0 || !st.Connected {
		t.Errorf("bravo's watcher status = %+v", st)
	}

	// The filesystem backstop sees both copies too.
	found, err := hive.ScanConflicts(ctx, a.FolderPath())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range found {
		names = append(names, filepath.Base(f.Path))
	}
	sort.Strings(names)
	want := []string{filepath.Base(c1.CopyPath), filepath.Base(c2.CopyPath)}
	sort.Strings(want)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("ScanConflicts on alpha = %v, want %v", names, want)
	}
	t.Logf("integration test body took %s", time.Since(start).Round(time.Millisecond))
}

// TestConflictLatency measures the time from a conflict copy appearing on
// disk (its inode change time: Syncthing makes it by renaming) to the
// Watcher delivering it, over 10 real conflicts. It runs only with
// MEMMINER_BENCH=1.
func TestConflictLatency(t *testing.T) {
	if os.Getenv("MEMMINER_BENCH") != "1" {
		t.Skip("set MEMMINER_BENCH=1 to measure conflict latency")
	}
	a, b := sttest.StartPair(t)
	_, ra := watch(t, a)
	_, rb := watch(t, b)
	recs := map[*sttest.Node]*recorder{a: ra, b: rb}
	const n = 10
	var lat []time.Duration
	for i := range n {
		winner, loser := a, b
		if i%2 == 1 {
			winner, loser = b, a
		}
		rel := fmt.Sprintf("agents/agent%02d/memory.md", i)
		c := sttest.ProduceConflict(t, winner, loser, rel)
		d := recs[c.On].wait(t, c.CopyPath, syncthing.ActionModified)
		l := d.at.Sub(c.Appeared)
		t.Logf("conflict %d on %s (%s): %s", i+1, c.On.Name(), d.ev.Source, l.Round(time.Microsecond))
		lat = append(lat, l)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	median := (lat[n/2-1] + lat[n/2]) / 2
	t.Logf("conflict copy on disk -> Watcher delivery over %d conflicts: median %s, min %s, max %s",
		n, median.Round(time.Microsecond), lat[0].Round(time.Microsecond), lat[n-1].Round(time.Microsecond))
}
