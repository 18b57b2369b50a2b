package harness

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Memory reads the current (VmRSS) and peak (VmHWM) resident set of a
// running process from /proc, in bytes.
func Memory(pid int) (rss, hwm int64, err error) {
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

// CPUTime is the CPU time a running process's threads have used, from the
// scheduler's nanosecond counters (/proc/PID/task/*/schedstat; utime and
// stime in /proc/PID/stat count 10 ms ticks, too coarse for an idle
// process).
func CPUTime(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no schedstat for pid %d: %v", pid, err)
	}
	var total int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // the thread exited meanwhile
		}
		f := strings.Fields(string(data))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", t, err)
		}
		total += ns
	}
	return time.Duration(total), nil
}

// CPU is the CPU time (user+sys) a finished process used, from its
// rusage.
func CPU(ps *os.ProcessState) time.Duration { return ps.UserTime() + ps.SystemTime() }
