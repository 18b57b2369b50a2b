package daemon

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

// later is a clock an hour ahead: what was written just now has
// settled by it (the change time cannot be set back).
func later() time.Time { return time.Now().Add(time.Hour) }

// age sets the modification times of everything below dir an hour back,
// so mine trusts their stat.
func age(tb testing.TB, dir string) {
	tb.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err == nil {
			err = os.Chtimes(path, old, old)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// idleDaemon returns a daemon, not running, over a hive of agents agent
// directories that it has mined, with nothing left to do, and the
// palace's directory.
func idleDaemon(tb testing.TB, agents int) (*Daemon, string) {
	tb.Helper()
	tmp := tb.TempDir()
	hv := bigHive(tb, tmp, agents, 1, 100)
	age(tb, hv)
	pal := filepath.Join(tmp, "palace")
	opts := Options{Palace: pal, Hive: hv, MineInterval: time.Hour, Logger: slog.New(slog.DiscardHandler)}
	d, err := New(context.Background(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	d.testStampClock = later
	d.drain(context.Background(), triggerStart)
	// Opened again, as a restarted daemon: its wings are read in place.
	if err := d.Close(); err != nil {
		tb.Fatal(err)
	}
	if d, err = New(context.Background(), opts); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = d.Close() })
	d.testStampClock = later
	d.drain(context.Background(), triggerStart)
	return d, pal
}

// drain scans the hive and does what the scan queued, as the mine
// goroutine would, and reports how much work that was besides the scan.
func (d *Daemon) drain(ctx context.Context, trigger string) int {
	d.q.requestScan(trigger)
	n := -1
	for {
		w, ok := d.q.next()
		if !ok {
			return n
		}
		d.do(ctx, w)
		d.q.done()
		n++
	}
}

// TestIdleTickReadsNoPalaceFile: a tick over an idle hive stats the agent
// directories' files and reads none of the palace's: with the wing files
// and the manifest gone, ticks queue nothing, read no wing whole and find
// nothing damaged; and a tick allocates little.
func TestIdleTickReadsNoPalaceFile(t *testing.T) {
	const agents = 20
	d, pal := idleDaemon(t, agents)
	d.drain(context.Background(), triggerTick) // stamps every agent
	for _, name := range []string{"wings", "manifest.json"} {
		if err := os.Rename(filepath.Join(pal, name), filepath.Join(t.TempDir(), name)); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if n := d.drain(context.Background(), triggerTick); n != 0 {
			t.Fatalf("an idle tick queued %d pieces of work", n)
		}
	}
	if w := d.p.WholeWings(); len(w) > 0 {
		t.Errorf("idle ticks read wings whole: %v", w)
	}
	if dm := d.p.Damaged(); len(dm) > 0 {
		t.Errorf("idle ticks found damage: %v", dm)
	}
	// A tick used to allocate about 56 times an agent (a walk, links
	// resolved, mine's change check); checking stamps, it allocates for
	// the listing of the hive and a path a stat.
	allocs := testing.AllocsPerRun(10, func() { d.scan(context.Background(), triggerTick) })
	if allocs > 25*agents {
		t.Errorf("an idle tick allocates %.0f times for %d agents, want at most %d", allocs, agents, 25*agents)
	}
}

// TestStampBreaksOnEveryChange: whatever a mine would read differently
// breaks an agent directory's stamp, so the tick checks it with mine.
func TestStampBreaksOnEveryChange(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
	}{
		{"append", func(t *testing.T, dir string) {
			testutil.AppendFile(t, filepath.Join(dir, "memory0.md"), "- One more.\n")
		}},
		{"same size, mtime put back", func(t *testing.T, dir string) {
			path := filepath.Join(dir, "memory0.md")
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(path)
			data[len(data)-2] = '!'
			testutil.WriteFile(t, path, string(data))
			if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by rename, times put back", func(t *testing.T, dir string) {
			path := filepath.Join(dir, "memory0.md")
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(path)
			tmp := filepath.Join(dir, ".memory0.md.tmp")
			testutil.WriteFile(t, tmp, string(data))
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{path, dir} {
				if err := os.Chtimes(p, info.ModTime(), info.ModTime()); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"new file", func(t *testing.T, dir string) {
			testutil.WriteFile(t, filepath.Join(dir, "more.md"), "- New.\n")
		}},
		{"new file in a subdirectory", func(t *testing.T, dir string) {
			testutil.WriteFile(t, filepath.Join(dir, "topics", "a.md"), "- New.\n")
		}},
		{"file removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "memory0.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"file in an old subdirectory", func(t *testing.T, dir string) {
			testutil.WriteFile(t, filepath.Join(dir, "old", "b.md"), "- New.\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "agent")
			testutil.WriteFile(t, filepath.Join(dir, "memory0.md"), "- A note.\n")
			testutil.WriteFile(t, filepath.Join(dir, "old", "a.md"), "- Another.\n")
			s := takeStamp(dir, dir, later())
			if s == nil || !s.holds() {
				t.Fatal("no stamp of a settled directory")
			}
			tt.change(t, dir)
			if s.holds() {
				t.Error("the stamp still holds")
			}
		})
	}
	t.Run("not settled", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "agent")
		testutil.WriteFile(t, filepath.Join(dir, "memory0.md"), "- A note.\n")
		if s := takeStamp(dir, dir, time.Now()); s != nil {
			t.Error("a stamp of a file written just now")
		}
	})
}

// TestTickFindsMissedChange: with fsnotify's events lost, the mine loop
// still finds a change to an agent directory the tick had stamped.
func TestTickFindsMissedChange(t *testing.T) {
	tmp := t.TempDir()
	hv := testHive(t, tmp)
	age(t, hv)
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hv, dropEvents: true, MineInterval: 20 * time.Millisecond},
		func(d *Daemon) { d.testStampClock = later })
	r.idle(t, 3) // ticks after the first mine stamp every agent
	testutil.AppendFile(t, filepath.Join(hv, "agents", "jim", "memory.md"), "\n- The teapot note is in the drawer.\n")
	testutil.WriteFile(t, filepath.Join(hv, "agents", "pam", "projects", "kiln.md"), "- The kiln schedule moved to Thursdays.\n")
	testutil.WaitFor(t, "the appended note found by the mine loop", func() bool { return r.searchFinds(t, "teapot", "jim", "teapot") })
	testutil.WaitFor(t, "the new file found by the mine loop", func() bool { return r.searchFinds(t, "kiln schedule", "pam", "kiln") })
}

func BenchmarkIdleTick(b *testing.B) {
	d, _ := idleDaemon(b, 100)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		d.scan(ctx, triggerTick)
	}
}
