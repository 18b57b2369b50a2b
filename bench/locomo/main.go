// Command locomo measures memminer's retrieval on LoCoMo through the real
// pipeline: each conversation is written as a hive memory file, mined with
// package mine into a fresh palace, and every question is asked through
// palace.Search restricted to the conversation's wing.
//
//	go run ./bench/locomo --data ../shared/bench/locomo/locomo10.json --mode hybrid
//
// See bench/README.md for the markdown mapping and the metrics.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/memminer/memminer/bench/internal/harness"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/palace"
)

func main() { harness.Main("locomo", run) }

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("locomo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "", "LoCoMo JSON file (locomo10.json); required")
	modes := fs.String("mode", "hybrid", "search mode: hybrid, vector or lexical; a comma-separated list runs several over one mine")
	model := fs.String("model", embed.UseLite, "embedding model spec for the vector and hybrid modes")
	nconv := fs.Int("conversations", 0, "run only the first N conversations (0: all)")
	asJSON := fs.Bool("json", false, "print one JSON object per mode instead of a table")
	captions := fs.Bool("captions", true, "include the captions of shared images in the turns")
	ids := fs.Bool("ids", true, "start each turn's bullet with its dia id, [D1:3]")
	dump := fs.String("dump", "", "write one JSON line per question and mode to this file")
	work := fs.String("work", "", "keep the hive and palace in this directory; a rerun then re-mines only what changed (mine numbers are then not a fresh mine's)")
	verbose := fs.Bool("v", false, "log progress to stderr")
	floor := fs.Float64("min-relevance", 0, "drop hits below this absolute relevance, as search does (0: keep every hit)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *data == "" || fs.NArg() > 0 {
		fs.Usage()
		return errors.New("--data is required and no arguments are taken")
	}
	var ms []palace.Mode
	needVectors := false
	for _, s := range strings.Split(*modes, ",") {
		m, err := parseMode(s)
		if err != nil {
			return err
		}
		ms = append(ms, m)
		needVectors = needVectors || m != palace.LexicalOnly
	}
	convs, err := LoadFile(*data)
	if err != nil {
		return err
	}
	if *nconv > 0 && *nconv < len(convs) {
		convs = convs[:*nconv]
	}
	log := harness.Logger(*verbose, stderr)
	var emb embed.Embedder
	if needVectors {
		if emb, err = harness.OpenModel(ctx, *model); err != nil {
			return err
		}
		if emb == nil {
			return fmt.Errorf("model %s has no vectors; use --mode lexical", *model)
		}
	}
	dir := *work
	if dir == "" {
		dir, err = os.MkdirTemp("", "memminer-locomo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}

	c := Config{Conversations: convs, Modes: ms, Embedder: emb, Dir: dir, Logger: log, MinRelevance: *floor,
		Hive: HiveOptions{Captions: *captions, InlineIDs: *ids}}
	if *dump != "" {
		f, err := os.Create(*dump)
		if err != nil {
			return err
		}
		defer f.Close()
		c.Dump = f
	}
	results, err := Run(ctx, c)
	if err != nil {
		return err
	}
	if *asJSON {
		return harness.JSONLines(stdout, results)
	}
	return printTable(stdout, results)
}

func pct(x float64) string { return fmt.Sprintf("%.1f", 100*x) }

// printTable writes a human-readable report of results.
func printTable(w io.Writer, results []Result) error {
	if len(results) == 0 {
		return nil
	}
	m := results[0].Mine
	fmt.Fprintf(w, "LoCoMo: %d conversations, %d turns -> %d notes (%d turns split); mine added %d notes in %.2fs (%.0f notes/s, %d cores)\n\n",
		results[0].Conversations, m.Turns, m.Notes, m.SplitTurns, m.Mined, m.Seconds, m.NotesPerSecond, results[0].Cores)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tmodel\tgroup\tquestions\tsession R@5\tsession R@10\tturn R@5\tturn R@10\tp50 ms\tp95 ms\t")
	for _, r := range results {
		row := func(group string, rc Recall) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t\n", r.Mode, r.Model, group, rc.Questions,
				pct(rc.SessionR5), pct(rc.SessionR10), pct(rc.TurnR5), pct(rc.TurnR10), r.Latency.P50, r.Latency.P95)
		}
		row("cat 1-4", r.Recall)
		for _, cat := range []string{"1", "2", "3", "4", "5"} {
			if rc, ok := r.ByCategory[cat]; ok {
				row("cat "+cat, rc)
			}
		}
	}
	return tw.Flush()
}

// parseMode reads a search mode as --modes names it: hybrid, lexical or
// vector.
func parseMode(s string) (palace.Mode, error) {
	for _, m := range []palace.Mode{palace.Hybrid, palace.LexicalOnly, palace.VectorOnly} {
		if strings.EqualFold(strings.TrimSpace(s), m.String()) {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown search mode %q (want hybrid, lexical or vector)", s)
}
