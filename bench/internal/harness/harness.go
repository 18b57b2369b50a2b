// Package harness is what the bench commands share: their main and the
// flags naming a memminer binary and a generated hive, a logger, the
// embedding model, building memminer, a hive in a temporary directory, a
// mined palace, a `memminer run` daemon and the wait until it is idle, the
// CPU and memory of processes, percentiles of timings, embedded JSON data
// sets, JSON lines and Markdown tables.
//
// It holds mechanics only: what each bench measures, and how it reports
// it, stays in the bench.
package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"

	"github.com/memminer/memminer/bench/hivegen"
	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/embed"
)

// Main runs a bench command: run gets the arguments, stdout and stderr and
// a context cancelled on an interrupt. Main exits 0 when run succeeds or
// the user asked for -help, and otherwise prints "name: error" and exits 1.
func Main(name string, run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		os.Exit(1)
	}
}

// Logger is a text logger on w when verbose is set, and one that discards
// everything otherwise.
func Logger(verbose bool, w io.Writer) *slog.Logger {
	if verbose {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	return slog.New(slog.DiscardHandler)
}

// OpenModel opens the embedding model spec the way memminer would, with
// the model cache of the user's configuration and environment, so a
// fetched built-in model is found. It is nil for a model without vectors
// (lexical).
func OpenModel(ctx context.Context, spec string) (embed.Embedder, error) {
	cfg := config.Default(os.Getenv, spec)
	if err := cfg.ApplyEnv(os.Getenv); err != nil {
		return nil, err
	}
	e, err := embed.Open(ctx, spec, embed.Options{CacheDir: cfg.ModelCache})
	if err != nil {
		return nil, fmt.Errorf("open model %s: %w", spec, err)
	}
	return e, nil
}

// Build builds the memminer binary of this module into dir and returns its
// path; the go tool's errors go to stderr.
func Build(ctx context.Context, dir string, stderr io.Writer) (string, error) {
	bin := filepath.Join(dir, "memminer")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/memminer/memminer/cmd/memminer")
	build.Stderr = stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build memminer: %w", err)
	}
	return bin, nil
}

// Target is what a bench of a memminer binary on a generated hive is
// pointed at: the binary (-memminer, required), the embedding model
// (-model, default lexical) and the hive's size (-notes, and -agents).
type Target struct {
	Bin, Model    string
	Agents, Notes int
}

// Flags registers the target's flags on fs with these defaults; with
// agents 0 there is no -agents flag (the generator picks the agents).
func (t *Target) Flags(fs *flag.FlagSet, agents, notes int) {
	fs.StringVar(&t.Bin, "memminer", "", "memminer binary to run (required)")
	fs.StringVar(&t.Model, "model", "lexical", "embedding model spec (lexical, use-lite, ...)")
	fs.IntVar(&t.Notes, "notes", notes, "notes in the generated hive")
	if agents > 0 {
		fs.IntVar(&t.Agents, "agents", agents, "agents (wings) in the generated hive")
	}
}

// CommandLine is a target whose flags are registered on the command line
// (flag.CommandLine), with these defaults (see Flags).
func CommandLine(agents, notes int) *Target {
	t := &Target{}
	t.Flags(flag.CommandLine, agents, notes)
	return t
}

// Check reports a target without a binary.
func (t *Target) Check() error {
	if t.Bin == "" {
		return errors.New("-memminer is required")
	}
	return nil
}

// ParseFlags parses the command line (flag.CommandLine, where Flags put
// the target's flags) and exits through log.Fatal when -memminer is
// missing.
func (t *Target) ParseFlags() {
	flag.Parse()
	if err := t.Check(); err != nil {
		log.Fatal(err)
	}
}

// Hive is the generator's options for the target's hive.
func (t *Target) Hive() hivegen.Options { return hivegen.Options{Notes: t.Notes, Agents: t.Agents} }
