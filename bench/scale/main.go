// Command scale measures how memminer's costs grow with the palace:
// deterministic generated hives (bench/hivegen) of each size are mined
// into a fresh palace, then timed: mine throughput, palace size on disk,
// palace open, search (in process, through the daemon, and as whole
// processes), wake-up, and peak memory of the processes.
//
//	go run ./bench/scale --sizes 1000,10000,100000 --model use-lite
//
// Without --memminer a binary is built from this module first; with
// --in-process nothing is run as a separate process (and no memory figures
// are taken). See bench/README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/memminer/memminer/bench/internal/harness"
	"github.com/memminer/memminer/embed"
)

func main() {
	if os.Getenv(childEnv) == "1" {
		os.Exit(measureChild(os.Args[1:]))
	}
	harness.Main("scale", run)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sizes := fs.String("sizes", "1000,10000,100000", "hive sizes in notes, comma-separated")
	model := fs.String("model", embed.Default, "embedding model spec")
	bin := fs.String("memminer", "", "memminer binary to run (default: build one from this module)")
	inProcess := fs.Bool("in-process", false, "run everything in this process: no memminer processes, no memory figures")
	queries := fs.Int("queries", 48, "searches timed per path")
	runs := fs.Int("runs", 5, "runs of each whole-process command")
	asJSON := fs.Bool("json", false, "print one JSON object per size instead of tables")
	verbose := fs.Bool("v", false, "log progress to stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var ns []int
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return fmt.Errorf("--sizes: %q is not a positive number", s)
		}
		ns = append(ns, n)
	}
	log := harness.Logger(*verbose, stderr)
	emb, err := harness.OpenModel(ctx, *model)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "memminer-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	c := Config{Sizes: ns, Model: *model, Embedder: emb, Bin: *bin, Env: os.Environ(), Dir: dir,
		Queries: *queries, Runs: *runs, Logger: log}
	if *inProcess {
		c.Bin = ""
	} else if c.Bin == "" {
		log.Info("building memminer", "in", dir)
		if c.Bin, err = harness.Build(ctx, dir, stderr); err != nil {
			return fmt.Errorf("%w (or pass --memminer or --in-process)", err)
		}
	}
	rows, err := Measure(ctx, c)
	if err != nil {
		return err
	}
	if *asJSON {
		return harness.JSONLines(stdout, rows)
	}
	return printTables(stdout, rows, c.Bin != "")
}

// printTables writes the rows as Markdown tables, one column per size.
func printTables(w io.Writer, rows []Row, procs bool) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "model %s, %d cores (%s/%s), %s\n\n", rows[0].Model, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, time.Now().UTC().Format("2006-01-02"))
	line := func(name string, f func(Row) string) {
		cells := []string{name}
		for _, r := range rows {
			cells = append(cells, f(r))
		}
		harness.Row(w, cells...)
	}
	line("notes (agents)", func(r Row) string { return fmt.Sprintf("%d (%d)", r.Notes, r.Agents) })
	harness.Rule(w, len(rows)+1)
	line("cold mine", func(r Row) string { return fmt.Sprintf("%.2f s (%.0f notes/s)", r.MineSeconds, r.NotesPerSecond) })
	line("palace on disk", func(r Row) string { return fmt.Sprintf("%.1f MiB", float64(r.PalaceBytes)/(1<<20)) })
	line("palace open (in process)", func(r Row) string { return fmt.Sprintf("%.0f ms", r.OpenMs) })
	line("search, all wings, p50 / p95", func(r Row) string { return lat(r.SearchAll) })
	line("search, one wing, p50 / p95", func(r Row) string { return lat(r.SearchWing) })
	line("search through the daemon socket, p50 / p95", func(r Row) string { return lat(r.SearchDaemon) })
	line("wake-up (in process)", func(r Row) string { return fmt.Sprintf("%.0f ms", r.WakeUpMs) })
	line("wake-up through the daemon socket", func(r Row) string { return fmt.Sprintf("%.0f ms", r.WakeUpDaemonMs) })
	if procs {
		line("`memminer search` process, direct", func(r Row) string { return proc(r.SearchProc) })
		line("`memminer search` process, via daemon", func(r Row) string { return proc(r.SearchProcDaemon) })
		line("`memminer wake-up` process, direct", func(r Row) string { return proc(r.WakeUpProc) })
		line("peak RSS of the cold mine", func(r Row) string { return fmt.Sprintf("%.0f MiB", r.MinePeakRSSMB) })
		line("daemon RSS now / peak", func(r Row) string { return fmt.Sprintf("%.0f / %.0f MiB", r.DaemonRSSMB, r.DaemonPeakRSSMB) })
	}
	return nil
}

func lat(l Latency) string { return fmt.Sprintf("%s / %s ms", num(l.P50), num(l.P95)) }

func proc(p Proc) string { return fmt.Sprintf("%.0f ms, peak %.0f MiB", p.MedianMs, p.PeakRSSMB) }

func num(x float64) string {
	if x < 10 {
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strconv.FormatFloat(x, 'f', 0, 64)
}
