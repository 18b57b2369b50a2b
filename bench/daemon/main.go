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
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/memminer/memminer/bench/internal/harness"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
)

func main() {
	t := harness.CommandLine(100, 10000)
	edits := flag.Int("edits", 20, "edits timed for edit-to-searchable latency")
	remembers := flag.Int("remembers", 50, "notes timed for remember-to-searchable latency, over the socket and as whole processes")
	idle := flag.Duration("idle", 60*time.Second, "how long idle CPU is measured")
	flag.DurationVar(&settle, "settle", 0, "wait this long after the cold mine before idle CPU is measured: the first mine tick (mine_interval, 3 min) reads again the files written just before the cold mine and stamps the hive, once")
	runs := flag.Int("runs", 30, "hyperfine runs per search command (0 skips hyperfine)")
	flag.DurationVar(&soakFor, "soak", 0, "instead of the latencies, search and remember without pause this long and print the daemon's RSS over time")
	flag.DurationVar(&soakSample, "sample", 15*time.Second, "with -soak, how often RSS is printed")
	flag.StringVar(&soakProfiles, "profiles", "", "with -soak, save the daemon's heap profile at start and end in this directory")
	t.ParseFlags()
	if err := measure(*t, *edits, *remembers, *idle, *runs); err != nil {
		log.Fatal(err)
	}
}

// settle is the -settle flag.
var settle time.Duration

// The -soak mode's flags (soak.go).
var (
	soakFor, soakSample time.Duration
	soakProfiles        string
)

func measure(t harness.Target, edits, remembers int, idle time.Duration, runs int) error {
	w, err := harness.NewWorkspace("mm-bench-daemon-", t.Hive())
	if err != nil {
		return err
	}
	defer w.Close()
	bin, model, hive, pal, ids := t.Bin, t.Model, w.Hive, w.Palace, w.IDs
	env := harness.Env(os.Environ(), pal, model)
	fmt.Printf("hive: %d agents, %d notes; model %s; %s\n\n", t.Agents, t.Notes, model, cpuName())

	// Cold start: the first mine of the whole hive.
	logf, err := os.Create(filepath.Join(w.Dir, "daemon.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	ctx := context.Background()
	d, err := harness.StartDaemon(ctx, bin, hive, pal, env, logf)
	if err != nil {
		return err
	}
	defer d.Stop()
	cl := d.Client
	start := time.Now()
	st, err := d.WaitIdle(ctx, 10*time.Minute)
	if err != nil {
		return err
	}
	fmt.Printf("cold mine of the hive by the daemon: %s (%d wings, %d notes)\n", time.Since(start).Round(time.Millisecond), len(st.Wings), st.Notes)
	rss, hwm, err := harness.Memory(d.Pid())
	if err != nil {
		return err
	}
	fmt.Printf("resident memory after the mine: VmRSS %.1f MiB (peak VmHWM %.1f MiB)\n", mib(rss), mib(hwm))
	if soakFor > 0 {
		if err := soak(ctx, cl, d.Pid(), pal, hive, ids, model, soakFor, soakSample, soakProfiles); err != nil {
			return err
		}
		return d.Stop()
	}

	// Idle CPU: nothing changes; the daemon only waits (and ticks).
	if settle > 0 {
		fmt.Printf("idle CPU measured from %s after the mine\n", settle)
		time.Sleep(settle)
	}
	cpu0, err := harness.CPUTime(d.Pid())
	if err != nil {
		return err
	}
	time.Sleep(idle)
	cpu1, err := harness.CPUTime(d.Pid())
	if err != nil {
		return err
	}
	used := cpu1 - cpu0
	fmt.Printf("idle CPU over %s: %s (%s a minute, %.4f%% of one core)\n", idle, used.Round(time.Microsecond),
		time.Duration(float64(used)*float64(time.Minute)/float64(idle)).Round(time.Microsecond), 100*used.Seconds()/idle.Seconds())

	// Edit to searchable: append a note with a fresh word, poll the socket.
	var lat []time.Duration
	for i := range edits {
		id := ids[(i*7)%len(ids)]
		word := fmt.Sprintf("zqxedit%03d", i)
		path := filepath.Join(hive, "agents", id, "memory.md")
		t0 := time.Now()
		if err := harness.AppendFile(path, "- The "+word+" fact was just learned.\n"); err != nil {
			return err
		}
		for {
			res, err := cl.Search(ctx, api.SearchRequest{Query: word, Wings: []string{id}, Results: 1, Model: model})
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
	sp := harness.SpreadOf(lat).Round(time.Millisecond)
	fmt.Printf("edit to searchable over %d edits: median %s, min %s, max %s\n", edits, sp.Median, sp.Min, sp.Max)

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
	err = d.Stop()
	fmt.Printf("SIGTERM to exit: %s (exit error: %v)\n", time.Since(t0).Round(time.Millisecond), err)

	if runs > 0 {
		return hyperfine(bin, env, runs, "direct")
	}
	return nil
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
func rememberLatency(ctx context.Context, cl *daemonclient.Client, bin string, env []string, hive string, ids []string, model string, n int) error {
	found := func(id, word string) error {
		res, err := cl.Search(ctx, api.SearchRequest{Query: word, Wings: []string{id}, Results: 1, Model: model})
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
		if _, err := cl.Remember(ctx, api.RememberRequest{Request: remember.Request{Wing: id, Text: "The " + word + " fact was remembered over the socket."}, Hive: hive}); err != nil {
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
		sp := harness.SpreadOf(m.lat).Round(10 * time.Microsecond)
		fmt.Printf("remember to searchable %s, %d notes: median %s, min %s, max %s\n", m.what, len(m.lat), sp.Median, sp.Min, sp.Max)
	}
	return nil
}
