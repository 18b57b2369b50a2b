package conflicts

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/syncthing"
)

// counter is a Notify hook counting alerts per copy path.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) notify(cf Conflict) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[cf.Path]++
}

func (c *counter) get(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[path]
}

func (c *counter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.n {
		n += v
	}
	return n
}

func newComponent(t *testing.T, opts Options) *Component {
	t.Helper()
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRegistryPersists: a conflict found at start is alerted once, kept
// across a restart without a second alert, and resolved when its copy is
// deleted.
func TestRegistryPersists(t *testing.T) {
	hv := newHiveDir(t)
	pal := filepath.Join(t.TempDir(), "palace")
	copyPath := filepath.Join(hv, "agents", "dwight", copyName)
	writeFile(t, copyPath, "# dwight\n- a lost fact about beets\n")
	logs := newLogRecorder(t)
	var cnt counter
	hookOut := filepath.Join(t.TempDir(), "runs")

	start := func() *running {
		comp := newComponent(t, Options{Notify: cnt.notify, Command: hookCommand(t, hookOut)})
		return startDaemon(t, pal, hv, comp, 0, logs.logger())
	}
	r := start()
	l := r.list(t, "")
	if len(l.Conflicts) != 1 {
		t.Fatalf("open conflicts = %+v, want the copy", l)
	}
	got := l.Conflicts[0]
	if got.Path != copyPath || got.Original != filepath.Join(hv, "agents", "dwight", "memory.md") || got.Wing != "dwight" ||
		got.Device != "ABCDEFG" || got.DeviceName != "" || got.FoundBy != FoundByScan || got.Detected.IsZero() {
		t.Fatalf("conflict = %+v", got)
	}
	testutil.WaitFor(t, "the alert command to run", func() bool { return len(hookRuns(t, hookOut)) == 1 })
	if n := len(logs.records(alertMsg)); n != 1 {
		t.Fatalf("%d alert log lines, want 1", n)
	}
	st, err := r.c.Status(context.Background())
	if err != nil || st.ConflictsOpen != 1 {
		t.Fatalf("status conflicts_open = %d (%v), want 1", st.ConflictsOpen, err)
	}
	fi, err := os.Stat(RegistryPath(pal))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("registry file: %v, mode %v", err, fi.Mode())
	}
	r.stop(t)

	// Restart: the conflict is still open, and not alerted again.
	r = start()
	l = r.list(t, "dwight")
	if len(l.Conflicts) != 1 || l.Conflicts[0] != got {
		t.Fatalf("after restart: %+v, want %+v", l, got)
	}
	if cnt.get(copyPath) != 1 || len(logs.records(alertMsg)) != 1 || len(hookRuns(t, hookOut)) != 1 {
		t.Fatalf("re-alerted after restart: notify %d, log lines %d, command runs %d",
			cnt.get(copyPath), len(logs.records(alertMsg)), len(hookRuns(t, hookOut)))
	}
	r.stop(t)

	// Merged while the daemon was down: the next start resolves it.
	if err := os.Remove(copyPath); err != nil {
		t.Fatal(err)
	}
	r = start()
	if l := r.list(t, ""); len(l.Conflicts) != 0 {
		t.Fatalf("after the copy was deleted: %+v", l)
	}
	if len(logs.records("conflict resolved")) != 1 {
		t.Fatalf("resolution not logged once")
	}
	known, err := ReadRegistry(pal)
	if err != nil || len(known) != 0 {
		t.Fatalf("registry on disk = %+v, %v", known, err)
	}
}

// TestRegistryCorrupt: an unreadable registry is moved aside and rebuilt
// from a scan, said once in the log, without alerting its conflicts again;
// a conflict that appears later is alerted as usual.
func TestRegistryCorrupt(t *testing.T) {
	tests := []struct {
		name, content string
	}{
		{"garbage", "{not json"},
		{"truncated", `{"version": 1, "hive": "/x", "conflicts": [{"path": "/x/a`},
		{"wrong version", `{"version": 99, "hive": "/x", "conflicts": []}`},
		{"bad entry", `{"version": 1, "hive": "/x", "conflicts": [{"path": "relative", "original": "/x", "found_by": "scan"}]}`},
		{"empty file", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testRegistryRebuilt(t, func(path string) error {
				return os.WriteFile(path, []byte(tt.content), 0o600)
			}, func(aside string) {
				if data, err := os.ReadFile(aside); err != nil || string(data) != tt.content {
					t.Fatalf("corrupt registry not kept aside: %q, %v", data, err)
				}
			})
		})
	}
}

// testRegistryRebuilt makes a bad registry file with bad, starts a daemon
// and checks that it is moved aside (check sees what was kept), said once
// in a WARN naming both paths, and rebuilt from a scan without alerting
// its conflicts again; a conflict that appears later is alerted as usual.
func testRegistryRebuilt(t *testing.T, bad func(path string) error, check func(aside string)) {
	hv := newHiveDir(t)
	pal := filepath.Join(t.TempDir(), "palace")
	if err := os.MkdirAll(pal, 0o700); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(hv, "agents", "dwight", copyName)
	writeFile(t, copyPath, "lost\n")
	if err := bad(RegistryPath(pal)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRegistry(pal); !errors.Is(err, ErrCorruptRegistry) {
		t.Fatalf("ReadRegistry = %v, want ErrCorruptRegistry", err)
	}
	logs := newLogRecorder(t)
	var cnt counter
	comp := newComponent(t, Options{Notify: cnt.notify})
	// A short mine interval: several scans run during the test.
	r := startDaemon(t, pal, hv, comp, 20*time.Millisecond, logs.logger())
	if l := r.list(t, ""); len(l.Conflicts) != 1 || l.Conflicts[0].Path != copyPath {
		t.Fatalf("rebuilt registry = %+v", l)
	}
	testutil.WaitFor(t, "a few more scans", func() bool {
		st, err := r.c.Status(context.Background())
		return err == nil && st.Scans >= 4
	})
	aside := registryAside(t, pal)
	recs := logs.records("conflict registry was unreadable")
	if len(recs) != 1 {
		t.Fatalf("corruption reported %d times, want once", len(recs))
	}
	if recs[0].Level != slog.LevelWarn || recs[0].Attrs["registry"] != RegistryPath(pal) || recs[0].Attrs["moved_to"] != aside {
		t.Fatalf("warning %+v, want a WARN naming %s and %s", recs[0], RegistryPath(pal), aside)
	}
	check(aside)
	known, err := ReadRegistry(pal)
	if err != nil || len(known) != 1 || known[0].Path != copyPath {
		t.Fatalf("registry on disk after rebuild = %+v, %v", known, err)
	}
	if cnt.total() != 0 || len(logs.records(alertMsg)) != 0 {
		t.Fatalf("rebuild re-alerted: %d notifications, %d log lines", cnt.total(), len(logs.records(alertMsg)))
	}
	if st := comp.Snapshot(); st.RegistryError != nil || st.Open != 1 {
		t.Fatalf("status after rebuild = %+v", st)
	}
	// A new conflict after the rebuild is alerted.
	second := filepath.Join(hv, "agents", "pam", copyName)
	writeFile(t, second, "lost too\n")
	testutil.WaitFor(t, "the new conflict's alert", func() bool { return cnt.get(second) == 1 })
	if cnt.total() != 1 {
		t.Fatalf("alerts = %d, want 1", cnt.total())
	}
}

// TestSyncthingDown: with Syncthing failing, conflicts are still found by
// the scan backstop, status says why Syncthing is not connected, and the
// outage is logged once however often it is retried.
func TestSyncthingDown(t *testing.T) {
	// A "Syncthing" that accepts connections and hangs up at once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepts atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepts.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	client, err := syncthing.NewClient("http://"+ln.Addr().String(), "sekrit-key")
	if err != nil {
		t.Fatal(err)
	}

	hv := newHiveDir(t)
	pal := filepath.Join(t.TempDir(), "palace")
	logs := newLogRecorder(t)
	var cnt counter
	comp := newComponent(t, Options{
		Syncthing: client,
		Watcher:   syncthing.WatcherOptions{MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond},
		Notify:    cnt.notify,
	})
	r := startDaemon(t, pal, hv, comp, 20*time.Millisecond, logs.logger())
	testutil.WaitFor(t, "many failed attempts", func() bool { return accepts.Load() >= 10 })

	copyPath := filepath.Join(hv, "agents", "pam", copyName)
	writeFile(t, copyPath, "lost\n")
	testutil.WaitFor(t, "the scan to find the copy", func() bool { return cnt.get(copyPath) == 1 })
	l := r.list(t, "pam")
	if len(l.Conflicts) != 1 || l.Conflicts[0].FoundBy != FoundByScan {
		t.Fatalf("conflicts = %+v", l)
	}

	st := comp.Snapshot()
	if !st.Syncthing.Enabled || st.Syncthing.Connected || st.Syncthing.LastError == nil || st.Syncthing.LastErrorTime == nil {
		t.Fatalf("syncthing status = %+v", st.Syncthing)
	}
	// The daemon's status carries it too, without the key.
	ds, err := r.c.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ds.ConflictsOpen != 1 || !ds.HasComponent {
		t.Fatalf("daemon status: conflicts_open %d, components %+v", ds.ConflictsOpen, ds)
	}
	for _, rec := range logs.records("") {
		for _, v := range rec.Attrs {
			if strings.Contains(v, "sekrit-key") {
				t.Fatalf("API key logged: %+v", rec)
			}
		}
	}
	if n := len(logs.records("syncthing unreachable")); n != 1 {
		t.Fatalf("outage logged %d times over %d attempts, want once", n, accepts.Load())
	}
}

// TestListEndpoint: GET /conflicts filters by wing, refuses a bad one, and
// refuses an unknown one (neither an agent directory nor a palace wing)
// with an error that matches palace.ErrUnknownWing and names the known
// wings, so a mistyped wing never passes `conflicts --check`.
func TestListEndpoint(t *testing.T) {
	hv := newHiveDir(t)
	for _, w := range []string{"dwight", "pam"} {
		writeFile(t, filepath.Join(hv, "agents", w, copyName), "lost\n")
	}
	// jim has an agent directory but nothing mined yet: a known wing.
	if err := os.MkdirAll(filepath.Join(hv, "agents", "jim"), 0o755); err != nil {
		t.Fatal(err)
	}
	comp := newComponent(t, Options{})
	r := startDaemon(t, filepath.Join(t.TempDir(), "palace"), hv, comp, 0, newLogRecorder(t).logger())
	tests := []struct {
		wing string
		want int
	}{{"", 2}, {"dwight", 1}, {"PAM", 1}, {"jim", 0}}
	for _, tt := range tests {
		l := r.list(t, tt.wing)
		if len(l.Conflicts) != tt.want || l.Conflicts == nil || l.ScanError != nil {
			t.Errorf("wing %q: %+v, want %d", tt.wing, l, tt.want)
		}
	}
	err := r.c.Get(context.Background(), "/conflicts", url.Values{"wing": {"../x"}}, &List{})
	if r.c.Code(err) != "bad_request" {
		t.Fatalf("bad wing: %v", err)
	}
	err = r.c.Get(context.Background(), "/conflicts", url.Values{"wing": {"dwigth"}}, &List{})
	if !errors.Is(err, palace.ErrUnknownWing) || !strings.Contains(err.Error(), `unknown wing "dwigth" (known wings: dwight, jim, pam)`) {
		t.Fatalf("unknown wing: %v", err)
	}

	// A wing the palace keeps after its agent directory went away is
	// still known.
	testutil.WaitFor(t, "pam to be mined", func() bool { return r.d.Palace().HasWing("pam") })
	if err := os.RemoveAll(filepath.Join(hv, "agents", "pam")); err != nil {
		t.Fatal(err)
	}
	// The whole hive's walk resolves pam's conflict, so only the palace
	// knows pam now.
	if l := r.list(t, ""); len(l.Conflicts) != 1 {
		t.Fatalf("after pam's directory went: %+v", l)
	}
	if l := r.list(t, "pam"); len(l.Conflicts) != 0 {
		t.Fatalf("pam after its directory went: %+v", l)
	}
}

// TestListIsCurrent: without Syncthing events and with no mine tick due,
// GET /conflicts (and the open count of status) still answer what is on
// disk at the time of the request: a copy made a moment ago is listed,
// recorded and alerted once, and a deleted one is resolved.
func TestListIsCurrent(t *testing.T) {
	hv := newHiveDir(t)
	pal := filepath.Join(t.TempDir(), "palace")
	logs := newLogRecorder(t)
	var cnt counter
	comp := newComponent(t, Options{Notify: cnt.notify})
	// No tick for an hour: only the start scan and the requests walk.
	r := startDaemon(t, pal, hv, comp, time.Hour, logs.logger())
	if l := r.list(t, ""); len(l.Conflicts) != 0 {
		t.Fatalf("before any copy: %+v", l)
	}
	// The walk that follows the daemon's start scan would record both
	// copies below; no other scan comes within the hour.
	testutil.WaitFor(t, "the start scan's walk", func() bool { return r.scans.Load() >= 1 })

	dwight := filepath.Join(hv, "agents", "dwight", copyName)
	pam := filepath.Join(hv, "agents", "pam", copyName)
	writeFile(t, dwight, "lost\n")
	writeFile(t, pam, "lost too\n")
	l := r.list(t, "dwight")
	if len(l.Conflicts) != 1 || l.Conflicts[0].Path != dwight || l.Conflicts[0].FoundBy != FoundByScan {
		t.Fatalf("wing dwight right after its copy appeared: %+v", l)
	}
	// A wing's request walks that wing only.
	if got := comp.List().Conflicts; len(got) != 1 || got[0].Path != dwight {
		t.Fatalf("registry after a request for dwight: %+v", got)
	}
	testutil.WaitFor(t, "dwight's alert", func() bool { return cnt.get(dwight) == 1 })
	known, err := ReadRegistry(pal)
	if err != nil || len(known) != 1 || known[0].Path != dwight {
		t.Fatalf("registry on disk = %+v, %v", known, err)
	}

	st, err := r.c.Status(context.Background())
	if err != nil || st.ConflictsOpen != 2 {
		t.Fatalf("status conflicts_open = %d (%v), want 2", st.ConflictsOpen, err)
	}
	for range 3 {
		if l := r.list(t, ""); len(l.Conflicts) != 2 {
			t.Fatalf("whole hive: %+v", l)
		}
	}
	testutil.WaitFor(t, "pam's alert", func() bool { return cnt.get(pam) == 1 })

	if err := os.Remove(dwight); err != nil {
		t.Fatal(err)
	}
	if l := r.list(t, "dwight"); len(l.Conflicts) != 0 {
		t.Fatalf("wing dwight right after its copy was deleted: %+v", l)
	}
	if err := os.Remove(pam); err != nil {
		t.Fatal(err)
	}
	if st, err := r.c.Status(context.Background()); err != nil || st.ConflictsOpen != 0 {
		t.Fatalf("status conflicts_open after the merges = %d (%v), want 0", st.ConflictsOpen, err)
	}
	if l := r.list(t, ""); len(l.Conflicts) != 0 {
		t.Fatalf("whole hive after the merges: %+v", l)
	}
	if n := len(logs.records("conflict resolved")); n != 2 {
		t.Fatalf("%d resolutions logged, want 2", n)
	}
	if cnt.total() != 2 || len(logs.records(alertMsg)) != 2 {
		t.Fatalf("alerts: %d notifications, %d log lines; want one per copy", cnt.total(), len(logs.records(alertMsg)))
	}
	if known, err := ReadRegistry(pal); err != nil || len(known) != 0 {
		t.Fatalf("registry on disk after the merges = %+v, %v", known, err)
	}
	if ds, err := r.c.Status(context.Background()); err != nil || ds.Scans != 1 {
		t.Fatalf("the daemon scanned the hive %d times (%v); the test means to run without ticks", ds.Scans, err)
	}
}

// TestEvents feeds watcher events straight to the component: paths map
// onto the hive, duplicates do not re-alert, a later event fills in the
// device name, a deletion resolves, and paths outside the hive are
// ignored.
func TestEvents(t *testing.T) {
	hv := newHiveDir(t)
	pal := t.TempDir()
	logs := newLogRecorder(t)
	var cnt counter
	comp := newComponent(t, Options{Notify: cnt.notify})
	h := mustOpen(t, hv, nil)
	comp.reg = newRegistry(RegistryPath(pal), h)
	comp.log = logs.logger()
	comp.alerts.log = comp.log
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { comp.alerts.run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })

	copyPath := filepath.Join(hv, "agents", "dwight", copyName)
	writeFile(t, copyPath, "lost\n")
	ev := func(path, action string, known bool) syncthing.ConflictEvent {
		cn, ok := hive.ParseConflictName(filepath.Base(path))
		if !ok {
			t.Fatalf("%s is no conflict name", path)
		}
		e := syncthing.ConflictEvent{Path: path, Original: filepath.Join(filepath.Dir(path), cn.Original), Name: cn, Action: action, Source: "test"}
		if known {
			e.WinnerKnown, e.Winner.Name = true, "bravo"
		}
		return e
	}
	steps := []struct {
		name      string
		ev        syncthing.ConflictEvent
		wantOpen  int
		wantName  string
		wantAlert int
	}{
		{"new, winner unknown", ev(copyPath, syncthing.ActionModified, false), 1, "", 1},
		{"again, now with the winner's name", ev(copyPath, syncthing.ActionModified, true), 1, "bravo", 1},
		{"outside the hive", ev(filepath.Join(t.TempDir(), copyName), syncthing.ActionModified, true), 1, "bravo", 1},
		{"deleted", ev(copyPath, syncthing.ActionDeleted, true), 0, "", 1},
		{"deleted again", ev(copyPath, syncthing.ActionDeleted, true), 0, "", 1},
	}
	for _, s := range steps {
		comp.handleEvent(context.Background(), s.ev)
		l := comp.List()
		if len(l.Conflicts) != s.wantOpen {
			t.Fatalf("%s: open = %+v, want %d", s.name, l, s.wantOpen)
		}
		if s.wantOpen == 1 {
			c := l.Conflicts[0]
			if c.Path != copyPath || c.Wing != "dwight" || c.FoundBy != FoundByEvent || c.Device != "ABCDEFG" || c.DeviceName != s.wantName {
				t.Fatalf("%s: conflict = %+v", s.name, c)
			}
		}
		testutil.WaitFor(t, s.name+": alerts delivered", func() bool { return cnt.total() == s.wantAlert })
		if n := len(logs.records(alertMsg)); n != s.wantAlert {
			t.Fatalf("%s: %d alert lines, want %d", s.name, n, s.wantAlert)
		}
	}
	known, err := ReadRegistry(pal)
	if err != nil || len(known) != 0 {
		t.Fatalf("registry on disk = %+v, %v", known, err)
	}
}

// TestWebhookThroughDaemon: a new conflict is POSTed to the webhook, and
// status counts the delivery.
func TestWebhookThroughDaemon(t *testing.T) {
	srv := newWebhookServer(t, 503, 200)
	hv := newHiveDir(t)
	writeFile(t, filepath.Join(hv, "agents", "dwight", copyName), "lost\n")
	comp := newComponent(t, Options{Webhook: srv.URL + "/hook", WebhookBackoff: time.Millisecond})
	r := startDaemon(t, filepath.Join(t.TempDir(), "palace"), hv, comp, 0, newLogRecorder(t).logger())
	testutil.WaitFor(t, "the webhook to be delivered", func() bool { return comp.Snapshot().Alerts.Sent == 1 })
	if srv.requests() != 2 {
		t.Fatalf("%d webhook requests, want 2", srv.requests())
	}
	l := r.list(t, "")
	srv.mu.Lock()
	body := string(srv.bodies[1])
	srv.mu.Unlock()
	if len(l.Conflicts) != 1 || !strings.Contains(body, `"path":"`+l.Conflicts[0].Path+`"`) {
		t.Fatalf("webhook body %s for %+v", body, l)
	}
	if st := comp.Snapshot().Alerts; st.Webhook == nil || *st.Webhook != srv.URL || st.Failed != 0 {
		t.Fatalf("alert status = %+v", st)
	}
}

func TestNewRejects(t *testing.T) {
	for _, opts := range []Options{{Webhook: "ftp://x"}, {Command: []string{""}}} {
		if _, err := New(opts); err == nil {
			t.Errorf("New(%+v) accepted", opts)
		}
	}
}

func TestNewChecksCommand(t *testing.T) {
	if _, err := New(Options{Command: []string{"memminer-no-such-command-here"}}); err == nil || !strings.Contains(err.Error(), "on-conflict command") {
		t.Fatalf("New with a missing program: %v", err)
	}
}

// registryAside returns the one place the registry of the palace in pal
// was moved aside to.
func registryAside(t *testing.T, pal string) string {
	t.Helper()
	asides, err := filepath.Glob(RegistryPath(pal) + ".damaged-*")
	if err != nil || len(asides) != 1 {
		t.Fatalf("registry set aside as %v (%v), want one", asides, err)
	}
	return asides[0]
}
