package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/memminer/memminer/bench/internal/harness"
)

// procRun is one finished process.
type procRun struct {
	wall   time.Duration
	maxRSS int64 // peak resident set in bytes, 0 when the system does not say
}

// childEnv, set to "1", makes this program a measuring shim instead (see
// measureChild).
const childEnv = "MEMMINER_SCALE_SHIM"

// runProc runs bin with args and env, and fails with its stderr when it
// exits non-zero.
//
// The process is started through a shim, this program re-executed with
// childEnv set: Linux starts an exec'd child's peak-memory count at its
// parent's peak (the count survives fork and exec), so a child of this
// harness, which holds whole palaces in memory, would report at least the
// harness's own peak. The shim is small and reports its child's figure.
func runProc(ctx context.Context, bin string, env []string, args ...string) (procRun, error) {
	self, err := os.Executable()
	if err != nil {
		return procRun{}, fmt.Errorf("find this program to run %s through: %w", bin, err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return procRun{}, err
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, self, append([]string{bin}, args...)...)
	cmd.Env = append(slices.Clone(env), childEnv+"=1")
	cmd.ExtraFiles = []*os.File{w}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		return procRun{}, fmt.Errorf("run %s: %w", bin, err)
	}
	report, _ := io.ReadAll(r)
	if err := cmd.Wait(); err != nil {
		return procRun{}, fmt.Errorf("memminer %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	var wallNs, rss int64
	if _, err := fmt.Sscan(string(report), &wallNs, &rss); err != nil {
		return procRun{}, fmt.Errorf("read the measure of %s: %q: %w", bin, report, err)
	}
	return procRun{wall: time.Duration(wallNs), maxRSS: rss}, nil
}

// measureChild is the shim's main: it runs args[0] with the rest as its
// arguments, writes "wall-ns peak-rss-bytes" to file descriptor 3 and
// returns the child's exit code.
func measureChild(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "shim: nothing to run")
		return 2
	}
	report := os.NewFile(3, "report")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, childEnv+"=") })
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "shim:", err)
		return 2
	}
	fmt.Fprintf(report, "%d %d\n", wall.Nanoseconds(), harness.PeakRSS(cmd.ProcessState))
	report.Close()
	return cmd.ProcessState.ExitCode()
}
