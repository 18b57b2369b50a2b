package conflicts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
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
)

// hookArg is the first argument that makes the test binary act as an
// --on-conflict command (see TestMain).
const hookArg = "memminer-conflict-hook"

// TestMain lets the test binary double as an --on-conflict command:
// `<test binary> memminer-conflict-hook OUT` appends one JSON line with its
// MEMMINER_* and STGUIAPIKEY environment to OUT.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == hookArg {
		if err := hookMain(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func hookMain(out string) error {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "MEMMINER_") || k == "STGUIAPIKEY" {
			env[k] = v
		}
	}
	line, err := json.Marshal(env)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// hookCommand is an --on-conflict command recording each run in out.
func hookCommand(t *testing.T, out string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, hookArg, out}
}

// hookRuns reads what the hook command recorded, one map per run.
func hookRuns(t *testing.T, out string) []map[string]string {
	t.Helper()
	data, err := os.ReadFile(out)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var runs []map[string]string
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]string
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("hook output %q: %v", line, err)
		}
		runs = append(runs, m)
	}
	return runs
}

// logRecorder is a slog handler that keeps every record (with its
// attributes) and passes the text to t.Log while the test runs.
type logRecorder struct {
	mu   *sync.Mutex
	recs *[]logRecord
	t    testing.TB
	done *bool
	pre  []slog.Attr
}

// logRecord is one log line.
type logRecord struct {
	At    time.Time
	Level slog.Level
	Msg   string
	Attrs map[string]string
}

func newLogRecorder(t testing.TB) *logRecorder {
	done := false
	l := &logRecorder{mu: &sync.Mutex{}, recs: &[]logRecord{}, t: t, done: &done}
	t.Cleanup(func() {
		l.mu.Lock()
		*l.done = true
		l.mu.Unlock()
	})
	return l
}

func (l *logRecorder) logger() *slog.Logger { return slog.New(l) }

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{At: time.Now(), Level: r.Level, Msg: r.Message, Attrs: map[string]string{}}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	add := func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.String()
		fmt.Fprintf(&b, " %s=%q", a.Key, a.Value.String())
		return true
	}
	for _, a := range l.pre {
		add(a)
	}
	r.Attrs(add)
	l.mu.Lock()
	defer l.mu.Unlock()
	*l.recs = append(*l.recs, rec)
	if !*l.done {
		l.t.Log(b.String())
	}
	return nil
}

func (l *logRecorder) WithAttrs(as []slog.Attr) slog.Handler {
	c := *l
	c.pre = append(append([]slog.Attr{}, l.pre...), as...)
	return &c
}

func (l *logRecorder) WithGroup(string) slog.Handler { return l }

// records returns the records whose message contains msg.
func (l *logRecorder) records(msg string) []logRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []logRecord
	for _, r := range *l.recs {
		if strings.Contains(r.Msg, msg) {
			out = append(out, r)
		}
	}
	return out
}

// alertMsg is the start of the WARN line of a new conflict.
const alertMsg = "syncthing conflict:"

// running is an in-process daemon with a conflicts component.
type running struct {
	d      TestDaemon
	c      TestClient
	comp   *Component
	scans  atomic.Int64
	cancel context.CancelFunc
	done   chan struct{}
}

// TestDaemon is a daemon running a Component for these tests, and
// TestClient its control socket's client. This package cannot import the
// daemon, its socket client or api (they import it): the external test
// file daemon_test.go provides them through StartTestDaemon.
type TestDaemon interface {
	Palace() *palace.Palace
	Run(ctx context.Context) error
}

// TestClient is what these tests ask of the daemon's socket.
type TestClient interface {
	// Get answers GET path?q into out.
	Get(ctx context.Context, path string, q url.Values, out any) error
	// Status is the parts of the daemon's status these tests read.
	Status(ctx context.Context) (TestStatus, error)
	// Search returns the hits of query.
	Search(ctx context.Context, query string) ([]TestHit, error)
	// Code is the wire code of an error Get returned.
	Code(err error) string
}

// TestStatus is the daemon's conflicts_open, its scans, and whether its
// status has this component's part.
type TestStatus struct {
	ConflictsOpen int
	Scans         int64
	HasComponent  bool
}

// TestHit is a search hit.
type TestHit struct{ Wing, Text, Source string }

// TestDaemonOptions are a test daemon's: Scanned is called after each of
// the component's walks that follow the daemon's scans.
type TestDaemonOptions struct {
	Palace, Hive string
	Agents       []string
	Interval     time.Duration
	Logger       *slog.Logger
	Component    *Component
	Scanned      func()
}

// StartTestDaemon builds a daemon for a test (daemon_test.go sets it).
var StartTestDaemon func(TestDaemonOptions) (TestDaemon, TestClient, error)

// startDaemon runs a daemon on palaceDir and hive with comp attached; it
// is stopped by stop or when the test ends. interval is the mine loop's
// period (each tick rescans the hive); zero means an hour. agents are the
// daemon's globs of agent directories besides agents/<id>. r.scans counts
// the walks that follow the daemon's scans, so a test can wait for the
// start scan's walk before it makes conflict copies.
func startDaemon(t testing.TB, palaceDir, hive string, comp *Component, interval time.Duration, log *slog.Logger, agents ...string) *running {
	t.Helper()
	if interval == 0 {
		interval = time.Hour
	}
	r := &running{comp: comp, done: make(chan struct{})}
	d, c, err := StartTestDaemon(TestDaemonOptions{
		Palace: palaceDir, Hive: hive, Agents: agents, Interval: interval, Logger: log,
		Component: comp, Scanned: func() { r.scans.Add(1) },
	})
	if err != nil {
		t.Fatalf("daemon.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.d, r.c, r.cancel = d, c, cancel
	go func() {
		defer close(r.done)
		if err := d.Run(ctx); err != nil {
			t.Errorf("daemon Run: %v", err)
		}
	}()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop stops the daemon and waits for it.
func (r *running) stop(t testing.TB) {
	t.Helper()
	r.cancel()
	wait, stop := testutil.CleanupContext(t)
	defer stop()
	select {
	case <-r.done:
	case <-wait.Done():
		t.Errorf("daemon did not stop before the test's deadline")
	}
}

// list asks the daemon for its open conflicts.
func (r *running) list(t testing.TB, wing string) List {
	t.Helper()
	var l List
	q := map[string][]string{}
	if wing != "" {
		q["wing"] = []string{wing}
	}
	if err := r.c.Get(context.Background(), "/conflicts", q, &l); err != nil {
		t.Fatalf("GET /conflicts: %v", err)
	}
	return l
}

// writeFile writes content to path, creating directories.
func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newHiveDir makes a hive with agents dwight and pam, one memory file each.
func newHiveDir(t testing.TB) string {
	t.Helper()
	h := filepath.Join(t.TempDir(), "hive")
	writeFile(t, filepath.Join(h, "agents", "dwight", "memory.md"), "# dwight\n- likes beets\n")
	writeFile(t, filepath.Join(h, "agents", "pam", "memory.md"), "# pam\n- draws\n")
	return h
}

// copyName is a conflict copy name of memory.md won by device ABCDEFG.
const copyName = "memory.sync-conflict-20240131-093000-ABCDEFG.md"

// mustOpen opens the hive at dir with the agents globs.
func mustOpen(t testing.TB, dir string, agents []string) *hive.Hive {
	t.Helper()
	h, err := hive.Open(dir, agents)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
