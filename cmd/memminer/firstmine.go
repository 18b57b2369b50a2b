package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memminer/memminer/service/api"
)

// firstMineProgress is how far the first mine of the daemon serving the
// palace got, or nil when no daemon serves it or its first mine is over.
func (a *app) firstMineProgress(ctx context.Context) *api.MineProgress {
	if a.noDaemon || a.daemonSilent {
		return nil
	}
	p, err := a.quietClient().Progress(ctx)
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
	progress *api.MineProgress
}

func (e *firstMineError) Error() string {
	return fmt.Sprintf("the daemon serving %s is mining the hive for the first time (%s); ask again in a moment", e.empty.palace, firstMineLine(e.progress))
}

func (e *firstMineError) Unwrap() error { return e.empty }

// followPoll is how often a mine handed to the daemon asks how it goes.
const followPoll = 500 * time.Millisecond

// followDaemonMine shows on bar how a mine handed to the daemon goes, by
// asking its progress endpoint until the returned stop is called: while
// the request waits behind the daemon's first mine, that mine's progress;
// then the request's own. With no bar or no daemon it does nothing.
func (a *app) followDaemonMine(ctx context.Context, bar *progress) (stop func()) {
	if bar == nil || a.noDaemon {
		return func() { bar.finish() }
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c := a.quietClient()
		t := time.NewTicker(followPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			p, err := c.Progress(ctx)
			switch {
			case err != nil:
				return // no daemon, or one gone: the mine's own answer says
			case p.Request != nil && p.Request.FilesTotal >= 20: // as a mine here shows it
				bar.label = "mining (daemon)"
				bar.set(int64(p.Request.FilesDone), int64(p.Request.FilesTotal))
			case p.FirstMine != nil && p.FirstMine.FilesTotal > 0:
				bar.label = "waiting for the daemon's first mine"
				bar.set(int64(p.FirstMine.FilesDone), int64(p.FirstMine.FilesTotal))
			}
		}
	}()
	return func() {
		cancel()
		<-done
		bar.finish()
	}
}
