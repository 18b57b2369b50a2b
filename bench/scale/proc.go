package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// procRun is one finished process.
type procRun struct {
	wall   time.Duration
	maxRSS int64 // peak resident set in bytes, 0 when the system does not say
}

// runProc runs bin with args and env, and fails with its stderr when it
// exits non-zero.
func runProc(ctx context.Context, bin string, env []string, args ...string) (procRun, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	if err != nil {
		return procRun{}, fmt.Errorf("memminer %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return procRun{wall: wall, maxRSS: maxRSS(cmd.ProcessState)}, nil
}

// procMemory reads the current (VmRSS) and peak (VmHWM) resident set of a
// running process from /proc, in bytes.
func procMemory(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("read memory of pid %d: %s: %w", pid, k, err)
		}
		if k == "VmRSS" {
			rss = n << 10
		} else {
			hwm = n << 10
		}
	}
	return rss, hwm, s.Err()
}
