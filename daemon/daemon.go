package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/daemon/registry"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
	"github.com/memminer/memminer/syncthing"
)

// SocketName is the control socket's file name in the palace directory.
const SocketName = daemonclient.SocketName

// SocketPath returns the control socket of the palace in dir.
func SocketPath(palaceDir string) string { return daemonclient.Path(palaceDir) }

// Defaults for Options left zero.
const (
	// DefaultDebounce is how long the watcher waits after the last write to
	// an agent's files before mining them, so an editor's burst of writes
	// mines once.
	DefaultDebounce = time.Second
	// maxDebounceFactor bounds the wait under a steady stream of writes:
	// an agent is mined at the latest this many debounce periods after its
	// first unmined change.
	maxDebounceFactor = 5
	// shutdownGrace bounds the wait for in-flight socket requests at stop.
	shutdownGrace = 2 * time.Second
	// servedCheckTimeout bounds the question New asks the control socket
	// before it waits for the palace lock.
	servedCheckTimeout = 3 * time.Second
)

// Errors New returns that callers tell apart.
var (
	// ErrAlreadyRunning means a daemon already serves the palace: it
	// answered on the palace's control socket.
	ErrAlreadyRunning = errors.New("a memminer daemon already serves this palace")
	// ErrNoHive means Options.Hive is empty.
	ErrNoHive = errors.New("no hive set")
)

// Options configure a daemon.
type Options struct {
	// Palace is the palace directory. The daemon holds its writer lock.
	Palace string
	// Hive is the directory whose agents/<id>/ directories are mined, one
	// wing per agent.
	Hive string
	// Agents are more glob patterns of agent directories, relative to the
	// Hive, besides agents/<id> (the config setting agents; see package
	// hive). New refuses a bad one.
	Agents []string
	// Domains are the configuration's domains of wings, wing → domain
	// (hive.DomainAssignments), which status and the index show.
	Domains map[string]string
	// Embedder makes vectors; nil means lexical.
	Embedder embed.Embedder
	// Prober is the same remote model opened for status probes
	// (embed.Options.Probe: one short attempt), so status reports a server
	// that is down at once and with the real cause rather than after the
	// Embedder's retries; nil means Embedder.
	Prober embed.Embedder
	// ModelSpec is the configured model spec, reported in status and
	// compared with callers' (empty means the Embedder's, or lexical).
	ModelSpec string
	// ModelError says why the configured model is unavailable, when the
	// daemon runs lexically in its place.
	ModelError string
	// MineInterval is the period of the mine loop; zero means
	// config.DefaultMineInterval.
	MineInterval time.Duration
	// Debounce is the quiet time after a change before mining; zero means
	// DefaultDebounce.
	Debounce time.Duration
	// NoWatch turns fsnotify off: changes are found by the mine loop only.
	NoWatch bool
	// LockTimeout bounds the wait for another writer's palace lock.
	LockTimeout time.Duration
	// MaxFileBytes skips larger files; zero means the mine default.
	MaxFileBytes int64
	// MetricsAddr, when set, serves Prometheus metrics over HTTP on this
	// host:port. It must be a loopback address unless MetricsAllowRemote.
	MetricsAddr string
	// MetricsAllowRemote permits a non-loopback MetricsAddr.
	MetricsAllowRemote bool
	// MetricsToken, when set, is the bearer token a scrape of MetricsAddr
	// must carry (the metrics name every wing; any local user can reach
	// a loopback port). The control socket serves /metrics to the user
	// alone without it.
	MetricsToken string
	// Logger receives the daemon's logs; nil means slog.Default().
	Logger *slog.Logger
	// Components run beside the mine loop (see Component).
	Components []Component
	// Index keeps HIVE/INDEX.md current (package catalog): rewritten after
	// the palace changed, when its content differs.
	Index bool
	// Syncthing, when set, is asked how the hive's folder stands, for
	// status and metrics (see HiveReplication).
	Syncthing *syncthing.Client
	// SyncthingOff says why Syncthing is not asked when Syncthing is nil
	// ("disabled by --no-syncthing"); status shows it.
	SyncthingOff string
	// Registry is the directory of the per-user record of running
	// daemons (package registry): the daemon records itself there while
	// it serves. Empty: it records itself nowhere.
	Registry string

	// dropEvents, in tests, discards fsnotify events as if the kernel
	// queue had overflowed without saying so.
	dropEvents bool
}

// Daemon is a running memminer service for one palace and hive. Create it
// with New and run it with Run.
type Daemon struct {
	opts     Options
	hive     *hive.Hive
	log      *slog.Logger
	p        *palace.Palace
	ln       net.Listener
	metricLn net.Listener
	socket   string
	started  time.Time
	metrics  *metrics
	q        *queue
	host     *Host
	// testErrs, in tests, feeds errors to the watcher as fsnotify would.
	testErrs chan error
	// testWatcher, in tests, is given the watcher once it watches.
	testWatcher func(*watcher)
	// testStampClock, in tests, is the time agent stamps are taken at
	// (the scan's when nil), so files written just now count as settled.
	testStampClock func() time.Time
	// testActivityGap, in tests, runs in activity between its reads,
	// where a status caller may be held up for any time.
	testActivityGap func()
	// dirChanges counts the watcher's sightings of agent directories (or
	// directories holding them) coming and going; see isAgent.
	dirChanges atomic.Uint64

	// failures are files and agent directories whose mine failed, by
	// path.
	failures *backoff
	// reembedFailures are wings, mined by no agent directory, whose
	// re-embedding with the palace's model failed; by wing id.
	reembedFailures *backoff
	// stamps are the agent directories found up to date, with what stat
	// said of their files then (see agentStamp); only the mine goroutine
	// uses them.
	stamps map[string]*agentStamp
	// hiveStamp is the whole hive's, when a scan found it up to date;
	// while it holds, a tick's scan is skipped. Only the mine goroutine
	// uses it.
	hiveStamp *agentStamp
	// hiveChanges counts the scans that looked at the hive afresh (see
	// Host.HiveChanges).
	hiveChanges atomic.Uint64

	// abort stops Run with a cause (set by Run).
	abort context.CancelCauseFunc

	mu       sync.Mutex // guards the fields below
	gone     bool       // the palace directory was replaced; see checkPalaceDir
	lastMine map[string]api.WingMine
	// secretsLogged is, for each file found holding secrets, the warning
	// logged about it: a file is logged once, and again only when what it
	// holds changes.
	secretsLogged map[string]string
	lastScan      time.Time
	scans         int64
	mines         int64
	watchState    string
	debouncing    map[string]bool // agent directories in their debounce window
	hiveErr       string
	noAgents      *api.FileError    // the hive has no agents/ directory (since when)
	badAgents     []api.FileError   // agent directories whose names are no wing id
	listed        *hiveState        // the last listing of the hive's agent directories
	first         *firstMine        // the first mine of the hive while it runs; nil after
	request       *api.MineProgress // the mine request in progress; nil when none
}

// New opens the palace for writing (waiting up to LockTimeout for another
// writer), binds the control socket and, when asked, the metrics address.
// Nothing is mined until Run. When a daemon already serves the palace, New
// fails at once with an error matching ErrAlreadyRunning instead of
// waiting for its lock; a hive that looks like an agents or agent
// directory fails with one matching hive.ErrNotHive (see hive.Hive.Check).
func New(ctx context.Context, opts Options) (*Daemon, error) {
	if opts.Palace == "" {
		return nil, errors.New("daemon: no palace directory set")
	}
	if opts.Hive == "" {
		return nil, ErrNoHive
	}
	hv, err := hive.Open(opts.Hive, opts.Agents)
	if err != nil {
		return nil, err
	}
	info, err := os.Stat(hv.Dir())
	if err != nil {
		return nil, fmt.Errorf("hive %s: %w", opts.Hive, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("hive %s is not a directory", opts.Hive)
	}
	if err := hv.Check(); err != nil {
		return nil, err
	}
	opts.Hive = hv.Dir()
	if opts.MineInterval <= 0 {
		opts.MineInterval = config.DefaultMineInterval
	}
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	if opts.ModelSpec == "" {
		opts.ModelSpec = embed.Lexical
		if opts.Embedder != nil {
			opts.ModelSpec = opts.Embedder.Model()
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MetricsAddr != "" {
		if err := CheckMetricsAddr(opts.MetricsAddr, opts.MetricsAllowRemote); err != nil {
			return nil, err
		}
	}
	d := &Daemon{
		opts:            opts,
		hive:            hv,
		log:             opts.Logger,
		socket:          SocketPath(opts.Palace),
		q:               newQueue(),
		failures:        newBackoff(opts.Logger, opts.MineInterval),
		reembedFailures: newBackoff(opts.Logger, opts.MineInterval),
		lastMine:        map[string]api.WingMine{},
		secretsLogged:   map[string]string{},
		debouncing:      map[string]bool{},
		watchState:      "fsnotify",
	}
	if opts.NoWatch {
		d.watchState = "off"
	}
	d.host = &Host{d: d}
	if len(d.socket) > maxSocketPath {
		return nil, fmt.Errorf("control socket path %s is %d bytes, longer than the %d a Unix socket allows; use a shorter palace path", d.socket, len(d.socket), maxSocketPath)
	}
	// Ask before waiting for the lock: a running daemon holds it for good.
	if err := CheckNotServed(ctx, opts.Palace); err != nil {
		return nil, err
	}
	p, err := palace.Open(ctx, opts.Palace, palace.Options{Embedder: opts.Embedder, LockTimeout: opts.LockTimeout, Logger: d.log})
	if err != nil {
		return nil, fmt.Errorf("open palace: %w", err)
	}
	d.p = p
	// The palace lock is ours, so no other daemon serves this palace: a
	// socket file left by a crash is stale.
	if err := os.Remove(d.socket); err != nil && !errors.Is(err, fs.ErrNotExist) {
		p.Close()
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "unix", d.socket)
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("listen on %s: %w", d.socket, err)
	}
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false) // closeAll decides
	}
	// The palace directory is 0700, so nobody else could reach the socket
	// between bind and chmod.
	if err := os.Chmod(d.socket, 0o600); err != nil {
		ln.Close()
		p.Close()
		return nil, fmt.Errorf("chmod %s: %w", d.socket, err)
	}
	d.ln = ln
	d.metrics = newMetrics(d)
	if opts.MetricsAddr != "" {
		mln, err := lc.Listen(ctx, "tcp", opts.MetricsAddr)
		if err != nil {
			d.closeAll()
			return nil, fmt.Errorf("metrics: listen on %s: %w", opts.MetricsAddr, err)
		}
		d.metricLn = mln
	}
	return d, nil
}

// runningError is ErrAlreadyRunning with the pid of the daemon that
// answered.
type runningError struct {
	pid    int
	palace string
}

func (e *runningError) Error() string {
	return fmt.Sprintf("a memminer daemon (pid %d) already serves this palace (%s); use it, or stop it before starting another", e.pid, e.palace)
}

func (e *runningError) Is(target error) bool { return target == ErrAlreadyRunning }

// CheckNotServed asks the control socket of the palace in palaceDir
// whether a daemon serves it, and fails with an error matching
// ErrAlreadyRunning, naming the daemon's pid, when one answers. No answer
// (no socket, a stale one, or none within a few seconds) is not an error:
// the palace lock settles the rest.
func CheckNotServed(ctx context.Context, palaceDir string) error {
	ctx, cancel := context.WithTimeout(ctx, servedCheckTimeout)
	defer cancel()
	st, err := daemonclient.NewClient(palaceDir).Status(ctx)
	if err != nil {
		return nil
	}
	pid := 0
	if st.Daemon != nil {
		pid = st.Daemon.PID
	}
	return &runningError{pid: pid, palace: palaceDir}
}

// maxSocketPath is the longest Unix socket path portable systems accept
// (sun_path is 104 bytes on macOS and the BSDs, 108 on Linux).
const maxSocketPath = 103

// Palace returns the daemon's open palace.
func (d *Daemon) Palace() *palace.Palace { return d.p }

// SocketPath returns the daemon's control socket.
func (d *Daemon) SocketPath() string { return d.socket }

// MetricsAddr returns the address metrics are served on, or "".
func (d *Daemon) MetricsAddr() string {
	if d.metricLn == nil {
		return ""
	}
	return d.metricLn.Addr().String()
}

func (d *Daemon) closeAll() {
	if d.ln != nil {
		d.ln.Close()
		// Once the palace directory was replaced, the socket path lies
		// in another directory, perhaps another daemon's: leave it.
		if !d.palaceGone() {
			os.Remove(d.socket)
		}
	}
	if d.metricLn != nil {
		d.metricLn.Close()
	}
	if d.p != nil {
		d.p.Close()
	}
}

// Close releases what New acquired. Run closes everything itself; Close is
// for a daemon that is never run.
func (d *Daemon) Close() error {
	d.closeAll()
	return nil
}

// Run mines the hive, watches it and serves the socket until ctx is done,
// then stops: the mine in progress ends at the next file boundary, what
// was mined is flushed, and the lock and socket are released. It returns
// nil after a stop by ctx.
func (d *Daemon) Run(ctx context.Context) error {
	d.started = time.Now()
	if !hasNotes(d.p) {
		// A palace with notes is not mined for the first time: a restart
		// has nothing of the kind to report.
		d.mu.Lock()
		d.first = &firstMine{started: d.started, left: map[string]int{}}
		d.mu.Unlock()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	d.abort = cancel
	d.log.Info("memminer daemon started", "palace", d.opts.Palace, "hive", d.opts.Hive, "model", d.p.Model(),
		"socket", d.socket, "mine_interval", d.opts.MineInterval, "watch", d.watchState, "pid", os.Getpid())

	var wg sync.WaitGroup
	srv := &http.Server{
		Handler:           d.routes(),
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: requestReadTimeout,
		ReadTimeout:       requestReadTimeout,
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := srv.Serve(d.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("control socket stopped", "err", err)
		}
	}()
	var msrv *http.Server
	if d.metricLn != nil {
		msrv = &http.Server{Handler: d.metrics.handler(d.opts.MetricsToken), ReadHeaderTimeout: 10 * time.Second}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := msrv.Serve(d.metricLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.log.Error("metrics server stopped", "err", err)
			}
		}()
		d.log.Info("serving metrics", "addr", d.metricLn.Addr().String())
	}

	unregister := d.register()

	// Repair damaged wings before anything else touches them.
	for _, r := range mine.Repair(ctx, d.p, d.mineOptions(nil)) {
		if r.Err != nil {
			d.log.Error("damaged wing could not be rebuilt", "wing", r.Wing, "cause", r.Cause, "err", *r.Err)
		} else {
			d.log.Warn("damaged wing rebuilt from markdown", "wing", r.Wing, "cause", r.Cause, "notes", r.Notes)
		}
	}

	if !d.opts.NoWatch {
		w, err := newWatcher(d.hive, d, d.log, d.opts.Debounce, d.opts.MineInterval)
		if err != nil {
			d.watchDegraded(fmt.Sprintf("fsnotify unavailable (%v)", err))
		} else {
			w.drop, w.errs = d.opts.dropEvents, d.testErrs
			if d.testWatcher != nil {
				d.testWatcher(w)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.run(ctx)
			}()
		}
	}
	for _, c := range d.opts.Components {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.runComponent(ctx, c)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d.opts.MineInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				d.q.requestScan(triggerTick)
			}
		}
	}()

	d.q.requestScan(triggerStart)
	d.work(ctx)

	// Stopping: first leave the registry, so no command points to a
	// daemon that is going away; then refuse new work, let in-flight
	// requests finish briefly.
	unregister()
	d.q.drain(fmt.Errorf("%w: the daemon is shutting down", api.ErrNotRunning))
	sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
	_ = srv.Shutdown(sctx)
	if msrv != nil {
		_ = msrv.Shutdown(sctx)
	}
	scancel()
	cancel(nil)
	wg.Wait()
	if cause := context.Cause(ctx); errors.Is(cause, palace.ErrDirReplaced) {
		d.closeAll()
		d.log.Info("memminer daemon stopped", "uptime", time.Since(d.started).Round(time.Millisecond))
		return cause
	}
	err := d.p.Flush()
	if err != nil && !errors.Is(err, palace.ErrReadOnly) {
		d.log.Error("final flush failed; the palace keeps its last complete state", "err", err)
	}
	d.closeAll()
	d.log.Info("memminer daemon stopped", "uptime", time.Since(d.started).Round(time.Millisecond))
	return nil
}

// register records the daemon in the registry of running daemons, and
// returns what removes the record. Without a registry, or when it cannot
// be written (the record only serves advice), the daemon runs on.
func (d *Daemon) register() (unregister func()) {
	if d.opts.Registry == "" {
		return func() {}
	}
	palaceDir, err := filepath.Abs(d.opts.Palace)
	if err != nil {
		palaceDir = d.opts.Palace
	}
	rec := registry.Record{PID: os.Getpid(), Palace: palaceDir, Hive: d.opts.Hive, Socket: SocketPath(palaceDir), Started: d.started.UTC()}
	remove, err := registry.Register(d.opts.Registry, rec)
	if err != nil {
		// Info, not a warning: a sandboxed system service cannot write
		// there, and serves no user who could follow the advice anyway.
		d.log.Info("not recorded in the registry of running daemons; commands on other palaces will not mention this daemon", "err", err)
		return func() {}
	}
	return func() {
		if err := remove(); err != nil {
			d.log.Warn("cannot remove the daemon's record from the registry of running daemons; the next command that reads it removes it", "err", err)
		}
	}
}

// checkPalaceDir stops the daemon when its palace directory was moved,
// removed or replaced: its lock guards the old directory, so a writer
// could lock the new one at that path, and two would write. It reports
// whether the daemon goes on.
func (d *Daemon) checkPalaceDir() bool {
	err := d.p.CheckDir()
	if !errors.Is(err, palace.ErrDirReplaced) {
		return true
	}
	d.mu.Lock()
	first := !d.gone
	d.gone = true
	d.mu.Unlock()
	if first {
		d.log.Error("the palace directory was moved, removed or replaced while the daemon ran; it writes nothing more and stops (start it again to serve the palace now at that path)",
			"palace", d.p.Dir(), "err", err)
		d.abort(err)
	}
	return false
}

// palaceGone reports whether checkPalaceDir found the directory replaced.
func (d *Daemon) palaceGone() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gone
}

// work is the mine goroutine: it takes work from the queue until ctx ends.
func (d *Daemon) work(ctx context.Context) {
	gc := processGC.join()
	defer gc.leave()
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.q.wake:
		}
		for ctx.Err() == nil {
			// Every piece of work may write the palace: check first that
			// it is still the directory the lock holds.
			if !d.checkPalaceDir() {
				return
			}
			w, ok := d.q.next()
			if !ok {
				break
			}
			if w.scan == "" {
				gc.work() // a scan that finds work queues it
			}
			d.do(ctx, w)
			d.q.done()
		}
		if d.opts.Index && ctx.Err() == nil {
			// Once the queue is empty: a burst of mines writes it once.
			d.refreshIndex(ctx)
		}
		gc.idle()
	}
}

// do runs one piece of work taken from the queue.
func (d *Daemon) do(ctx context.Context, w work) {
	d.forgetStamps(w)
	switch {
	case w.request != nil:
		d.doRequest(ctx, w.request)
	case w.call != nil:
		w.call.done <- w.call.run(ctx)
	case w.scan != "":
		d.scan(ctx, w.scan)
	case w.reembed != "":
		d.reembedWing(ctx, w.reembed, w.trigger)
	default:
		d.mineAgent(ctx, w.agent, w.trigger)
	}
}
