package main

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/memminer/memminer/bench/internal/harness"
)

// TestSmokeInProcess runs the smallest scales in this process (lexical):
// every figure must be there and sane. It checks that the harness works,
// not how fast anything is.
func TestSmokeInProcess(t *testing.T) {
	rows, err := Measure(context.Background(), Config{
		Sizes:   []int{200, 600},
		Model:   "lexical",
		Dir:     t.TempDir(),
		Queries: 8,
		Runs:    1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if r.Agents != 1 || r.Model != "lexical" {
			t.Errorf("%d notes: agents %d model %q", r.Notes, r.Agents, r.Model)
		}
		if r.MineSeconds <= 0 || r.NotesPerSecond <= 0 || r.PalaceBytes <= 0 || r.OpenMs < 0 || r.WakeUpMs < 0 || r.WakeUpDaemonMs < 0 {
			t.Errorf("%d notes: missing figures: %+v", r.Notes, r)
		}
		for name, l := range map[string]Latency{"all": r.SearchAll, "wing": r.SearchWing, "daemon": r.SearchDaemon} {
			if l.P50 < 0 || l.P95 < l.P50 {
				t.Errorf("%d notes: %s latency %+v", r.Notes, name, l)
			}
		}
		if r.SearchProc != (Proc{}) || r.DaemonRSSMB != 0 {
			t.Errorf("%d notes: process figures without processes: %+v", r.Notes, r)
		}
	}
	if rows[1].PalaceBytes <= rows[0].PalaceBytes {
		t.Errorf("palace of %d notes (%d B) is not larger than of %d (%d B)", rows[1].Notes, rows[1].PalaceBytes, rows[0].Notes, rows[0].PalaceBytes)
	}
	var out bytes.Buffer
	if err := printTables(&out, rows, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| notes (agents) | 200 (1) | 600 (1) |", "| palace on disk |", "search through the daemon socket"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("tables lack %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "peak RSS") {
		t.Errorf("memory rows without processes:\n%s", out.String())
	}
}

// TestMain lets the test binary serve as runProc's measuring shim.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(measureChild(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func TestProcessMeasures(t *testing.T) {
	// Hold a lot of memory here: the child's figure must not include it.
	ballast := make([]byte, 128<<20)
	for i := range ballast {
		ballast[i] = 1
	}
	// The test binary itself, running no test, is a cheap real process.
	p, err := runProc(context.Background(), os.Args[0], os.Environ(), "-test.run=^$")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("child: %v, peak %d KiB", p.wall, p.maxRSS>>10)
	if p.wall <= 0 {
		t.Errorf("wall time %v", p.wall)
	}
	if runtime.GOOS == "linux" {
		if p.maxRSS <= 0 || p.maxRSS >= int64(len(ballast)) {
			t.Errorf("peak RSS of a small child %d B, with %d B held by its grandparent", p.maxRSS, len(ballast))
		}
		rss, hwm, err := harness.Memory(os.Getpid())
		if err != nil || rss <= 0 || hwm < rss {
			t.Errorf("harness.Memory = %d, %d, %v", rss, hwm, err)
		}
	}
	if _, err := runProc(context.Background(), os.Args[0], os.Environ(), "-no-such-flag"); err == nil {
		t.Error("a failing process was not reported")
	}
}

func TestFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	for _, args := range [][]string{{"--sizes", "10,x"}, {"--sizes", "0"}, {"extra"}, {"--model", "nope"}} {
		if err := run(context.Background(), args, &out, &errOut); err == nil {
			t.Errorf("run(%q) did not fail", args)
		}
	}
	if _, err := Measure(context.Background(), Config{Sizes: []int{-1}, Dir: t.TempDir()}); err == nil {
		t.Error("negative size accepted")
	}
}
