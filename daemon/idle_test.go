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
			hv := filepath.Join(t.TempDir(), "hive")
			dir := filepath.Join(hv, "agents", "agent")
			testutil.WriteFile(t, filepath.Join(dir, "memory0.md"), "- A note.\n")
			testutil.WriteFile(t, filepath.Join(dir, "old", "a.md"), "- Another.\n")
			s, h := takeStamp(dir, dir, later()), takeHiveStamp(hv, later())
			if s == nil || !s.holds() || h == nil || !h.holds() {
				t.Fatal("no stamp of a settled directory")
			}
			tt.change(t, dir)
			if s.holds() {
				t.Error("the stamp still holds")
			}
			if h.holds() {
				t.Error("the hive's stamp still holds")
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

// TestHiveStampBreaksOnEveryChange: the hive's stamp also breaks on what
// no agent directory's stamp sees but a tick's scan reads: a directory
// where agent directories appear, and what the conflict scan walks. A
// hive holding a symlink gets none, and Syncthing's own directories are
// not looked at.
func TestHiveStampBreaksOnEveryChange(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, hv string)
		holds  bool
	}{
		{"new agent directory", func(t *testing.T, hv string) {
			if err := os.Mkdir(filepath.Join(hv, "agents", "newcomer"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"agent directory renamed", func(t *testing.T, hv string) {
			if err := os.Rename(filepath.Join(hv, "agents", "agent"), filepath.Join(hv, "agents", "renamed")); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"conflict copy in a hidden directory", func(t *testing.T, hv string) {
			testutil.WriteFile(t, filepath.Join(hv, "agents", "agent", ".notes", "a.sync-conflict-20261204-101010-ABCDEFG.md"), "- x\n")
		}, false},
		{"conflict copy at the top of the hive", func(t *testing.T, hv string) {
			testutil.WriteFile(t, filepath.Join(hv, "hive.sync-conflict-20261204-101010-ABCDEFG.toml"), "x\n")
		}, false},
		{"markers written into a memory file outside agent directories", func(t *testing.T, hv string) {
			testutil.AppendFile(t, filepath.Join(hv, "notes", "loose.md"), "<<<<<<< HEAD\n")
		}, false},
		{"inside Syncthing's own directory", func(t *testing.T, hv string) {
			testutil.WriteFile(t, filepath.Join(hv, ".stversions", "memory~20261204.md"), "- old\n")
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hv := filepath.Join(t.TempDir(), "hive")
			testutil.WriteFile(t, filepath.Join(hv, "agents", "agent", "memory.md"), "- A note.\n")
			testutil.WriteFile(t, filepath.Join(hv, "agents", "agent", ".notes", "a.md"), "- Hidden.\n")
			testutil.WriteFile(t, filepath.Join(hv, "notes", "loose.md"), "- Loose.\n")
			testutil.WriteFile(t, filepath.Join(hv, ".stversions", "keep"), "")
			h := takeHiveStamp(hv, later())
			if h == nil || !h.holds() {
				t.Fatal("no stamp of a settled hive")
			}
			tt.change(t, hv)
			if h.holds() != tt.holds {
				t.Errorf("the hive's stamp holds = %v, want %v", !tt.holds, tt.holds)
			}
		})
	}
	t.Run("symlink", func(t *testing.T) {
		hv := filepath.Join(t.TempDir(), "hive")
		testutil.WriteFile(t, filepath.Join(hv, "agents", "agent", "memory.md"), "- A note.\n")
		if err := os.Symlink(t.TempDir(), filepath.Join(hv, "agents", "elsewhere")); err != nil {
			t.Fatal(err)
		}
		if h := takeHiveStamp(hv, later()); h != nil {
			t.Error("a stamp of a hive with a link to a directory")
		}
	})
	t.Run("not settled", func(t *testing.T) {
		hv := filepath.Join(t.TempDir(), "hive")
		testutil.WriteFile(t, filepath.Join(hv, "agents", "agent", "memory.md"), "- A note.\n")
		if h := takeHiveStamp(hv, time.Now()); h != nil {
			t.Error("a stamp of a hive written just now")
		}
	})
}

// TestIdleTickSkipsUnchangedHive: once a tick found the whole hive up to
// date, later ticks look at nothing more than its stamp, and tell the
// components nothing changed (HiveChanges stays); a change anywhere the
// scan reads, or work on the palace, makes the next tick look afresh.
func TestIdleTickSkipsUnchangedHive(t *testing.T) {
	d, _ := idleDaemon(t, 3)
	ctx := context.Background()
	d.drain(ctx, triggerTick)
	if d.hiveStamp == nil {
		t.Fatal("no hive stamp after a tick over an idle hive")
	}
	changes := d.host.HiveChanges()
	for range 3 {
		d.drain(ctx, triggerTick)
	}
	if got := d.host.HiveChanges(); got != changes {
		t.Fatalf("idle ticks looked at the hive afresh %d times", got-changes)
	}
	// Work on the palace: the next tick checks again.
	d.forgetStamps(work{agent: filepath.Join(d.opts.Hive, "agents", "agent00")})
	d.drain(ctx, triggerTick)
	if got := d.host.HiveChanges(); got != changes+1 {
		t.Fatalf("after work on the palace: %d fresh looks, want 1", got-changes)
	}
	// A conflict copy where no agent's stamp looks.
	changes = d.host.HiveChanges()
	testutil.WriteFile(t, filepath.Join(d.opts.Hive, "agents", "agent01", ".cache", "x.sync-conflict-20261204-101010-ABCDEFG.md"), "- x\n")
	d.drain(ctx, triggerTick)
	if got := d.host.HiveChanges(); got != changes+1 {
		t.Fatalf("after a conflict copy appeared: %d fresh looks, want 1", got-changes)
	}
	// An append that fsnotify missed is mined by the tick.
	testutil.AppendFile(t, filepath.Join(d.opts.Hive, "agents", "agent02", "memory0.md"), "- The heron nests by the weir.\n")
	if n := d.drain(ctx, triggerTick); n != 1 {
		t.Fatalf("the tick after an append queued %d pieces of work, want 1", n)
	}
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
