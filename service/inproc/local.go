// Package inproc is memminer's api.Service on the palace in this process:
// the CLI's when no daemon serves the palace (each call opens the palace,
// with the lock its operation needs, and closes it), and the daemon's
// handlers' around the palace it holds open. It owns palace opening, the
// lock mode, the embedder and the mine after a write, so a write behaves
// the same whichever path it takes.
package inproc

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/wakeup"
)

// Options are what a Service works with. Hooks left nil do nothing.
type Options struct {
	// Palace is the palace to serve, already open (the daemon's, which
	// holds its writer lock); nil opens Dir for each call.
	Palace *palace.Palace
	// Dir is the palace directory, opened per call when Palace is nil.
	Dir string
	// LockTimeout bounds waiting for the palace's writer lock.
	LockTimeout time.Duration
	Logger      *slog.Logger

	// Hive and Agents are the hive and agent globs mined and written.
	Hive   string
	Agents []string
	// Domains are the configuration's domains, wing → domain
	// (hive.DomainAssignments), which status and the index show.
	Domains map[string]string
	// ModelSpec is the configured model; Enabled the configured service state.
	ModelSpec string
	Enabled   bool

	// Embedder opens the embedding backend for a call that embeds (nil
	// and no error: lexical). With Palace set it is the daemon's.
	Embedder func(context.Context) (embed.Embedder, error)
	// StatusModel opens the backend for status: it never downloads and
	// says why the model is unavailable (reason), "" when it is.
	StatusModel func(context.Context) (e embed.Embedder, reason string, err error)
	// MineOptions are the options of the mine after a write, of a mine
	// and of the repair of damaged wings.
	MineOptions func() mine.Options
	// Repaired hears of damaged wings rebuilt while the palace was opened.
	Repaired func([]mine.Repaired)
	// Warn hears what the user should know of a call that still succeeds.
	Warn func(msg string)
	// Isolation says whether this machine is cut off from the others, for
	// the wake-up digest; nil when not known.
	Isolation func(context.Context) *wakeup.Isolation
	// MineProgress hears how far a mine got.
	MineProgress func(done, total int)
}

// Service is api.Service on the palace in this process.
type Service struct {
	opts Options
}

// New returns the service of opts.
func New(opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MineOptions == nil {
		opts.MineOptions = func() mine.Options { return mine.Options{Hive: opts.Hive, Agents: opts.Agents} }
	}
	return &Service{opts: opts}
}

func (s *Service) warn(format string, args ...any) {
	if s.opts.Warn != nil {
		s.opts.Warn(fmt.Sprintf(format, args...))
	}
}

func (s *Service) embedder(ctx context.Context) (embed.Embedder, error) {
	if s.opts.Embedder == nil {
		return nil, nil
	}
	return s.opts.Embedder(ctx)
}
