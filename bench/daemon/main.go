// Command daemon measures memminer's daemon as a user meets it: a real
// `memminer run` process on a generated hive (bench/hivegen). It reports
// the cold mine of the hive, resident memory, idle CPU, edit-to-searchable
// latency, remember-to-searchable latency, stop time after SIGTERM, and — with hyperfine — whole-process
// `memminer search` through the daemon's socket against a direct search.
//
//	go build -o /tmp/memminer ./cmd/memminer
//	go run ./bench/daemon -memminer /tmp/memminer -model lexical
//
// The hive and palace live in a temporary directory, removed afterwards.
// The model cache is the user's (XDG_CACHE_HOME), so a fetched built-in
// model is found.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/memminer/memminer/bench/hivegen"
	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/remember"
)

func main() {
	bin := flag.String("memminer", "", "memminer binary to measure (required)")
	model := flag.String("model", "lexical", "embedding model spec the daemon uses")
	agents := flag.Int("agents", 100, "agents (wings) in the generated hive")
	notes := flag.Int("notes", 10000, "notes in the generated hive")
	edits := flag.Int("edits", 20, "edits timed for edit-to-searchable latency")
	remembers := flag.Int("remembers", 50, "notes timed for remember-to-searchable latency, over the socket and as whole processes")
	idle := flag.Duration("idle", 60*time.Second, "how long idle CPU is measured")
	runs := flag.Int("runs", 30, "hyperfine runs per search command (0 skips hyperfine)")
	flag.DurationVar(&soakFor, "soak", 0, "instead of the latencies, search and remember without pause this long and print the daemon's RSS over time")
	flag.DurationVar(&soakSample, "sample", 15*time.Second, "with -soak, how often RSS is printed")
	flag.StringVar(&soakProfiles, "profiles", "", "with -soak, save the daemon's heap profile at start and end in this directory")
	flag.Parse()
	if *bin == "" {
		log.Fatal("-memminer is required")
	}
	if err := measure(*bin, *model, *agents, *notes, *edits, *remembers, *idle, *runs); err != nil {
		log.Fatal(err)
	}
}

// The -soak mode's flags (soak.go).
var (
	soakFor, soakSample time.Duration
	soakProfiles        string
)

func measure(bin, model string, agents, notes, edits, remembers int, idle time.Duration, runs int) error {
	tmp, err := os.MkdirTemp("", "mm-bench-daemon-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	hive, pal := filepath.Join(tmp, "hive"), filepath.Join(tmp, "palace")
	ids, err := hivegen.Write(hive, hivegen.Options{Notes: notes, Agents: agents})
	if err != nil {
		return err
	}
	env := append(os.Environ(), "MEMMINER_PALACE_PATH="+pal, "MEMMINER_EMBEDDING_MODEL="+model)
	fmt.Printf("hive: %d agents, %d notes; model %s; %s\n\n", agents, notes, model, cpuName())

	// Cold start: the first mine of the whole hive.
	cmd, err := startDaemon(bin, hive, env, tmp)
	if err != nil {
		return err
	}
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	cl := daemon.NewClient(pal)
	start := time.Now()
	st, err := waitIdle(cl, 10*time.Minute)
	if err != nil {
		return err
	}
	fmt.Printf("cold mine of the hive by the daemon: %s (%d wings, %d notes)\n", time.Since(start).Round(time.Millisecond), len(st.Wings), st.Notes)
	rss, hwm, err := memory(cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("resident memory after the mine: VmRSS %.1f MiB (peak VmHWM %.1f MiB)\n", mib(rss), mib(hwm))
	if soakFor > 0 {
		if err := soak(context.Background(), cl, cmd.Process.Pid, pal, hive, ids, model, soakFor, soakSample, soakProfiles); err != nil {
			return err
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		return cmd.Wait()
	}

	// Idle CPU: nothing changes; the daemon only waits (and ticks).
	cpu0, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return err
	}
	time.Sleep(idle)
	cpu1, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return err
	}
	used := cpu1 - cpu0
	fmt.Printf("idle CPU over %s: %s (%.4f%% of one core)\n", idle, used.Round(time.Microsecond), 100*used.Seconds()/idle.Seconds())

	// Edit to searchable: append a note with a fresh word, poll the socket.
	var lat []time.Duration
	ctx := context.Background()
	for i := range edits {
		id := ids[(i*7)%len(ids)]
		word := fmt.Sprintf("zqxedit%03d", i)
		path := filepath.Join(hive, "agents", id, "memory.md")
		t0 := time.Now()
		if err := appendLine(path, "- The "+word+" fact was just learned.\n"); err != nil {
			return err
		}
		for {
			res, err := cl.Search(ctx, daemon.SearchRequest{Query: word, Wings: []string{id}, Results: 1, Model: model})
			if err == nil && len(res.Results) > 0 && strings.Contains(res.Results[0].Text, word) {
				break
			}
			if time.Since(t0) > time.Minute {
				return fmt.Errorf("edit %d never became searchable", i)
			}
			time.Sleep(2 * time.Millisecond)
		}
		lat = append(lat, time.Since(t0))
		// Let the file's mtime move on, as separate edits would.
		time.Sleep(50 * time.Millisecond)
	}
	slices.Sort(lat)
	fmt.Printf("edit to searchable over %d edits: median %s, min %s, max %s\n", edits,
		lat[len(lat)/2].Round(time.Millisecond), lat[0].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))

	if remembers > 0 {
		if err := rememberLatency(ctx, cl, bin, env, hive, ids, model, remembers); err != nil {
			return err
		}
	}

	if runs > 0 {
		if err := hyperfine(bin, env, runs, "daemon"); err != nil {
			return err
		}
	}

	// Stop: SIGTERM to exit.
	t0 := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	err = cmd.Wait()
	fmt.Printf("SIGTERM to exit: %s (exit error: %v)\n", time.Since(t0).Round(time.Millisecond), err)

	if runs > 0 {
		return hyperfine(bin, env, runs, "direct")
	}
	return nil
}

func startDaemon(bin, hive string, env []string, tmp string) (*exec.Cmd, error) {
	logf, err := os.Create(filepath.Join(tmp, "daemon.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "run", "--hive", hive, "--log-level", "warn")
	cmd.Env = env
	cmd.Stderr = logf
	return cmd, cmd.Start()
}

// waitIdle waits for the daemon to answer and have nothing left to do.
func waitIdle(cl *daemon.Client, limit time.Duration) (daemon.Status, error) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		st, err := cl.Status(context.Background())
		if err == nil && st.Daemon.Idle() {
			return st, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return daemon.Status{}, errors.New("the daemon did not become idle")
}

func hyperfine(bin string, env []string, runs int, label string) error {
	hf, err := exec.LookPath("hyperfine")
	if err != nil {
		return errors.New("hyperfine not found (Debian: apt-get install -y hyperfine), or pass -runs 0")
	}
	q := `'db-2 failover runbook'`
	out, err := os.CreateTemp("", "hyperfine-*.json")
	if err != nil {
		return err
	}
	out.Close()
	defer os.Remove(out.Name())
	cmd := exec.Command(hf, "-N", "--warmup", "3", "--runs", strconv.Itoa(runs), "--style", "basic",
		"--export-json", out.Name(), "--command-name", "search ("+label+")", bin+" search "+q)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	fmt.Printf("\nhyperfine: whole-process memminer search, %s\n", label)
	if err := cmd.Run(); err != nil {
		return err
	}
	data, err := os.ReadFile(out.Name())
	if err != nil {
		return err
	}
	var res struct {
		Results []struct {
			Median, Mean, Min float64
		}
	}
	if err := json.Unmarshal(data, &res); err != nil || len(res.Results) != 1 {
		return fmt.Errorf("read hyperfine's results: %v", err)
	}
	r := res.Results[0]
	fmt.Printf("search (%s): median %.1f ms, mean %.1f ms, min %.1f ms\n", label, 1000*r.Median, 1000*r.Mean, 1000*r.Min)
	return nil
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// memory reads VmRSS and VmHWM of pid, in bytes.
func memory(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
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
			return 0, 0, fmt.Errorf("%s: %w", k, err)
		}
		if k == "VmRSS" {
			rss = n << 10
		} else {
			hwm = n << 10
		}
	}
	return rss, hwm, s.Err()
}

// cpuTime is the CPU time pid's threads have used, from the scheduler's
// nanosecond counters (/proc/PID/task/*/schedstat; utime and stime in
// /proc/PID/stat count 10 ms ticks, too coarse for an idle process).
func cpuTime(pid int) (time.Duration, error) {
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

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func cpuName() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// rememberLatency times a note from remember to the first search that
// finds it, through the daemon: over the socket (what the MCP server
// pays), then as whole `memminer remember` processes. The daemon writes
// and mines the file before it answers, so the first search must find
// the note; one that does not is an error.
func rememberLatency(ctx context.Context, cl *daemon.Client, bin string, env []string, hive string, ids []string, model string, n int) error {
	found := func(id, word string) error {
		res, err := cl.Search(ctx, daemon.SearchRequest{Query: word, Wings: []string{id}, Results: 1, Model: model})
		if err != nil {
			return err
		}
		if len(res.Results) == 0 || !strings.Contains(res.Results[0].Text, word) {
			return fmt.Errorf("the remembered %s is not in the next search", word)
		}
		return nil
	}
	var socket, process []time.Duration
	for i := range n {
		id := ids[(i*11)%len(ids)]
		word := fmt.Sprintf("zqxrem%03d", i)
		t0 := time.Now()
		if _, err := cl.Remember(ctx, daemon.RememberRequest{Request: remember.Request{Wing: id, Text: "The " + word + " fact was remembered over the socket."}, Hive: hive}); err != nil {
			return err
		}
		if err := found(id, word); err != nil {
			return err
		}
		socket = append(socket, time.Since(t0))

		word = fmt.Sprintf("zqxcli%03d", i)
		t0 = time.Now()
		cmd := exec.Command(bin, "remember", "--wing", id, "--hive", hive, "The "+word+" fact was remembered by a process.")
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("memminer remember: %v: %s", err, out)
		}
		if err := found(id, word); err != nil {
			return err
		}
		process = append(process, time.Since(t0))
	}
	for _, m := range []struct {
		what string
		lat  []time.Duration
	}{{"over the socket", socket}, {"as a whole memminer remember process", process}} {
		slices.Sort(m.lat)
		fmt.Printf("remember to searchable %s, %d notes: median %s, min %s, max %s\n", m.what, len(m.lat),
			m.lat[len(m.lat)/2].Round(10*time.Microsecond), m.lat[0].Round(10*time.Microsecond), m.lat[len(m.lat)-1].Round(10*time.Microsecond))
	}
	return nil
}
