package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/bench/hivegen"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
	"github.com/memminer/memminer/syncthing/sttest"
)

// machine is one machine of a hive shared through Syncthing: its own
// Syncthing, its own copy of the hive (at its own absolute path), its own
// palace and its own `memminer run`.
type machine struct {
	name string
	st   *sttest.Node
	c    *cli
	run  *daemonRun
	args []string // extra arguments of memminer run
}

func newMachine(t *testing.T, st *sttest.Node) *machine {
	c := newCLIAt(t, t.TempDir(), st.FolderPath())
	c.env["MEMMINER_HIVE"] = c.hive
	c.env["MEMMINER_SYNCTHING_URL"] = st.URL()
	c.env["MEMMINER_SYNCTHING_API_KEY"] = st.APIKey()
	// Each machine's remember writes its own memory.<machine>.md.
	c.env["MEMMINER_MACHINE"] = st.Name()
	return &machine{name: st.Name(), st: st, c: c}
}

func (m *machine) start(t *testing.T) {
	t.Helper()
	m.run = startRun(t, m.c, m.c.hive, m.args...)
}

// path is rel (slash-separated) in m's copy of the hive.
func (m *machine) path(rel string) string { return filepath.Join(m.c.hive, filepath.FromSlash(rel)) }

// appendNote appends a line to a memory file, as an agent without
// memminer remember does.
func (m *machine) appendNote(t *testing.T, rel, line string) {
	t.Helper()
	path := m.path(rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintln(f, line); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// remember writes a note to wing's memory file the way an agent does.
func (m *machine) remember(t *testing.T, wing, text string) {
	t.Helper()
	if out, errs, code := m.c.run("remember", "--wing", wing, text); code != 0 {
		t.Fatalf("%s: memminer remember --wing %s: exit %d: %s%s", m.name, wing, code, out, errs)
	}
}

// minedNote is a note as every machine must hold it: its source named
// relative to the hive, which lives elsewhere on each machine.
type minedNote struct {
	Wing, ID, Agent, Rel, Heading, Text string
	Line                                int
}

// notes reads m's palace as it is on disk.
func (m *machine) notes(ctx context.Context) ([]minedNote, error) {
	p, err := palace.Open(ctx, m.c.palace, palace.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if d := p.Damaged(); len(d) > 0 {
		return nil, fmt.Errorf("%s: wing %s unreadable (caught mid-write?)", m.name, d[0].Wing)
	}
	var out []minedNote
	for _, w := range p.Wings() {
		for _, n := range p.Notes(w.ID) {
			rel, err := filepath.Rel(m.c.hive, n.Source)
			if err != nil {
				return nil, err
			}
			out = append(out, minedNote{n.Wing, n.ID, n.Agent, filepath.ToSlash(rel), n.Heading, n.Text, n.Line})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// settled reports whether m's Syncthing has the folder in sync and its
// daemon has nothing left to mine.
func (m *machine) settled(ctx context.Context) (bool, error) {
	st, err := daemonclient.NewClient(m.c.palace).Status(ctx)
	if err != nil {
		return false, err
	}
	return st.Syncthing != nil && st.Syncthing.InSync && st.Daemon.Idle(), nil
}

// converge waits until every machine is settled and their palaces hold the
// same notes, of which want approves, and returns the time since since.
func converge(t *testing.T, ms []*machine, since time.Time, what string, want func([]minedNote) error) ([]minedNote, time.Duration) {
	t.Helper()
	var notes []minedNote
	var took time.Duration
	testutil.Eventually(t, what, func(ctx context.Context) (bool, error) {
		var first []minedNote
		for i, m := range ms {
			if ok, err := m.settled(ctx); !ok || err != nil {
				return false, err
			}
			ns, err := m.notes(ctx)
			if err != nil {
				return false, err
			}
			if i == 0 {
				first = ns
				if err := want(ns); err != nil {
					return false, err
				}
				continue
			}
			if !slices.Equal(ns, first) {
				return false, fmt.Errorf("%s's palace (%d notes) differs from %s's (%d)", m.name, len(ns), ms[0].name, len(first))
			}
		}
		took = time.Since(since)
		notes = first
		return true, nil
	})
	return notes, took
}

// holding approves notes that include every text.
func holding(texts ...string) func([]minedNote) error {
	return func(ns []minedNote) error {
		for _, text := range texts {
			if !slices.ContainsFunc(ns, func(n minedNote) bool { return strings.Contains(n.Text, text) }) {
				return fmt.Errorf("no note holds %q yet", text)
			}
		}
		return nil
	}
}

// sameOutput runs args on every machine and requires the same output, with
// each machine's hive and palace paths scrubbed.
func sameOutput(t *testing.T, ms []*machine, args ...string) string {
	t.Helper()
	var first string
	for i, m := range ms {
		out, errs, code := m.c.run(args...)
		if code != 0 && code != exitConflict {
			t.Fatalf("%s: memminer %s: exit %d: %s", m.name, strings.Join(args, " "), code, errs)
		}
		if i == 0 {
			first = out
		} else if out != first {
			t.Fatalf("memminer %s differs on %s:\n%s\nand on %s:\n%s", strings.Join(args, " "), m.name, out, ms[0].name, first)
		}
	}
	return first
}

// conflictRels lists the conflict copies m's daemon reports, relative to
// the hive.
func (m *machine) conflictRels(t *testing.T) []string {
	t.Helper()
	out, _, _ := m.c.run("conflicts", "--json")
	var res struct {
		Conflicts []struct {
			Path string `json:"path"`
		} `json:"conflicts"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%s: conflicts --json: %v\n%s", m.name, err, out)
	}
	var rels []string
	for _, c := range res.Conflicts {
		rels = append(rels, strings.TrimPrefix(c.Path, "$HIVE/"))
	}
	sort.Strings(rels)
	return rels
}

// TestThreeMachinesConverge shares one hive between three machines, each
// a real Syncthing on 127.0.0.1 with its own memminer daemon over its own
// copy of the hive: whatever agents on any machine write (memminer
// remember), once the folder
// is in sync and every daemon has mined, the three palaces hold the same
// notes (ids, texts, wings) and answer searches alike; a conflict copy is
// reported everywhere and, resolved on one machine (memminer conflicts
// merge --apply), cleared everywhere;
// and a machine that was off catches up by mining only what changed.
func TestThreeMachinesConverge(t *testing.T) {
	threeMachines(t, func(t *testing.T, hive string) int {
		testutil.CopyDir(t, filepath.Join("..", "..", "examples", "hive"), hive)
		return 4
	})
}

// TestThreeMachinesConvergeAtScale is TestThreeMachinesConverge with a
// generated hive of 10,000 notes in 10 wings. It runs only with
// MEMMINER_BENCH=1.
func TestThreeMachinesConvergeAtScale(t *testing.T) {
	if os.Getenv("MEMMINER_BENCH") != "1" {
		t.Skip("set MEMMINER_BENCH=1 to measure convergence with 10,000 notes")
	}
	threeMachines(t, func(t *testing.T, hive string) int {
		ids, err := hivegen.Write(hive, hivegen.Options{Notes: 10000, Agents: 10})
		if err != nil {
			t.Fatal(err)
		}
		return len(ids)
	})
}

// threeMachines runs the phases of TestThreeMachinesConverge on a hive
// seed writes (returning its number of wings).
func threeMachines(t *testing.T, seed func(t *testing.T, hive string) int) {
	nodes := sttest.StartCluster(t, "alpha", "bravo", "charlie")
	var ms []*machine
	for _, n := range nodes {
		ms = append(ms, newMachine(t, n))
	}
	alpha, bravo, charlie := ms[0], ms[1], ms[2]
	alpha.args = []string{"--metrics-addr", "127.0.0.1:0"}

	// The hive starts on alpha; Syncthing brings it to the others.
	seedWings := seed(t, alpha.c.hive)
	seeded := time.Now()
	for _, m := range ms {
		m.start(t)
	}
	notes, took := converge(t, ms, seeded, "the seeded hive mined everywhere", func(ns []minedNote) error {
		wings := map[string]bool{}
		for _, n := range ns {
			wings[n.Wing] = true
		}
		if len(wings) != seedWings {
			return fmt.Errorf("%d wings yet", len(wings))
		}
		return nil
	})
	t.Logf("seed: %d notes equal on 3 machines %s after the hive was copied", len(notes), took.Round(time.Millisecond))

	// Phase 1: agents on each machine write to their own wings.
	alpha.remember(t, "dwight", "The build cache lives on nas-3 (written on alpha).")
	bravo.remember(t, "pam", "Quarterly reviews move to Thursdays (written on bravo).")
	charlie.remember(t, "creed", "The quarry lease renews in March (written on charlie).")
	written := time.Now()
	notes, took = converge(t, ms, written, "every machine's writes mined everywhere",
		holding("nas-3 (written on alpha)", "Thursdays (written on bravo)", "quarry lease renews in March"))
	t.Logf("different wings: %d notes equal on 3 machines %s after the last write", len(notes), took.Round(time.Millisecond))
	for _, q := range []string{"where does the build cache live", "quarry lease", "db-2"} {
		sameOutput(t, ms, "search", q, "--json")
	}
	checkReplicationStatus(t, ms)
	checkMetrics(t, alpha)

	// Phase 2: two machines write the same file while they cannot see
	// each other's change: Syncthing keeps one and makes a conflict copy.
	// memminer remember never does that (each machine writes its own
	// file); an agent appending to memory.md by hand on both does.
	ctx := context.Background()
	for _, m := range []*machine{alpha, bravo} {
		if err := m.st.SetPaused(ctx, sttest.FolderID, true); err != nil {
			t.Fatal(err)
		}
		testutil.Eventually(t, m.name+" to pause the folder", func(ctx context.Context) (bool, error) {
			// A paused folder has no runner, and so an empty state.
			st, err := m.st.FolderState(ctx, sttest.FolderID)
			return st == "", err
		})
	}
	alpha.appendNote(t, "agents/dwight/memory.md", "- The printer code is 4471 (written on alpha).")
	bravo.appendNote(t, "agents/dwight/memory.md", "- Dwight's desk moved next to the window (written on bravo).")
	later := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(bravo.path("agents/dwight/memory.md"), later, later); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*machine{alpha, bravo} {
		if err := m.st.SetPaused(ctx, sttest.FolderID, false); err != nil {
			t.Fatal(err)
		}
	}
	var copies []string
	testutil.Eventually(t, "the conflict copy reported on every machine", func(context.Context) (bool, error) {
		copies = alpha.conflictRels(t)
		if len(copies) == 0 {
			return false, nil
		}
		for _, m := range ms[1:] {
			if got := m.conflictRels(t); !slices.Equal(got, copies) {
				return false, fmt.Errorf("%s reports %v, alpha %v", m.name, got, copies)
			}
		}
		return true, nil
	})
	notes, _ = converge(t, ms, time.Now(), "the winning version mined everywhere", holding("next to the window (written on bravo)"))
	t.Logf("same file: conflict copies %v on every machine; %d notes equal", copies, len(notes))

	// Resolved on charlie by memminer's three-way merge of the copy.
	if out, errs, code := charlie.c.run("conflicts", "merge", "--wing", "dwight", "--apply"); code != 0 {
		t.Fatalf("charlie: conflicts merge --apply: exit %d\n%s%s", code, out, errs)
	}
	resolved := time.Now()
	testutil.Eventually(t, "the conflict cleared on every machine", func(context.Context) (bool, error) {
		for _, m := range ms {
			if got := m.conflictRels(t); len(got) != 0 {
				return false, fmt.Errorf("%s still reports %v", m.name, got)
			}
		}
		return true, nil
	})
	notes, took = converge(t, ms, resolved, "the merged file mined everywhere",
		holding("printer code is 4471 (written on alpha)", "next to the window (written on bravo)"))
	t.Logf("conflict resolved on charlie: %d notes equal on 3 machines %s after the resolution", len(notes), took.Round(time.Millisecond))
	sameOutput(t, ms, "search", "printer code", "--json")

	// Phase 3: charlie is switched off; the others write; it comes back.
	before := notes
	charlie.run.stop(t)
	charlie.st.Stop()
	if out := charlie.c.ok("status", "--json"); !strings.Contains(out, `"syncthing": null`) {
		t.Fatalf("status with Syncthing down, no daemon:\n%s", out)
	}
	alpha.remember(t, "dwight", "The VPN certificate expires on 2027-02-01 (written while charlie was off).")
	bravo.remember(t, "pam", "The party budget is 300 dollars (written while charlie was off).")
	converge(t, ms[:2], time.Now(), "alpha and bravo to agree without charlie", holding("VPN certificate", "party budget"))
	back := time.Now()
	charlie.st.Start()
	charlie.start(t)
	for _, m := range []*machine{alpha, bravo} {
		if err := m.st.Redial(ctx, charlie.st); err != nil {
			t.Fatal(err)
		}
	}
	sttest.WaitConnected(t, alpha.st, charlie.st)
	sttest.WaitConnected(t, bravo.st, charlie.st)
	reconnected := time.Since(back)
	notes, took = converge(t, ms, back, "charlie to catch up", holding("VPN certificate", "party budget"))
	t.Logf("machine that was off: reconnected %s and %d notes equal on 3 machines %s after it was started again",
		reconnected.Round(time.Millisecond), len(notes), took.Round(time.Millisecond))
	for _, n := range before {
		if !slices.Contains(notes, n) {
			t.Fatalf("charlie lost %+v", n)
		}
	}
	// Only the two changed files were mined again (the daemon logs a mine
	// that changed something, by wing).
	var minedWings []string
	for _, line := range strings.Split(charlie.run.stderr.String(), "\n") {
		if strings.Contains(line, "msg=mined ") {
			for _, f := range strings.Fields(line) {
				if w, ok := strings.CutPrefix(f, "wing="); ok && !slices.Contains(minedWings, w) {
					minedWings = append(minedWings, w)
				}
			}
		}
	}
	sort.Strings(minedWings)
	if !slices.Equal(minedWings, []string{"dwight", "pam"}) {
		t.Fatalf("charlie re-mined wings %v, want only dwight and pam:\n%s", minedWings, charlie.run.stderr)
	}
	sameOutput(t, ms, "search", "VPN certificate", "--json")
}

// checkReplicationStatus: status on every machine shows its folder in
// sync with the two others connected.
func checkReplicationStatus(t *testing.T, ms []*machine) {
	t.Helper()
	for _, m := range ms {
		var st api.Status
		out, _ := m.c.runRaw("status", "--json")
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatal(err)
		}
		r := st.Syncthing
		if r == nil || r.Folder != sttest.FolderID || !r.InSync || r.InSyncSince == nil || r.NeedFiles != 0 || r.DevicesConnected != 2 || len(r.Devices) != 2 {
			t.Fatalf("%s: status syncthing = %+v", m.name, r)
		}
		// The same without the daemon: status asks Syncthing itself.
		// Syncthing may rescan between the two asks (its state and the
		// time it changed move on), so both are asked again until they
		// agree: they must whenever Syncthing stands still.
		testutil.Eventually(t, m.name+"'s status to be the same with and without the daemon", func(context.Context) (bool, error) {
			a := testutil.IndentJSON(t, m.syncthingStatus(t, false))
			b := testutil.IndentJSON(t, m.syncthingStatus(t, true))
			if a != b {
				t.Logf("%s: status's syncthing part with the daemon:\n%s\nwithout:\n%s", m.name, a, b)
			}
			return a == b, nil
		})
		text := m.c.ok("status")
		if !strings.Contains(text, "syncthing:   folder hive in sync since") || !strings.Contains(text, "devices:     2 of 2 connected") {
			t.Fatalf("%s: status:\n%s", m.name, text)
		}
	}
}

// syncthingStatus is the syncthing part of m's status --json, through the
// daemon or without it, with each connected device's last_seen left out:
// it is Syncthing's clock, and moves between two asks.
func (m *machine) syncthingStatus(t *testing.T, noDaemon bool) *api.Replication {
	t.Helper()
	args := []string{"status", "--json"}
	if noDaemon {
		args = append(args, "--no-daemon")
	}
	out, _ := m.c.runRaw(args...)
	var st api.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if r := st.Syncthing; r != nil {
		for i := range r.Devices {
			if r.Devices[i].Connected {
				r.Devices[i].LastSeen = nil
			}
		}
	}
	return st.Syncthing
}

// checkMetrics: the daemon's metrics carry the folder's gauges.
func checkMetrics(t *testing.T, m *machine) {
	t.Helper()
	body := scrape(t, m)
	for _, want := range []string{"memminer_syncthing_up 1", "memminer_syncthing_need_files 0", "memminer_syncthing_devices_connected 2", "memminer_syncthing_state_known 1", "memminer_syncthing_isolated_seconds 0"} {
		if !strings.Contains(body, want+"\n") {
			t.Fatalf("metrics lack %q:\n%s", want, body)
		}
	}
}

func TestReportMigrations(t *testing.T) {
	var b strings.Builder
	reportMigrations(&b, nil)
	reportMigrations(&b, []mine.Migration{{Wing: "dwight", Format: 1, Files: 1, Notes: 11}, {Wing: "pam", Format: 1, Files: 2, Notes: 10, Embedded: 1}})
	want := "memminer: palace migrated to note format 1 (note ids no longer depend on where the hive lives): wings dwight, pam, 3 files, 21 notes, 1 embedded anew, the other vectors kept\n"
	if b.String() != want {
		t.Fatalf("got %q\nwant %q", b.String(), want)
	}
}

func TestPrintReplication(t *testing.T) {
	since := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		r    *api.Replication
		want string
	}{
		{"unreachable", nil, "syncthing:   not reachable (or no hive configured): replication unknown\n"},
		{"no folder", &api.Replication{Error: new("/srv/hive: no Syncthing folder holds it")}, "syncthing:   /srv/hive: no Syncthing folder holds it\n"},
		{"in sync", &api.Replication{Folder: "hive", State: "idle", StateChanged: &since, InSync: true, InSyncSince: &since, DevicesConnected: 1,
			Devices: []api.ReplicaDevice{{Name: "laptop", Connected: true}}},
			"syncthing:   folder hive in sync since 2026-12-01T11:00:00Z; 0 files (0 B) still needed\ndevices:     1 of 1 connected: laptop\n"},
		{"syncing", &api.Replication{Folder: "abcd-1234", Label: "Hive", State: "syncing", StateChanged: &since, NeedFiles: 1, NeedBytes: 2048, Errors: 2,
			Devices: []api.ReplicaDevice{{Name: "laptop"}, {Name: "server"}}},
			"syncthing:   folder Hive (abcd-1234) syncing since 2026-12-01T11:00:00Z; 1 file (2.0 KiB) still needed; 2 items failing\ndevices:     0 of 2 connected: laptop (not connected; never seen), server (not connected; never seen)\n"},
		{"isolated", &api.Replication{Folder: "hive", State: "idle", StateChanged: &since, IsolatedSince: &since, IsolatedSeconds: new(int64(7530)),
			Devices: []api.ReplicaDevice{{Name: "laptop", LastSeen: &since}, {Name: "server", Connected: false}}},
			"syncthing:   folder hive: state unknown, isolated for 2h5m (no other device connected since 2026-12-01T11:00:00Z); this machine's memory may be behind\n" +
				"devices:     0 of 2 connected: laptop (not connected; last seen 2026-12-01T11:00:00Z), server (not connected; never seen)\n"},
		{"a peer behind", &api.Replication{Folder: "hive", State: "idle", StateChanged: &since, InSync: true, InSyncSince: &since, StateKnown: true, DevicesConnected: 1,
			Devices: []api.ReplicaDevice{{Name: "laptop", Connected: true, Completion: new(62.5)}}},
			"syncthing:   folder hive in sync since 2026-12-01T11:00:00Z; 0 files (0 B) still needed\ndevices:     1 of 1 connected: laptop (62% synced)\n"},
		{"alone", &api.Replication{Folder: "hive", State: "idle", StateChanged: &since, InSync: true, InSyncSince: &since, Devices: []api.ReplicaDevice{}},
			"syncthing:   folder hive in sync since 2026-12-01T11:00:00Z; 0 files (0 B) still needed\ndevices:     0 of 0 connected: shared with no other device\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			printReplication(&b, tt.r)
			if b.String() != tt.want {
				t.Fatalf("got\n%q\nwant\n%q", b.String(), tt.want)
			}
		})
	}
}
