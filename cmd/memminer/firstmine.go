package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/memminer/memminer/daemon"
)

// firstMineProgress is how far the first mine of the daemon serving the
// palace got, or nil when no daemon serves it or its first mine is over.
func (a *app) firstMineProgress(ctx context.Context) *daemon.MineProgress {
	if a.noDaemon || a.daemonSilent {
		return nil
	}
	p, err := daemon.NewClient(a.cfg.Palace, daemon.WithAnswerTimeout(daemonAnswerTimeout)).Progress(ctx)
	if err != nil {
		return nil
	}
	return p.FirstMine
}

// duringFirstMine rewords the answer of a command that reads notes while
// the daemon serving the palace is still mining the hive for the first
// time: an empty palace is not one to mine by hand, and any other answer
// comes from the wings mined so far.
func (a *app) duringFirstMine(ctx context.Context, err error) error {
	var empty *emptyPalaceError
	isEmpty := errors.As(err, &empty)
	if err != nil && !isEmpty {
		return err
	}
	p := a.firstMineProgress(ctx)
	if p == nil {
		return err
	}
	if isEmpty {
		return &firstMineError{empty: empty, progress: p}
	}
	fmt.Fprintf(a.stderr, "memminer: note: the daemon's first mine is %s: this answer comes from the wings mined so far, the rest is coming\n", firstMineLine(p))
	return nil
}

// firstMineError is the answer of a command that found the palace empty
// while its daemon's first mine runs. It matches the emptyPalaceError it
// replaces (so --json still prints the empty shape), but not nothingFound:
// the daemon serves this palace, so no other is worth naming.
type firstMineError struct {
	empty    *emptyPalaceError
	progress *daemon.MineProgress
}

func (e *firstMineError) Error() string {
	return fmt.Sprintf("the daemon serving %s is mining the hive for the first time (%s); ask again in a moment", e.empty.palace, firstMineLine(e.progress))
}

func (e *firstMineError) Unwrap() error { return e.empty }
