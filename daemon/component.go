package daemon

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"

	"github.com/memminer/memminer/palace"
)

// Component is a long-running part of the daemon beside the mine loop,
// such as the Syncthing conflict watcher. Run is called once, in its own
// goroutine, and must return when ctx is done. An error ends only the
// component: the daemon logs it and goes on.
//
// A component may also implement Router (socket endpoints), Scanner
// (called after every scan of the hive), SkillsListener (called when the
// hive's skills changed), StatusReporter and ConflictCounter.
type Component interface {
	// Name identifies the component in logs and status.
	Name() string
	// Run runs the component until ctx is done.
	Run(ctx context.Context, h *Host) error
}

// Router is a component that serves endpoints on the control socket, e.g.
// GET /conflicts. Routes is called once before the socket serves.
type Router interface {
	Routes(mux *http.ServeMux)
}

// Scanner is a component told after every scan of the hive: at start and at
// every mine tick (the backstop when events were missed). Scanned runs in
// the component's own goroutine; scans that come while it runs are
// coalesced into one call.
type Scanner interface {
	Scanned(ctx context.Context, h *Host)
}

// SkillsListener is a component told when the hive's skills
// (HIVE/skills) changed, once their writes have settled (the watcher's
// debounce); never when the daemon does not watch (run --no-watch).
// SkillsChanged runs in the component's own goroutine; changes that come
// while it runs are coalesced into one call.
type SkillsListener interface {
	SkillsChanged(ctx context.Context, h *Host)
}

// StatusReporter is a component with its own part of `status --json`,
// under daemon.components.<name>.
type StatusReporter interface {
	Status() any
}

// ConflictCounter is a component that counts open conflicts, reported as
// conflicts_open in status and memminer_conflicts_open in metrics.
type ConflictCounter interface {
	// ConflictsOpen counts the open conflicts; it may look at the disk,
	// and gives up when ctx ends.
	ConflictsOpen(ctx context.Context) int
}

// Host is what the daemon offers its components.
type Host struct {
	d *Daemon

	mu      sync.Mutex
	scanned map[string]chan struct{}
}

// Palace is the daemon's open palace. Components read it; writes go
// through the daemon's mine goroutine.
func (h *Host) Palace() *palace.Palace { return h.d.p }

// Hive is the hive directory, absolute.
func (h *Host) Hive() string { return h.d.opts.Hive }

// Agents are the globs of agent directories the daemon was given besides
// agents/<id> (Options.Agents).
func (h *Host) Agents() []string { return slices.Clone(h.d.opts.Agents) }

// Logger is the daemon's logger.
func (h *Host) Logger() *slog.Logger { return h.d.log }

// HiveChanges counts the scans that looked at the hive afresh. While it
// stays the same, every later scan found nothing in the hive changed
// since before it took this value: a Scanner may skip its own walk when
// its last one, made after it saw the value, was complete.
func (h *Host) HiveChanges() uint64 { return h.d.hiveChanges.Load() }

// The signals a component hears: after a scan (Scanner), when the
// skills changed (SkillsListener).
const (
	scanSignal   = "scan"
	skillsSignal = "skills"
)

func (h *Host) scanChan(name string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.scanned == nil {
		h.scanned = map[string]chan struct{}{}
	}
	ch, ok := h.scanned[name]
	if !ok {
		ch = make(chan struct{}, 1)
		h.scanned[name] = ch
	}
	return ch
}

// runComponent runs c, and its Scanned calls, until ctx is done.
func (d *Daemon) runComponent(ctx context.Context, c Component) {
	log := d.log.With("component", c.Name())
	var wg sync.WaitGroup
	listen := func(signal string, f func(context.Context, *Host)) {
		ch := d.host.scanChan(signal + "/" + c.Name())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case <-ch:
					f(ctx, d.host)
				}
			}
		}()
	}
	if s, ok := c.(Scanner); ok {
		listen(scanSignal, s.Scanned)
	}
	if s, ok := c.(SkillsListener); ok {
		listen(skillsSignal, s.SkillsChanged)
	}
	if err := c.Run(ctx, d.host); err != nil && ctx.Err() == nil {
		log.Error("component stopped", "err", err)
	}
	wg.Wait()
}

// signalComponents tells every component listening for signal (a
// Scanner for scanSignal, a SkillsListener for skillsSignal).
func (d *Daemon) signalComponents(signal string) {
	for _, c := range d.opts.Components {
		_, scanner := c.(Scanner)
		_, skills := c.(SkillsListener)
		if signal == scanSignal && !scanner || signal == skillsSignal && !skills {
			continue
		}
		select {
		case d.host.scanChan(signal + "/" + c.Name()) <- struct{}{}:
		default:
		}
	}
}

func (d *Daemon) conflictsOpen(ctx context.Context) int {
	n := 0
	for _, c := range d.opts.Components {
		if cc, ok := c.(ConflictCounter); ok {
			n += cc.ConflictsOpen(ctx)
		}
	}
	return n
}

func (d *Daemon) componentStatus() map[string]any {
	out := map[string]any{}
	for _, c := range d.opts.Components {
		if sr, ok := c.(StatusReporter); ok {
			out[c.Name()] = sr.Status()
		}
	}
	return out
}
