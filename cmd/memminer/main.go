// Command memminer gives a hive of AI agents one shared, local, semantic
// memory mined from their markdown memory files.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	_ "github.com/memminer/memminer/internal/mainstack"
	"github.com/memminer/memminer/internal/quote"
)

// Exit codes.
const (
	exitOK       = 0
	exitError    = 1
	exitUsage    = 2
	exitConflict = 3 // conflicts --check found an open conflict
	// exitInterrupted is the shell's code for a command ended by SIGINT
	// (128+2); SIGTERM ends one the same way.
	exitInterrupted = 130
)

func main() {
	// Libraries that log through slog's default (the model download, the
	// HTTP backends' retries) write in the same format as the CLI's own warnings.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	processGC.start(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// run executes the command line args and returns the exit code; main is a
// thin wrapper so tests can run the whole CLI in process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	out := &checkedWriter{w: stdout}
	a := newApp(out, stderr, getenv)
	root := a.rootFor(args)
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if ctx.Err() != nil && errors.Is(err, context.Canceled) && !errors.As(err, new(*codeError)) {
		// Ctrl-C: the command's own "context canceled" says nothing.
		err = &codeError{code: exitInterrupted, msg: "interrupted"}
	}
	if err == nil && out.err != nil {
		// Output that did not arrive (a full disk, a closed pipe) is a failure.
		err = fmt.Errorf("write output: %w", out.err)
	}
	code := reportError(stderr, cmd, err)
	// Last, after any error: the command found nothing, perhaps because
	// it opened another palace than the one a running daemon serves.
	var nf *nothingFoundError
	if a.foundNothing || errors.As(err, &nf) {
		if note := a.otherPalacesNote(ctx); note != "" {
			fmt.Fprintln(stderr, note)
		}
	}
	return code
}

// reportError prints the error cmd ended with, if any, and returns the
// exit code it means.
func reportError(stderr io.Writer, cmd *cobra.Command, err error) int {
	if err == nil {
		return exitOK
	}
	var ex *codeError
	if errors.As(err, &ex) {
		if ex.msg != "" {
			fmt.Fprintln(stderr, "memminer: "+quote.Text(ex.msg))
		}
		return ex.code
	}
	// Errors name files, notes and answers from elsewhere: escaped, so
	// none of them can write control sequences to the terminal.
	fmt.Fprintln(stderr, "memminer: "+quote.Text(err.Error()))
	var ue *usageError
	if errors.As(err, &ue) || isFlagError(err) {
		path := "memminer"
		if cmd != nil {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", path)
		return exitUsage
	}
	return exitError
}

// checkedWriter remembers the first write error, so a command whose output
// was lost does not exit 0.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// usageError is a mistake in how a command was called.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// codeError ends the command with a given code and an optional message.
type codeError struct {
	code int
	msg  string
}

func (e *codeError) Error() string { return e.msg }

// isFlagError recognises cobra's own usage errors, which it does not type.
func isFlagError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires at most", "invalid argument"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
