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
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memminer/memminer/bench/internal/harness"
)

func main() {
	t := harness.CommandLine(20, 2000)
	calls := flag.Int("calls", 30, "timed calls per tool and mode")
	t.ParseFlags()
	if err := measure(*t, *calls); err != nil {
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

func measure(t harness.Target, calls int) error {
	w, err := harness.NewWorkspace("mm-bench-mcp-", t.Hive())
	if err != nil {
		return err
	}
	defer w.Close()
	bin, hive, ids := t.Bin, w.Hive, w.IDs
	env := harness.Env(os.Environ(), w.Palace, t.Model, "MEMMINER_HIVE="+hive)
	mine := exec.Command(bin, "mine", hive)
	mine.Env = env
	if out, err := mine.CombinedOutput(); err != nil {
		return fmt.Errorf("mine: %v\n%s", err, out)
	}
	fmt.Printf("memminer mcp, %d notes in %d wings, model %s, %d calls per tool (median, min … max)\n", t.Notes, t.Agents, t.Model, calls)

	if err := timeTools(bin, env, ids[0], calls, "no daemon"); err != nil {
		return err
	}
	ctx := context.Background()
	d, err := harness.StartDaemon(ctx, bin, hive, w.Palace, env, nil)
	if err != nil {
		return err
	}
	defer d.Stop()
	if _, err := d.WaitIdle(ctx, 5*time.Minute); err != nil {
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
		ds, err := harness.Time(calls, func() error {
			res, err := cs.CallTool(ctx, &p)
			if err == nil && res.IsError {
				err = fmt.Errorf("tool error: %v", res.Content)
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		sp := harness.SpreadOf(ds).Round(10 * time.Microsecond)
		fmt.Printf("  %-10s %8s  (%s … %s)\n", p.Name, sp.Median, sp.Min, sp.Max)
	}
	return nil
}
