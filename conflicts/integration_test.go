package conflicts

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/syncthing"
	"github.com/memminer/memminer/syncthing/sttest"
)

// syncthingComponent is a component following node's Syncthing, with
// quick retries so that a restart is noticed promptly.
func syncthingComponent(t *testing.T, node *sttest.Node, opts Options) *Component {
	t.Helper()
	opts.Syncthing = node.Client()
	opts.Watcher = syncthing.WatcherOptions{PollTimeout: 10 * time.Second, MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Second}
	return newComponent(t, opts)
}

// waitReported waits until Syncthing's event registers the conflict copy
// at path, then checks GET /conflicts lists the same record. It polls the
// registry itself: GET /conflicts walks the hive first and would find the
// copy by scan before the event arrives.
func waitReported(t *testing.T, r *running, path string) Conflict {
	t.Helper()
	var got Conflict
	testutil.Eventually(t, "memminer to report "+path, func(ctx context.Context) (bool, error) {
		for _, c := range r.comp.List().Conflicts {
			if c.Path == path {
				got = c
				return true, nil
			}
		}
		return false, nil
	})
	for _, c := range r.list(t, "").Conflicts {
		if c.Path == path {
			if c != got {
				t.Errorf("GET /conflicts lists %+v, the registry %+v", c, got)
			}
			return got
		}
	}
	t.Errorf("GET /conflicts does not list %s", path)
	return got
}

// checkReported asserts what memminer reported for the real conflict c.
func checkReported(t *testing.T, got Conflict, hive string, c sttest.Conflict) {
	t.Helper()
	want := Conflict{
		Path:       filepath.Join(hive, filepath.FromSlash(c.CopyRel)),
		Original:   filepath.Join(hive, filepath.FromSlash(c.Rel)),
		Wing:       "dwight",
		Detected:   got.Detected,
		Device:     c.Winner.Short(),
		DeviceName: c.Winner.Name(),
		FoundBy:    FoundByEvent,
	}
	if got != want {
		t.Errorf("reported\n %+v\nwant\n %+v", got, want)
	}
	if got.Detected.IsZero() || got.Detected.After(time.Now()) {
		t.Errorf("detected %s", got.Detected)
	}
}

// search returns the texts of the daemon's hits for query.
func search(t *testing.T, r *running, query string) []TestHit {
	t.Helper()
	hits, err := r.c.Search(context.Background(), query)
	if err != nil {
		t.Fatalf("search %q: %v", query, err)
	}
	return hits
}

// TestIntegrationSyncthing runs the daemon with the conflicts component on
// the folder two real Syncthing instances share, and makes real conflicts.
func TestIntegrationSyncthing(t *testing.T) {
	t.Parallel()
	a, b := sttest.StartPair(t)
	hive := a.FolderPath()
	const rel = "agents/dwight/memory.md"
	base := []byte("# dwight\n- likes beets\n")
	sttest.WriteFile(t, a, rel, base)
	sttest.WaitContent(t, b, rel, base)

	pal := filepath.Join(t.TempDir(), "palace")
	hookOut := filepath.Join(t.TempDir(), "alerts")
	logs := newLogRecorder(t)
	start := func() (*running, *Component) {
		comp := syncthingComponent(t, a, Options{Command: hookCommand(t, hookOut)})
		return startDaemon(t, pal, hive, comp, 0, logs.logger()), comp
	}
	r, comp := start()
	testutil.WaitFor(t, "the watcher to connect", func() bool { return comp.Snapshot().Syncthing.Connected })

	// Conflict 1: alpha wins, so the losing text reaches alpha only as
	// the conflict copy.
	c1 := sttest.ProduceConflict(t, a, b, rel)
	copy1 := filepath.Join(hive, filepath.FromSlash(c1.CopyRel))
	got := waitReported(t, r, copy1)
	checkReported(t, got, hive, c1)
	t.Logf("conflict 1 (%s) reported: %+v", c1.On.Name(), got)

	// The copy is never mined: once the winner's text is searchable, the
	// loser's is nowhere.
	testutil.Eventually(t, "the winning version to be mined", func(context.Context) (bool, error) {
		for _, h := range search(t, r, "written by alpha") {
			if h.Wing == "dwight" && strings.Contains(h.Text, "written by alpha") {
				return true, nil
			}
		}
		return false, nil
	})
	if hits := search(t, r, "losing side"); len(hits) != 0 {
		t.Fatalf("the conflict copy's text was mined: %+v", hits)
	}
	for _, h := range search(t, r, "dwight memory written") {
		if strings.Contains(h.Source, ".sync-conflict-") {
			t.Fatalf("conflict copy mined: %+v", h)
		}
	}

	// Merged: deleting the copy clears the conflict.
	if err := os.Remove(copy1); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "the conflict to clear", func(ctx context.Context) (bool, error) {
		var l List
		err := r.c.Get(ctx, "/conflicts", nil, &l)
		return err == nil && len(l.Conflicts) == 0, err
	})
	if st, err := r.c.Status(context.Background()); err != nil || st.ConflictsOpen != 0 {
		t.Fatalf("status conflicts_open = %d (%v) after the merge", st.ConflictsOpen, err)
	}

	// Syncthing restarts (its event ids start again); conflict 2, the
	// other way round, is still reported.
	a.Restart()
	sttest.WaitConnected(t, a, b)
	c2 := sttest.ProduceConflict(t, b, a, rel)
	copy2 := filepath.Join(hive, filepath.FromSlash(c2.CopyRel))
	got2 := waitReported(t, r, copy2)
	checkReported(t, got2, hive, c2)
	if st := comp.Snapshot().Syncthing; st.Restarts < 1 || !st.Connected {
		t.Errorf("syncthing status after the restart = %+v", st)
	}
	testutil.WaitFor(t, "both alert commands", func() bool { return len(hookRuns(t, hookOut)) == 2 })

	// The daemon restarts: conflict 2 is still open, with its record, and
	// replaying Syncthing's event buffer alerts nobody again.
	r.stop(t)
	r, comp = start()
	if l := r.list(t, "dwight"); len(l.Conflicts) != 1 || l.Conflicts[0] != got2 {
		t.Fatalf("after the daemon restart: %+v, want %+v", l, got2)
	}
	testutil.WaitFor(t, "the new watcher to replay Syncthing's events", func() bool { return comp.Snapshot().Syncthing.Events >= 1 })
	runs := hookRuns(t, hookOut)
	if len(runs) != 2 || runs[0][EnvPath] != copy1 || runs[1][EnvPath] != copy2 {
		t.Fatalf("alert commands ran %d times: %v", len(runs), runs)
	}
	if runs[1][EnvDevice] != b.Short() || runs[1][EnvDeviceName] != "bravo" || runs[1][EnvWing] != "dwight" {
		t.Errorf("alert command env = %v", runs[1])
	}
	if n := len(logs.records(alertMsg)); n != 2 {
		t.Fatalf("%d alert log lines, want 2", n)
	}
}

// TestConflictAlertLatency measures the time from a conflict copy
// appearing on disk (its inode change time) to memminer's alert (the WARN
// line of the daemon serving that node's folder), over 10 real conflicts.
// It runs only with MEMMINER_BENCH=1.
func TestConflictAlertLatency(t *testing.T) {
	if os.Getenv("MEMMINER_BENCH") != "1" {
		t.Skip("set MEMMINER_BENCH=1 to measure conflict alert latency")
	}
	a, b := sttest.StartPair(t)
	logs := map[*sttest.Node]*logRecorder{}
	for _, n := range []*sttest.Node{a, b} {
		logs[n] = newLogRecorder(t)
		comp := syncthingComponent(t, n, Options{})
		startDaemon(t, filepath.Join(t.TempDir(), "palace"), n.FolderPath(), comp, 0, logs[n].logger())
		testutil.WaitFor(t, n.Name()+"'s watcher to connect", func() bool { return comp.Snapshot().Syncthing.Connected })
	}
	const n = 10
	var lat []time.Duration
	for i := range n {
		winner, loser := a, b
		if i%2 == 1 {
			winner, loser = b, a
		}
		c := sttest.ProduceConflict(t, winner, loser, fmt.Sprintf("agents/agent%02d/memory.md", i))
		var alert logRecord
		testutil.Eventually(t, "the alert for "+c.CopyPath, func(context.Context) (bool, error) {
			for _, rec := range logs[c.On].records(alertMsg) {
				if rec.Attrs["path"] == c.CopyPath {
					alert = rec
					return true, nil
				}
			}
			return false, nil
		})
		l := alert.At.Sub(c.Appeared)
		t.Logf("conflict %d on %s (found by %s): %s", i+1, c.On.Name(), alert.Attrs["found_by"], l.Round(time.Microsecond))
		lat = append(lat, l)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	median := (lat[n/2-1] + lat[n/2]) / 2
	t.Logf("conflict copy on disk -> memminer alert over %d conflicts: median %s, min %s, max %s",
		n, median.Round(time.Microsecond), lat[0].Round(time.Microsecond), lat[n-1].Round(time.Microsecond))
}
