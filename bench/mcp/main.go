// Command mcp measures `memminer mcp` as an MCP client meets it: a real
// server process on a generated hive (bench/hivegen), driven over stdio by
// the official Go SDK's client. It reports the latency of each tool call,
// first with no daemon (each call opens the palace itself) and then with a
// `memminer run` daemon serving the palace (each call asks its socket).
//
//	go build -o /tmp/memminer ./cmd/memminer
//	go run ./bench/mcp -memminer /tmp/memminer -model lexical
//
// The hive and palace live in a temporary directory, removed afterwards.
// The model cache is the user's (XDG_CACHE_HOME), so a fetched built-in
// model is found.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memminer/memminer/bench/hivegen"
	"github.com/memminer/memminer/daemon"
)

func main() {
	bin := flag.String("memminer", "", "memminer binary to measure (required)")
	model := flag.String("model", "lexical", "embedding model spec")
	agents := flag.Int("agents", 20, "agents (wings) in the generated hive")
	notes := flag.Int("notes", 2000, "notes in the generated hive")
	calls := flag.Int("calls", 30, "timed calls per tool and mode")
	flag.Parse()
	if *bin == "" {
		log.Fatal("-memminer is required")
	}
	if err := measure(*bin, *model, *agents, *notes, *calls); err != nil {
		log.Fatal(err)
	}
}

// toolCalls are the calls timed, one per tool.
var toolCalls = []mcp.CallToolParams{
	{Name: "search", Arguments: map[string]any{"query": "db-2 failover runbook"}},
	{Name: "wake_up", Arguments: map[string]any{}},
	{Name: "conflicts", Arguments: map[string]any{"check": true}},
	{Name: "status", Arguments: map[string]any{}},
}

func measure(bin, model string, agents, notes, calls int) error {
	tmp, err := os.MkdirTemp("", "mm-bench-mcp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	hive, pal := filepath.Join(tmp, "hive"), filepath.Join(tmp, "palace")
	ids, err := hivegen.Write(hive, hivegen.Options{Notes: notes, Agents: agents})
	if err != nil {
		return err
	}
	env := append(os.Environ(), "MEMMINER_PALACE_PATH="+pal, "MEMMINER_EMBEDDING_MODEL="+model, "MEMMINER_HIVE="+hive)
	mine := exec.Command(bin, "mine", hive)
	mine.Env = env
	if out, err := mine.CombinedOutput(); err != nil {
		return fmt.Errorf("mine: %v\n%s", err, out)
	}
	fmt.Printf("memminer mcp, %d notes in %d wings, model %s, %d calls per tool (median, min … max)\n", notes, agents, model, calls)

	if err := timeTools(bin, env, ids[0], calls, "no daemon"); err != nil {
		return err
	}
	run := exec.Command(bin, "run", "--hive", hive, "--log-level", "warn")
	run.Env = env
	if err := run.Start(); err != nil {
		return err
	}
	defer func() {
		_ = run.Process.Signal(syscall.SIGTERM)
		_ = run.Wait()
	}()
	if err := waitIdle(daemon.NewClient(pal), 5*time.Minute); err != nil {
		return err
	}
	return timeTools(bin, env, ids[0], calls, "daemon")
}

// timeTools starts `memminer mcp --wing wing` and times each tool.
func timeTools(bin string, env []string, wing string, calls int, mode string) error {
	ctx := context.Background()
	cmd := exec.Command(bin, "mcp", "--wing", wing)
	cmd.Env = env
	start := time.Now()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench-mcp", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	fmt.Printf("\n%s: start-up and initialize %s\n", mode, time.Since(start).Round(100*time.Microsecond))
	for _, p := range toolCalls {
		var ds []time.Duration
		for range calls {
			t := time.Now()
			res, err := cs.CallTool(ctx, &p)
			if err != nil {
				return fmt.Errorf("%s: %w", p.Name, err)
			}
			if res.IsError {
				return fmt.Errorf("%s: tool error: %v", p.Name, res.Content)
			}
			ds = append(ds, time.Since(t))
		}
		slices.Sort(ds)
		fmt.Printf("  %-10s %8s  (%s … %s)\n", p.Name, ds[len(ds)/2].Round(10*time.Microsecond), ds[0].Round(10*time.Microsecond), ds[len(ds)-1].Round(10*time.Microsecond))
	}
	return nil
}

// waitIdle waits for the daemon to answer and have nothing left to do.
func waitIdle(cl *daemon.Client, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		st, err := cl.Status(context.Background())
		if err == nil && st.Daemon.Idle() {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return errors.New("the daemon did not become idle")
}
