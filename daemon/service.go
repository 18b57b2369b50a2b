package daemon

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/kardianos/service"
)

// ServiceName names the systemd unit (memminer.service) and the launchd
// job (label and plist file).
const ServiceName = "memminer"

// StopTimeout is how long Program.Stop waits for the daemon to wind down.
// The palace on disk is complete at every moment (wing files are replaced
// atomically), so giving up after it loses at most the mine in progress.
const StopTimeout = 4 * time.Second

// Program runs a daemon under kardianos/service: Start opens the daemon
// (so a locked palace or a taken socket is reported at once) and runs it in
// the background; Stop ends it. Wait, given as the "RunWait" option, blocks
// until the parent context ends (SIGINT/SIGTERM) or the daemon stops.
type Program struct {
	ctx    context.Context
	opts   Options
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	err error
}

// NewProgram returns a Program running a daemon with opts until ctx ends.
func NewProgram(ctx context.Context, opts Options) *Program {
	return &Program{ctx: ctx, opts: opts, done: make(chan struct{})}
}

// Start opens the daemon and runs it in the background.
func (p *Program) Start(service.Service) error {
	if p.ctx == nil {
		return errors.New("daemon: this Program only installs the service; one from NewProgram runs it")
	}
	d, err := New(p.ctx, p.opts)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(p.ctx)
	p.cancel = cancel
	go func() {
		defer close(p.done)
		if err := d.Run(ctx); err != nil {
			p.mu.Lock()
			p.err = err
			p.mu.Unlock()
		}
	}()
	return nil
}

// Wait blocks until the parent context is done or the daemon has stopped.
func (p *Program) Wait() {
	select {
	case <-p.ctx.Done():
	case <-p.done:
	}
}

// Stop stops the daemon and waits up to StopTimeout for it.
func (p *Program) Stop(service.Service) error {
	if p.cancel == nil {
		return nil
	}
	p.cancel()
	select {
	case <-p.done:
		return nil
	case <-time.After(StopTimeout):
		log := p.opts.Logger
		if log == nil {
			log = slog.Default()
		}
		log.Warn("daemon did not stop in time; exiting anyway (the palace on disk is complete)", "waited", StopTimeout)
		return nil
	}
}

// Err is the daemon's error, once it has stopped.
func (p *Program) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Run runs the daemon the way a service manager does: through
// kardianos/service when a service system is known here, else directly
// (Start, wait for ctx, Stop).
func (p *Program) Run() error {
	svc, err := service.New(p, &service.Config{Name: ServiceName, Option: service.KeyValue{"RunWait": p.Wait}})
	if err == nil {
		err = svc.Run()
	} else {
		if err = p.Start(nil); err == nil {
			p.Wait()
			err = p.Stop(nil)
		}
	}
	if err != nil {
		return err
	}
	return p.Err()
}
