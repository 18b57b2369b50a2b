package harness

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/bench/hivegen"
	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/service/daemonclient"
)

func TestPercentileAndSpread(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		var ds []time.Duration
		for _, x := range xs {
			ds = append(ds, time.Duration(x)*time.Millisecond)
		}
		return ds
	}
	for _, tt := range []struct {
		in                  []time.Duration
		p50, p95            time.Duration
		median, least, most time.Duration
	}{
		{nil, 0, 0, 0, 0, 0},
		{ms(7), 7 * time.Millisecond, 7 * time.Millisecond, 7 * time.Millisecond, 7 * time.Millisecond, 7 * time.Millisecond},
		{ms(3, 1, 2), 2 * time.Millisecond, 3 * time.Millisecond, 2 * time.Millisecond, time.Millisecond, 3 * time.Millisecond},
		// Even counts: nearest rank takes the lower middle, the median the upper.
		{ms(4, 1, 3, 2), 2 * time.Millisecond, 4 * time.Millisecond, 3 * time.Millisecond, time.Millisecond, 4 * time.Millisecond},
	} {
		in := append([]time.Duration(nil), tt.in...)
		if got := Percentile(in, 50); got != tt.p50 {
			t.Errorf("Percentile(%v, 50) = %v, want %v", tt.in, got, tt.p50)
		}
		if got := Percentile(in, 95); got != tt.p95 {
			t.Errorf("Percentile(%v, 95) = %v, want %v", tt.in, got, tt.p95)
		}
		if got, want := SpreadOf(in), (Spread{tt.median, tt.least, tt.most}); got != want {
			t.Errorf("SpreadOf(%v) = %+v, want %+v", tt.in, got, want)
		}
		for i := range in {
			if in[i] != tt.in[i] {
				t.Fatalf("the input was reordered: %v", in)
			}
		}
	}
}

func TestTime(t *testing.T) {
	calls := 0
	ds, err := Time(3, func() error { calls++; return nil })
	if err != nil || len(ds) != 3 || calls != 3 {
		t.Fatalf("Time(3) = %v, %v after %d calls", ds, err, calls)
	}
	calls = 0
	ds, err = Time(3, func() error {
		calls++
		if calls == 2 {
			return os.ErrNotExist
		}
		return nil
	})
	if err != os.ErrNotExist || len(ds) != 1 || calls != 2 {
		t.Errorf("Time with a failing second call = %v, %v after %d calls", ds, err, calls)
	}
}

func TestTable(t *testing.T) {
	var b bytes.Buffer
	Row(&b, "measure", "a", "b")
	Rule(&b, 3)
	Row(&b, "x", "1 ms", "2 ms")
	want := "| measure | a | b |\n|---|---|---|\n| x | 1 ms | 2 ms |\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestEnvAndAppend(t *testing.T) {
	env := Env([]string{"A=1"}, "/p", "lexical", "MEMMINER_HIVE=/h")
	if got := strings.Join(env, " "); got != "A=1 MEMMINER_PALACE_PATH=/p MEMMINER_EMBEDDING_MODEL=lexical MEMMINER_HIVE=/h" {
		t.Errorf("Env = %q", got)
	}
	path := filepath.Join(t.TempDir(), "memory.md")
	if err := os.WriteFile(path, []byte("- one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendFile(path, "- two\n"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "- one\n- two\n" {
		t.Errorf("after AppendFile: %q", data)
	}
	if err := AppendFile(filepath.Join(t.TempDir(), "missing.md"), "x"); err == nil {
		t.Error("AppendFile created a missing file")
	}
}

func TestProcessFigures(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	rss, hwm, err := Memory(os.Getpid())
	if err != nil || rss <= 0 || hwm < rss {
		t.Errorf("Memory = %d, %d, %v", rss, hwm, err)
	}
	cpu, err := CPUTime(os.Getpid())
	if err != nil || cpu <= 0 {
		t.Errorf("CPUTime = %v, %v", cpu, err)
	}
	if _, err := CPUTime(1 << 30); err == nil {
		t.Error("CPUTime of no process did not fail")
	}
}

// TestMineAndWaitIdle mines a small generated hive in process, and waits
// for an in-process daemon on it to be idle.
func TestMineAndWaitIdle(t *testing.T) {
	ctx := context.Background()
	w, err := NewWorkspace("harness-test-", hivegen.Options{Notes: 60, Agents: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if len(w.IDs) != 2 {
		t.Fatalf("workspace agents %q", w.IDs)
	}
	p, err := Mine(ctx, w.Palace, w.Hive, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(p.Wings()); got != 2 {
		t.Errorf("mined %d wings, want 2", got)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	cl := daemonclient.NewClient(w.Palace)
	if _, err := WaitIdle(ctx, cl, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "within 50ms") {
		t.Errorf("WaitIdle with no daemon: %v", err)
	}
	d, err := daemon.New(ctx, daemon.Options{Palace: w.Palace, Hive: w.Hive, ModelSpec: "lexical", NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(dctx) }()
	defer func() { cancel(); <-done }()
	st, err := WaitIdle(ctx, cl, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if st.Notes != 60 || len(st.Wings) != 2 {
		t.Errorf("idle daemon's status: %d notes in %d wings, want 60 in 2", st.Notes, len(st.Wings))
	}

	tmp := t.TempDir()
	q, done2, err := MineTemp(ctx, tmp, w.Hive, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Wings()) != 2 {
		t.Errorf("MineTemp mined %d wings", len(q.Wings()))
	}
	done2()
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("MineTemp left %d entries in its directory", len(left))
	}
}

func TestDecodeAndJSONLines(t *testing.T) {
	qs, err := Decode[[]string]("q.json", []byte(`["a", "b"]`))
	if err != nil || strings.Join(qs, ",") != "a,b" {
		t.Errorf("Decode = %q, %v", qs, err)
	}
	if _, err := Decode[[]string]("bad.json", []byte(`{`)); err == nil || !strings.HasPrefix(err.Error(), "bad.json: ") {
		t.Errorf("Decode of bad JSON: %v", err)
	}
	var b bytes.Buffer
	if err := JSONLines(&b, []struct {
		N int `json:"n"`
	}{{1}, {2}}); err != nil {
		t.Fatal(err)
	}
	if b.String() != "{\"n\":1}\n{\"n\":2}\n" {
		t.Errorf("JSONLines wrote %q", b.String())
	}
}

// TestDaemonStop starts a stand-in for memminer that runs until it is
// signalled: Stop ends it, reports how it ended, and says the same again.
func TestDaemonStop(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs a shell script")
	}
	bin := filepath.Join(t.TempDir(), "memminer")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := StartDaemon(context.Background(), bin, t.TempDir(), t.TempDir(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d.Pid() <= 0 || d.Client == nil {
		t.Fatalf("daemon pid %d, client %v", d.Pid(), d.Client)
	}
	err = d.Stop()
	if err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Errorf("Stop = %v, want the SIGTERM it ended by", err)
	}
	if again := d.Stop(); again != err {
		t.Errorf("second Stop = %v, first %v", again, err)
	}
	if _, err := StartDaemon(context.Background(), filepath.Join(t.TempDir(), "none"), "", "", nil, nil); err == nil {
		t.Error("a missing binary started")
	}
}

func TestWaitIdleCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := WaitIdle(ctx, daemonclient.NewClient(t.TempDir()), time.Hour); err != context.Canceled {
		t.Errorf("WaitIdle with a cancelled context = %v, want %v", err, context.Canceled)
	}
}
