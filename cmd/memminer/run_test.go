package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
)

// TestMain lets a test run this test binary as memminer itself
// (MEMMINER_TEST_MAIN=1), to send it real signals.
func TestMain(m *testing.M) {
	if os.Getenv("MEMMINER_TEST_MAIN") == "1" {
		main()
		return
	}
	if n := os.Getenv("MEMMINER_TEST_REPEAT"); n != "" {
		repeatMain(n)
		return
	}
	os.Exit(m.Run())
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader in two
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// daemonRun is `memminer run` running in process.
type daemonRun struct {
	cancel context.CancelFunc
	done   chan struct{}
	code   int
	stderr *syncBuffer
}

// startRun runs `memminer run --hive hive` for c's palace until the test
// ends, and waits for its socket to answer.
func startRun(t *testing.T, c *cli, hive string, extra ...string) *daemonRun {
	t.Helper()
	if c.served != nil {
		// The test starts its own: the one serve started goes first.
		c.served.stop(t)
		c.served = nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &daemonRun{cancel: cancel, done: make(chan struct{}), stderr: &syncBuffer{}}
	args := append([]string{"run", "--hive", hive}, extra...)
	go func() {
		defer close(r.done)
		r.code = run(ctx, args, &syncBuffer{}, r.stderr, func(k string) string { return c.env[k] })
	}()
	t.Cleanup(func() { r.stop(t) })
	cl := daemonclient.NewClient(c.palace)
	// Its first scan done: until then a command on an empty palace hears
	// that the daemon is mining it, as it may be.
	testutil.WaitFor(t, "the daemon's socket and first scan", func() bool {
		select {
		case <-r.done:
			t.Fatalf("memminer run exited %d: %s", r.code, r.stderr)
		default:
		}
		st, err := cl.Status(context.Background())
		return err == nil && st.Daemon.Scans > 0
	})
	return r
}

// idle waits until the daemon has nothing to do.
func (r *daemonRun) idle(t *testing.T, c *cli) api.Status {
	t.Helper()
	var st api.Status
	testutil.WaitFor(t, "the daemon to become idle", func() bool {
		var err error
		st, err = daemonclient.NewClient(c.palace).Status(context.Background())
		return err == nil && st.Daemon.Idle()
	})
	return st
}

func (r *daemonRun) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	<-r.done
	if r.code != 0 {
		t.Errorf("memminer run exited %d: %s", r.code, r.stderr)
	}
}

// The daemon's part of status differs run to run in these.
var (
	pidRe    = regexp.MustCompile(`(pid |"pid": )\d+`)
	uptimeRe = regexp.MustCompile(`(up |"uptime_seconds": )[0-9][a-zµ.0-9e-]*`)
	// activityRe is status --json's daemon.activity: counts and latencies
	// of the run, which vary.
	activityRe = regexp.MustCompile(`(?s)("activity": )\{.*?\n    \}`)
)

// TestDaemonOutputMatchesDirect runs the same commands with and without a
// daemon serving the palace: stdout, stderr and exit codes must be the
// same, and match the golden files of the direct CLI.
func TestDaemonOutputMatchesDirect(t *testing.T) {
	direct, served := newCLI(t), newCLI(t)
	// The daemon watches an empty hive (agents/ without agents), so the
	// commands below do all the mining, as they do without it.
	emptyHive := filepath.Join(filepath.Dir(served.palace), "empty-hive")
	if err := os.MkdirAll(filepath.Join(emptyHive, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*cli{direct, served} {
		testutil.WriteFile(t, filepath.Join(c.hive, "junk", "bad.md"), "not \xff utf-8\n")
		testutil.WriteFile(t, filepath.Join(c.hive, "junk", "good.md"), "- The junk drawer holds the spare keys.\n")
	}
	// Idle: while its first scan runs, a command says the daemon is mining.
	startRun(t, served, emptyHive).idle(t, served)
	// Files are named from the hive each mines, not the daemon's.
	direct.env["MEMMINER_HIVE"], served.env["MEMMINER_HIVE"] = direct.hive, served.hive

	steps := []struct {
		golden string // the direct CLI's golden file, if any
		args   func(c *cli) []string
	}{
		{"", func(*cli) []string { return []string{"search", "anything"} }},
		{"mine.txt", func(c *cli) []string { return []string{"mine", c.hive} }},
		{"mine-again.json", func(c *cli) []string { return []string{"mine", c.hive, "--json"} }},
		{"search.txt", func(*cli) []string { return []string{"search", "how is the web bundle built", "--results", "3"} }},
		{"search-wing.json", func(*cli) []string { return []string{"search", "db-2", "--wing", "dwight", "-n", "2", "--json"} }},
		{"search-explain.txt", func(*cli) []string { return []string{"search", "web bundle kestrel osprey", "--explain", "-n", "2"} }},
		{"search-explain-empty.txt", func(*cli) []string { return []string{"search", "JIRA-1234 in the staging database", "--explain"} }},
		{"search-explain-empty.json", func(*cli) []string {
			return []string{"search", "JIRA-1234 in the staging database", "--explain", "--json"}
		}},
		{"search-nothing.json", func(*cli) []string { return []string{"search", "JIRA-1234", "--json"} }},
		{"", func(*cli) []string { return []string{"search", "x", "--wing", "nobody"} }},
		{"", func(c *cli) []string { return []string{"mine", filepath.Join(c.hive, "junk"), "--wing", "junk"} }},
		{"", func(c *cli) []string { return []string{"mine", filepath.Join(c.hive, "agents", "nope")} }},
		{"", func(c *cli) []string { return []string{"mine", c.hive, "--dry-run", "--json"} }},
		{"", func(*cli) []string { return []string{"search", "spare keys", "--json"} }},
		{"", func(c *cli) []string { return []string{"mine", filepath.Join(c.hive, "junk")} }},
		{"forget-dry-run.txt", func(*cli) []string { return []string{"forget", "--wing", "junk", "--dry-run"} }},
		{"forget.json", func(*cli) []string { return []string{"forget", "--wing", "junk", "--json"} }},
		{"", func(*cli) []string { return []string{"forget", "--wing", "junk"} }},
		{"", func(*cli) []string { return []string{"search", "spare keys", "--json"} }},
	}
	for _, s := range steps {
		dOut, dErr, dCode := direct.run(s.args(direct)...)
		sOut, sErr, sCode := served.run(s.args(served)...)
		name := strings.Join(s.args(direct), " ")
		if dOut != sOut || dErr != sErr || dCode != sCode {
			t.Fatalf("memminer %s differs with a daemon:\n--- direct (exit %d)\n%s%s\n--- daemon (exit %d)\n%s%s", name, dCode, dOut, dErr, sCode, sOut, sErr)
		}
		if s.golden != "" {
			golden(t, s.golden, sOut)
		}
	}

	// Status says active and what the daemon does; the rest is the same.
	scrub := func(s string) string {
		s = strings.ReplaceAll(s, emptyHive, "$DAEMON_HIVE")
		s = pidRe.ReplaceAllString(s, "${1}$$PID")
		s = activityRe.ReplaceAllString(s, "${1}$$ACTIVITY")
		return uptimeRe.ReplaceAllString(s, "${1}$$UPTIME")
	}
	golden(t, "daemon-status.txt", scrub(served.ok("status")))
	golden(t, "daemon-status.json", scrub(served.ok("status", "--json")))
	// Active means a daemon serves the palace, whether or not it is asked.
	if out := served.ok("--no-daemon", "status"); !strings.Contains(out, "active:      true") || strings.Contains(out, "daemon:") {
		t.Fatalf("--no-daemon status: %s", out)
	}
	if out := direct.ok("--no-daemon", "status"); !strings.Contains(out, "active:      false") {
		t.Fatalf("--no-daemon status without a daemon: %s", out)
	}
}

// TestMineWhileDaemonRuns hands mines to a running daemon from several
// processes' worth of CLI calls while files change and searches run: every
// call succeeds, nothing is lost, the palace stays whole (run with -race).
func TestMineWhileDaemonRuns(t *testing.T) {
	c := newCLI(t)
	r := startRun(t, c, c.hive)
	r.idle(t, c)
	const rounds = 4
	var wg sync.WaitGroup
	for i := range rounds {
		wg.Add(3)
		go func() {
			defer wg.Done()
			out, stderr, code := c.run("mine", c.hive)
			if code != 0 || !strings.HasPrefix(out, "mined wings angela, dwight, jim, pam") {
				t.Errorf("mine: exit %d, %q %q", code, out, stderr)
			}
		}()
		go func() {
			defer wg.Done()
			testutil.AppendFile(t, filepath.Join(c.hive, "agents", "jim", "memory.md"), fmt.Sprintf("\n- Parallel fact number%d about the stapler.\n", i))
			out, stderr, code := c.run("mine", filepath.Join(c.hive, "agents", "jim"))
			if code != 0 || !strings.HasPrefix(out, "mined wing jim") {
				t.Errorf("mine jim: exit %d, %q %q", code, out, stderr)
			}
		}()
		go func() {
			defer wg.Done()
			// Before the first fact is mined nothing matches: exit 1, silently.
			if out, stderr, code := c.run("search", "stapler"); code != 0 && (code != exitError || out != "no matching notes\n") || stderr != "" {
				t.Errorf("search: exit %d, %q %q", code, out, stderr)
			}
		}()
	}
	wg.Wait()
	out := c.ok("search", "parallel fact stapler", "--wing", "jim", "-n", "10")
	for i := range rounds {
		if !strings.Contains(out, fmt.Sprintf("number%d", i)) {
			t.Fatalf("fact %d lost:\n%s", i, out)
		}
	}
	r.idle(t, c)
	r.stop(t)
	checkPalace(t, c.palace)
}

// checkPalace opens the palace and checks every wing loads and every
// source's notes are there; it returns the note count per wing.
func checkPalace(t *testing.T, dir string) map[string]int {
	t.Helper()
	p, err := palace.Open(context.Background(), dir, palace.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Damaged(); len(d) > 0 {
		t.Fatalf("damaged wings: %+v", d)
	}
	counts := map[string]int{}
	for _, w := range p.Wings() {
		have := map[string]bool{}
		for _, n := range p.Notes(w.ID) {
			have[n.ID] = true
		}
		listed := 0
		for _, s := range p.Sources(w.ID) {
			listed += len(s.NoteIDs)
			for _, id := range s.NoteIDs {
				if !have[id] {
					t.Fatalf("wing %s: %s lists note %s, which is missing", w.ID, s.Path, id)
				}
			}
		}
		if listed != len(have) {
			t.Fatalf("wing %s: sources list %d notes, the wing has %d", w.ID, listed, len(have))
		}
		counts[w.ID] = len(have)
	}
	return counts
}

// startProcess runs this test binary as memminer with args and c's
// environment, killing it when the test ends if it still runs. exited
// receives Wait's result.
func startProcess(t *testing.T, c *cli, args ...string) (*exec.Cmd, chan error, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = []string{"MEMMINER_TEST_MAIN=1"}
	for k, v := range c.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	return cmd, exited, stderr
}

// exitAfterSIGTERM waits for a process from startProcess that was sent
// SIGTERM to exit, and returns Wait's result.
func exitAfterSIGTERM(t *testing.T, exited <-chan error, stderr *syncBuffer) error {
	t.Helper()
	ctx, cancel := testutil.WaitContext(t)
	defer cancel()
	select {
	case err := <-exited:
		return err
	case <-ctx.Done():
		t.Fatalf("memminer run did not exit after SIGTERM:\n%s", stderr.String())
		return nil
	}
}

// TestRunStopsCleanlyOnSIGTERM runs memminer run as a real process, sends
// SIGTERM in the middle of mining a large hive, and checks it exits 0 and
// leaves a palace that a restart completes into what one clean mine gives.
func TestRunStopsCleanlyOnSIGTERM(t *testing.T) {
	c := newCLI(t)
	hive := filepath.Join(filepath.Dir(c.palace), "big-hive")
	const agents, notes = 80, 60
	for a := range agents {
		var b strings.Builder
		fmt.Fprintf(&b, "# Agent %d\n\n", a)
		for n := range notes {
			fmt.Fprintf(&b, "- Fact %d of agent %d: term%d pairs with term%d.\n", n, a, (a*7+n)%101, (a+n*3)%97)
		}
		testutil.WriteFile(t, filepath.Join(hive, "agents", fmt.Sprintf("a%03d", a), "memory.md"), b.String())
	}
	cmd, exited, stderr := startProcess(t, c, "run", "--hive", hive)
	cl := daemonclient.NewClient(c.palace)
	var st api.Status
	testutil.WaitFor(t, "the daemon to be mining", func() bool {
		var err error
		st, err = cl.Status(context.Background())
		return err == nil && st.Daemon.Mines > 0
	})
	if len(st.Daemon.Pending.Wings) == 0 {
		t.Fatalf("the hive was mined before the signal could interrupt it (%d mines); make the hive larger", st.Daemon.Mines)
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := exitAfterSIGTERM(t, exited, stderr)
	t.Logf("exited %v after SIGTERM", time.Since(sent).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("memminer run: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "memminer daemon stopped") {
		t.Fatalf("no clean stop in the log:\n%s", stderr.String())
	}
	partial := checkPalace(t, c.palace)
	if len(partial) == 0 || len(partial) >= agents {
		t.Fatalf("%d wings saved; want a partial mine", len(partial))
	}

	// A restart completes the palace into what one clean mine gives.
	r := startRun(t, c, hive)
	r.idle(t, c)
	r.stop(t)
	got := checkPalace(t, c.palace)
	fresh := filepath.Join(t.TempDir(), "fresh")
	p, err := palace.Open(context.Background(), fresh, palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mine.Mine(context.Background(), p, hive, mine.Options{}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	want := checkPalace(t, fresh)
	if len(got) != len(want) {
		t.Fatalf("%d wings after the restart, %d from one clean mine", len(got), len(want))
	}
	for w, n := range want {
		if got[w] != n {
			t.Fatalf("wing %s: %d notes after the restart, %d from one clean mine", w, got[w], n)
		}
	}
}

func TestRunErrors(t *testing.T) {
	c := newCLI(t)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no hive", []string{"run"}, exitUsage, "no hive"},
		{"missing hive", []string{"run", "--hive", filepath.Join(c.hive, "nope")}, exitError, "no such file"},
		{"remote metrics", []string{"run", "--hive", c.hive, "--metrics-addr", "0.0.0.0:9464"}, exitUsage, "--metrics-allow-remote"},
		{"remote metrics port 9", []string{"run", "--hive", c.hive, "--metrics-addr", "0.0.0.0:9"}, exitUsage, "--metrics-addr: "},
		{"bad metrics address", []string{"run", "--hive", c.hive, "--metrics-addr", "bogus"}, exitUsage, "--metrics-addr: metrics address \"bogus\": want host:port"},
		{"bad log format", []string{"run", "--hive", c.hive, "--log-format", "xml"}, exitUsage, "--log-format"},
		{"short interval", []string{"run", "--hive", c.hive, "--mine-interval", "10ms"}, exitUsage, "at least 1s"},
		{"arguments", []string{"run", c.hive}, exitUsage, "run takes no arguments"},
		{"agents directory as hive", []string{"run", "--hive", filepath.Join(c.hive, "agents")}, exitUsage,
			"memminer: $HIVE/agents has no agents/ directory; did you mean --hive $HIVE?\n"},
		{"agent directory as hive", []string{"run", "--hive", filepath.Join(c.hive, "agents", "pam")}, exitUsage,
			"$HIVE/agents/pam has no agents/ directory; it looks like an agent directory: did you mean --hive $HIVE?"},
		{"directory holding memory.md as hive", []string{"run", "--hive", filepath.Join(c.hive, "loose")}, exitUsage,
			"$HIVE/loose has no agents/ directory but holds memory.md, like an agent directory: a hive keeps each agent in agents/<id>/ below it; move the files to $HIVE/loose/agents/<id> and pass that hive, or mine this directory once with memminer mine $HIVE/loose --wing ID"},
	}
	testutil.WriteFile(t, filepath.Join(c.hive, "loose", "memory.md"), "- a loose fact\n")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := c.run(tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.msg) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.msg)
			}
		})
	}
}

func TestRunDisabledIdles(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_ENABLED"] = "false"
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"run", "--hive", c.hive}, &syncBuffer{}, &stderr, func(k string) string { return c.env[k] })
	}()
	testutil.WaitFor(t, "the disabled message", func() bool { return strings.Contains(stderr.String(), "disabled") })
	if _, err := daemonclient.NewClient(c.palace).Status(context.Background()); !errors.Is(err, api.ErrNotRunning) {
		t.Fatalf("a disabled daemon answers: %v", err)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestMineFailsClearlyWithOtherModel: a daemon holding the palace with one
// model refuses mines configured with another, and says why.
func TestMineFailsClearlyWithOtherModel(t *testing.T) {
	c := newCLI(t)
	startRun(t, c, c.hive)
	_, stderr, code := c.run("mine", c.hive, "--model", "ollama:other")
	if code != exitError || !strings.Contains(stderr, "uses model lexical, not ollama:other") || !strings.Contains(stderr, "memminer stop") {
		t.Fatalf("exit %d, %q", code, stderr)
	}
}

// TestRunHiveWithoutAgents: a hive with no agents/ directory yet is not a
// mistake run refuses: the daemon starts and says so in status.
func TestRunHiveWithoutAgents(t *testing.T) {
	c := newCLI(t)
	hive := filepath.Join(filepath.Dir(c.palace), "new-hive")
	if err := os.MkdirAll(hive, 0o755); err != nil {
		t.Fatal(err)
	}
	r := startRun(t, c, hive)
	st := r.idle(t, c)
	if len(st.Daemon.Errors) != 1 || st.Daemon.Errors[0].Path != hive || !strings.HasPrefix(st.Daemon.Errors[0].Error, "no agents/ directory") {
		t.Fatalf("status errors: %+v", st.Daemon.Errors)
	}
	if !strings.Contains(r.stderr.String(), "level=WARN msg=\"the hive has no agents/ directory") {
		t.Fatalf("no warning in the log:\n%s", r.stderr)
	}
}

// TestRunRefusesSecondDaemon: run for a palace another daemon serves fails
// at once, naming it, instead of waiting for the palace lock.
func TestRunRefusesSecondDaemon(t *testing.T) {
	c := newCLI(t)
	startRun(t, c, c.hive)
	// Without the socket check, this run would wait an hour for the lock.
	c.env["MEMMINER_LOCK_TIMEOUT"] = "1h"
	type result struct {
		stderr string
		code   int
	}
	done := make(chan result, 1)
	go func() {
		var stderr syncBuffer
		code := run(context.Background(), []string{"run", "--hive", c.hive}, &syncBuffer{}, &stderr, func(k string) string { return c.env[k] })
		done <- result{stderr.String(), code}
	}()
	ctx, cancel := testutil.WaitContext(t)
	defer cancel()
	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		t.Fatal("the second run waits for the palace lock instead of asking the running daemon")
	}
	want := fmt.Sprintf("memminer: a memminer daemon (pid %d) already serves this palace (%s)", os.Getpid(), c.palace)
	if res.code != exitError || !strings.Contains(res.stderr, want) {
		t.Fatalf("exit %d, stderr %q; want exit %d and %q", res.code, res.stderr, exitError, want)
	}
}

// TestForgetThroughDaemon forgets a wing of the palace a daemon holds: the
// daemon checks its own hive, and afterwards serves the palace without it.
func TestForgetThroughDaemon(t *testing.T) {
	c := newCLI(t)
	r := startRun(t, c, c.hive)
	r.idle(t, c)
	if _, stderr, code := c.run("forget", "--wing", "jim"); code != exitError || !strings.Contains(stderr, "agents/jim, which still exists") {
		t.Fatalf("forget through the daemon: exit %d, %q", code, stderr)
	}
	if out := c.ok("forget", "--wing", "jim", "--dry-run", "--force"); !strings.HasPrefix(out, "would forget wing jim: 8 notes from 1 file") {
		t.Fatalf("dry run: %q", out)
	}
	golden(t, "forget.txt", c.ok("forget", "--wing", "jim", "--force"))
	st := c.ok("status", "--json")
	if strings.Contains(st, `"id": "jim"`) {
		t.Fatalf("jim still served:\n%s", st)
	}
	if _, stderr, code := c.run("forget", "--wing", "jim"); code != exitUsage || !strings.Contains(stderr, `unknown wing "jim"`) {
		t.Fatalf("second forget: exit %d, %q", code, stderr)
	}
	r.stop(t)
	if counts := checkPalace(t, c.palace); counts["jim"] != 0 || len(counts) != 3 {
		t.Fatalf("palace after the daemon stopped: %v", counts)
	}
}

// TestStatusAvailableSameWithDaemon: with a remote embedding backend that
// does not answer, status says available: false with and without the
// daemon (the daemon once said true: its client had opened fine).
func TestStatusAvailableSameWithDaemon(t *testing.T) {
	t.Parallel() // each status waits out the probe's timeout
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	c := newCLI(t)
	c.env["MEMMINER_EMBEDDING_MODEL"] = "openai:foo"
	c.env["OPENAI_BASE_URL"] = "http://" + closed + "/v1"
	c.env["OPENAI_API_KEY"] = "test-key"
	emptyHive := filepath.Join(filepath.Dir(c.palace), "empty-hive")
	if err := os.MkdirAll(filepath.Join(emptyHive, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	direct := c.ok("--no-daemon", "status", "--json")
	startRun(t, c, emptyHive)
	served := c.ok("status", "--json")
	for name, out := range map[string]string{"without the daemon": direct, "through the daemon": served} {
		if !strings.Contains(out, `"available": false`) || !strings.Contains(out, `"model_error": "openai foo: `) {
			t.Errorf("%s: want available false and why:\n%s", name, out)
		}
	}
	if !strings.Contains(served, `"active": true`) {
		t.Errorf("status did not come from the daemon:\n%s", served)
	}
	// The daemon probes as one short attempt too: the real cause, not its
	// mining client's retries cut off by the probe's deadline.
	modelError := regexp.MustCompile(`"model_error": .*`)
	d, s := modelError.FindString(direct), modelError.FindString(served)
	if !strings.Contains(d, "connection refused") || s != d {
		t.Errorf("through the daemon %s, without it %s; want the same, naming the refused connection", s, d)
	}
}

// TestRunReloadsOnSIGHUP: SIGHUP once killed the daemon (exit 129, socket
// left behind). It reloads the configuration instead: an agents glob
// added to the config file makes a new wing, in the same process, which
// still stops cleanly on SIGTERM.
func TestRunReloadsOnSIGHUP(t *testing.T) {
	c := newCLI(t)
	hive := filepath.Join(filepath.Dir(c.palace), "hup-hive")
	testutil.WriteFile(t, filepath.Join(hive, "agents", "pam", "memory.md"), "- The printer is on floor two.\n")
	testutil.WriteFile(t, filepath.Join(hive, "bots", "creed", "memory.md"), "- The quarry key is under the mat.\n")
	cfgFile := filepath.Join(filepath.Dir(c.palace), "config.yml")
	testutil.WriteFile(t, cfgFile, "hive: "+hive+"\n")
	cmd, exited, stderr := startProcess(t, c, "--config", cfgFile, "run")
	cl := daemonclient.NewClient(c.palace)
	wings := func() []string {
		st, err := cl.Status(context.Background())
		if err != nil || st.Daemon == nil || st.Daemon.Scans == 0 || st.Daemon.Working != nil {
			return nil
		}
		var ids []string
		for _, w := range st.Wings {
			ids = append(ids, w.ID)
		}
		return ids
	}
	testutil.WaitFor(t, "the daemon to mine pam", func() bool { return slices.Equal(wings(), []string{"pam"}) })

	testutil.WriteFile(t, cfgFile, "hive: "+hive+"\nagents: [bots/*]\n")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the reloaded daemon to mine creed", func() bool {
		select {
		case err := <-exited:
			t.Fatalf("memminer run exited after SIGHUP: %v\n%s", err, stderr.String())
		default:
		}
		return slices.Equal(wings(), []string{"creed", "pam"})
	})
	st, err := cl.Status(context.Background())
	if err != nil || st.Daemon.PID != cmd.Process.Pid {
		t.Fatalf("status after the reload: pid %v, %v; want the same process %d", st.Daemon, err, cmd.Process.Pid)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = exitAfterSIGTERM(t, exited, stderr)
	if err != nil || !strings.Contains(stderr.String(), "configuration reloaded") {
		t.Fatalf("memminer run: %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(daemon.SocketPath(c.palace)); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

// With a daemon serving the palace under another model, status says so
// and a search's model advice names the fix that works: mining would go
// to that daemon and change nothing.
func TestOtherModelThanTheDaemon(t *testing.T) {
	c := newCLI(t)
	r := startRun(t, c, c.hive) // lexical
	r.idle(t, c)
	c.env["MEMMINER_MODEL_CACHE"] = realModelCache(t)
	_, stderr, code := c.run("status", "--model", "use-lite")
	if code != 0 || !strings.Contains(stderr, "serving this palace uses model lexical, not use-lite") {
		t.Fatalf("status: exit %d, %q", code, stderr)
	}
	_, stderr, code = c.run("search", "web bundle", "--model", "use-lite")
	if code != exitError || !strings.Contains(stderr, "uses model lexical, not use-lite: search without --model to use the daemon's, or restart the daemon with --model use-lite") {
		t.Fatalf("search: exit %d, %q", code, stderr)
	}
	if strings.Count(stderr, "embedded with another model") != 1 {
		t.Fatalf("repeated: %q", stderr)
	}
	// The same model from the environment: there is no --model to drop.
	c.env["MEMMINER_EMBEDDING_MODEL"] = "use-lite"
	_, stderr, code = c.run("search", "web bundle")
	if code != exitError || strings.Contains(stderr, "without --model") || !strings.Contains(stderr, "search with --model lexical, or restart the daemon with --model use-lite") {
		t.Fatalf("search with the model from the environment: exit %d, %q", code, stderr)
	}
	// Dropping --model would leave the environment's use-lite, not the
	// daemon's lexical: the advice names the daemon's model instead.
	_, stderr, code = c.run("search", "web bundle", "--model", "ollama:nomic")
	if code != exitError || strings.Contains(stderr, "without --model") || !strings.Contains(stderr, "search with --model lexical, or restart the daemon with --model ollama:nomic") {
		t.Fatalf("search with --model over the environment's model: exit %d, %q", code, stderr)
	}
}
