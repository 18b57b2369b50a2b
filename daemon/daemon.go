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
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
)

// SocketName is the control socket's file name in the palace directory.
const SocketName = "memminer.sock"

// SocketPath returns the control socket of the palace in dir.
func SocketPath(palaceDir string) string { return filepath.Join(palaceDir, SocketName) }

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
	// maxRetrySkip caps the failure backoff at this many ticks.
	maxRetrySkip = 32
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
	// Embedder makes vectors; nil means lexical.
	Embedder embed.Embedder
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
	// Logger receives the daemon's logs; nil means slog.Default().
	Logger *slog.Logger
	// Components run beside the mine loop (see Component).
	Components []Component

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
	// dirChanges counts the watcher's sightings of agent directories (or
	// directories holding them) coming and going; see isAgent.
	dirChanges atomic.Uint64

	mu         sync.Mutex // guards the fields below
	failures   map[string]*failure
	lastMine   map[string]WingMine
	lastScan   time.Time
	scans      int64
	mines      int64
	watchState string
	debouncing map[string]bool // agent directories in their debounce window
	hiveErr    string
	noAgents   *FileError  // the hive has no agents/ directory (since when)
	badAgents  []FileError // agent directories whose names are no wing id
	listed     *hiveState  // the last listing of the hive's agent directories
	// verified are files not settled when mined that a later read found
	// unchanged once they had settled, with their stat then.
	verified map[string]fileStat
	// reembedFailures are wings, mined by no agent directory, whose
	// re-embedding with the palace's model failed; by wing id.
	reembedFailures map[string]*failure
}

// failure is a file, or a whole agent directory, whose mine failed.
type failure struct {
	FileError
	wingLevel bool
	mtime     time.Time
	size      int64
	// skip is how many more ticks pass before the file is retried
	// unchanged.
	skip int
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
		return nil, errors.New("no hive set: pass --hive DIR, set MEMMINER_HIVE, or put hive: in the config file")
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
		if err := checkMetricsAddr(opts.MetricsAddr, opts.MetricsAllowRemote); err != nil {
			return nil, err
		}
	}
	d := &Daemon{
		opts:            opts,
		hive:            hv,
		log:             opts.Logger,
		socket:          SocketPath(opts.Palace),
		q:               newQueue(),
		failures:        map[string]*failure{},
		reembedFailures: map[string]*failure{},
		lastMine:        map[string]WingMine{},
		debouncing:      map[string]bool{},
		verified:        map[string]fileStat{},
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
	st, err := NewClient(palaceDir).Status(ctx)
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
		os.Remove(d.socket)
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
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.log.Info("memminer daemon started", "palace", d.opts.Palace, "hive", d.opts.Hive, "model", d.p.Model(),
		"socket", d.socket, "mine_interval", d.opts.MineInterval, "watch", d.watchState, "pid", os.Getpid())

	var wg sync.WaitGroup
	srv := &http.Server{
		Handler:           d.routes(),
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: 10 * time.Second,
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
		msrv = &http.Server{Handler: d.metrics.handler(), ReadHeaderTimeout: 10 * time.Second}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := msrv.Serve(d.metricLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.log.Error("metrics server stopped", "err", err)
			}
		}()
		d.log.Info("serving metrics", "addr", d.metricLn.Addr().String())
	}

	// Repair damaged wings before anything else touches them.
	for _, r := range mine.Repair(ctx, d.p, d.mineOptions(nil)) {
		if r.Err != "" {
			d.log.Error("damaged wing could not be rebuilt", "wing", r.Wing, "cause", r.Cause, "err", r.Err)
		} else {
			d.log.Warn("damaged wing rebuilt from markdown", "wing", r.Wing, "cause", r.Cause, "notes", r.Notes)
		}
	}

	if !d.opts.NoWatch {
		w, err := newWatcher(d)
		if err != nil {
			d.degrade(fmt.Sprintf("fsnotify unavailable (%v)", err))
		} else {
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

	// Stopping: refuse new work, let in-flight requests finish briefly.
	d.q.drain(fmt.Errorf("%w: the daemon is shutting down", ErrNotRunning))
	sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
	_ = srv.Shutdown(sctx)
	if msrv != nil {
		_ = msrv.Shutdown(sctx)
	}
	scancel()
	cancel()
	wg.Wait()
	err := d.p.Flush()
	if err != nil && !errors.Is(err, palace.ErrReadOnly) {
		d.log.Error("final flush failed; the palace keeps its last complete state", "err", err)
	}
	d.closeAll()
	d.log.Info("memminer daemon stopped", "uptime", time.Since(d.started).Round(time.Millisecond))
	return nil
}

// work is the mine goroutine: it takes work from the queue until ctx ends.
func (d *Daemon) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.q.wake:
		}
		for ctx.Err() == nil {
			w, ok := d.q.next()
			if !ok {
				break
			}
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
			d.q.done()
		}
	}
}

func (d *Daemon) mineOptions(reembeds *[]Reembed) mine.Options {
	return mine.Options{
		MaxFileBytes: d.opts.MaxFileBytes,
		// Running lexically because the model is unavailable must not
		// strip wings of its vectors.
		ModelUnavailable: d.opts.ModelError,
		OnReembed: func(wing, from, to string, n int) {
			d.log.Warn("wing was embedded with another model; re-embedding", "wing", wing, "from", from, "to", to, "notes", n)
			if reembeds != nil {
				*reembeds = append(*reembeds, Reembed{Wing: wing, From: from, To: to, Notes: n})
			}
		},
	}
}

// doRequest runs a mine handed over through the socket.
func (d *Daemon) doRequest(ctx context.Context, j *mineJob) {
	if err := j.ctx.Err(); err != nil {
		j.reply <- mineOutcome{err: err}
		return
	}
	// The mine stops when the daemon stops or the caller gives up.
	mctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(j.ctx, cancel)
	defer func() { stop(); cancel() }()

	var reembeds []Reembed
	opts := d.mineOptions(&reembeds)
	opts.Wing, opts.Agent, opts.DryRun, opts.Agents, opts.Hive = j.req.Wing, j.req.Agent, j.req.DryRun, j.req.Agents, d.opts.Hive
	start := time.Now()
	s, err := mine.Mine(mctx, d.p, j.req.Path, opts)
	d.metrics.observeMine(triggerRequest, time.Since(start), err, len(s.Problems))
	d.mu.Lock()
	d.mines++
	d.mu.Unlock()
	d.log.Info("mined on request", "path", j.req.Path, "wings", strings.Join(s.Wings, ","), "files_changed", s.FilesChanged,
		"notes_added", s.NotesAdded, "notes_removed", s.NotesRemoved, "dry_run", j.req.DryRun, "err", err)
	j.reply <- mineOutcome{reply: MineReply{Result: NewMineResult(s), Reembeds: reembeds}, err: err}
}

// agentDir is one agent directory of the hive.
type agentDir struct {
	wing string
	dir  string // the parent's symlinks resolved, as mine records paths
}

// hiveState is what a look at the hive's agent directories found.
type hiveState struct {
	// gen is Daemon.dirChanges when the listing began.
	gen    uint64
	agents []agentDir
	// bad are directories the agents globs match that are no agents:
	// their names are no wing id, their wing id is taken, or they lie
	// inside another agent directory.
	bad []badAgent
	// noAgents is set when the hive has no agents/ directory and no other
	// directory the globs match.
	noAgents bool
	// err is set when a directory of the hive cannot be read.
	err error
}

// badAgent is a directory the agents globs match that is not mined.
type badAgent struct {
	FileError
	warning string // logged once when it appears
}

// listAgents lists the hive's agent directories, by mine's rules.
func (d *Daemon) listAgents() hiveState {
	hs := hiveState{gen: d.dirChanges.Load()}
	agents, skipped, err := d.hive.Agents()
	if err != nil {
		hs.err = fmt.Errorf("read hive: %w", err)
	}
	for _, a := range agents {
		hs.agents = append(hs.agents, agentDir{wing: a.Wing, dir: a.Canonical})
	}
	for _, s := range skipped {
		b := badAgent{FileError: FileError{Path: s.Canonical, Error: s.Err.Error()}}
		switch s.Reason {
		case hive.BadName:
			b.Error = "not a valid wing id: " + s.Err.Error() + "; rename the directory to mine it"
			b.warning = "agent directory skipped: its name is not a valid wing id"
		case hive.SameWing:
			b.warning = "agent directory skipped: an agent directory listed before it has its wing id"
		case hive.OutsideHive:
			b.warning = "agent directory skipped: it is a symlink leading out of the hive"
		case hive.Aliased:
			b.warning = "agent directory skipped: it is a symlink to another agent directory's files"
		default:
			b.warning = "agent directory skipped: it lies inside another agent directory"
		}
		hs.bad = append(hs.bad, b)
	}
	if len(agents) == 0 && len(skipped) == 0 && err == nil {
		_, serr := os.Stat(filepath.Join(d.opts.Hive, hive.DefaultDir))
		hs.noAgents = errors.Is(serr, fs.ErrNotExist) // nothing to mine yet
	}
	return hs
}

// noAgentsMsgs are the status error of a hive without agent directories,
// and the warning logged when that begins.
func (d *Daemon) noAgentsMsgs() (status, warning string) {
	if !d.hive.Globs().HasExtra() {
		return "no agents/ directory: the daemon mines agents/<id>/*.md below the hive, and mines nothing until one appears",
			"the hive has no agents/ directory; nothing to mine until agents/<id>/ appears"
	}
	patterns := strings.Join(d.hive.Globs().Patterns(), ", ")
	return "no agent directories: the daemon mines the *.md of the directories matching " + patterns +
			" below the hive, and mines nothing until one appears",
		"the hive has no agent directories; nothing to mine until a directory matching " + patterns + " appears"
}

// noteHive records what listAgents found (d.mu held), logging each
// problem once, when it first appears.
func (d *Daemon) noteHive(hs hiveState, now time.Time) {
	d.listed = &hs
	msg := ""
	if hs.err != nil {
		msg = hs.err.Error()
	}
	if msg != d.hiveErr {
		if msg != "" {
			d.log.Error("cannot read the hive; retrying every mine interval", "hive", d.opts.Hive, "err", hs.err)
		}
		d.hiveErr = msg
	}
	switch {
	case hs.noAgents && d.noAgents == nil:
		status, warning := d.noAgentsMsgs()
		d.log.Warn(warning, "hive", d.opts.Hive)
		d.noAgents = &FileError{Path: d.opts.Hive, Error: status, Failures: 1, Since: now.UTC(), Last: now.UTC()}
	case !hs.noAgents && d.noAgents != nil:
		d.log.Info("the hive's agents/ directory appeared", "hive", d.opts.Hive)
		d.noAgents = nil
	}
	was := map[string]FileError{}
	for _, b := range d.badAgents {
		was[b.Path] = b
	}
	bad := make([]FileError, len(hs.bad))
	for i, b := range hs.bad {
		if old, ok := was[b.Path]; ok && old.Error == b.Error {
			bad[i] = old
			continue
		}
		d.log.Warn(b.warning, "path", b.Path, "err", b.Error)
		bad[i] = b.FileError
		bad[i].Failures, bad[i].Since, bad[i].Last = 1, now.UTC(), now.UTC()
	}
	d.badAgents = bad
}

// refreshAgents looks at the hive's agent directories again, without
// mining, so a new directory the daemon cannot mine shows in status (the
// watcher calls it), and returns what it found.
func (d *Daemon) refreshAgents() hiveState {
	hs := d.listAgents()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.noteHive(hs, time.Now())
	return hs
}

// scan stats every memory file of the hive and queues the agents whose
// files changed since they were last mined, and the wings embedded with
// another model than the palace's. A tick's scan also advances the retry
// backoff of failing files.
func (d *Daemon) scan(ctx context.Context, trigger string) {
	hs := d.listAgents()
	stale := d.staleWings()
	now := time.Now()
	d.mu.Lock()
	for path, f := range d.failures {
		if trigger == triggerTick && f.skip > 0 {
			f.skip--
		}
		// A failing file (or agent) that is gone no longer fails.
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			delete(d.failures, path)
		}
	}
	for wing, f := range d.reembedFailures {
		if trigger == triggerTick && f.skip > 0 {
			f.skip--
		}
		// Re-embedded meanwhile (by a mine), or gone.
		if !stale[wing] {
			delete(d.reembedFailures, wing)
		}
	}
	d.noteHive(hs, now)
	d.mu.Unlock()
	mined := map[string]bool{} // wings an agent directory's mine re-embeds
	for _, a := range hs.agents {
		if ctx.Err() != nil {
			return
		}
		need, mines := d.agentNeedsMine(a, trigger, stale[a.wing])
		if mines {
			mined[a.wing] = true
		}
		if need {
			d.q.addAgent(a.dir, trigger)
		}
	}
	// A wing no agent directory mines (mined through the socket from
	// elsewhere, or whose agent is gone) is re-embedded from its notes.
	for _, wing := range sortedKeys(stale) {
		if mined[wing] {
			continue
		}
		d.mu.Lock()
		f, failing := d.reembedFailures[wing]
		wait := failing && f.skip > 0 && trigger == triggerTick
		d.mu.Unlock()
		if !wait {
			d.q.addReembed(wing, trigger)
		}
	}
	d.mu.Lock()
	d.scans++
	d.lastScan = now
	d.mu.Unlock()
	d.signalComponents()
}

// fileStat is what the change check knows of a markdown file.
type fileStat struct {
	mtime time.Time
	size  int64
}

// markdownFiles lists the files a mine of dir reads, by mine's own rules,
// with their mtime and size.
func markdownFiles(dir string) map[string]fileStat {
	files, _ := mine.ListFiles(dir)
	out := make(map[string]fileStat, len(files))
	for _, f := range files {
		out[f.Path] = fileStat{f.Mtime, f.Size}
	}
	return out
}

// staleWings lists the wings whose notes were embedded with another model
// than the palace's, so searching them fails until they are re-embedded.
// A lexical palace (no model, or the model unavailable) searches every
// wing, so it re-embeds none: a wing whose markdown does not change keeps
// its vectors for when the model is back.
func (d *Daemon) staleWings() map[string]bool {
	model := d.p.Model()
	stale := map[string]bool{}
	if model == embed.Lexical {
		return stale
	}
	for _, w := range d.p.Wings() {
		if w.Notes > 0 && w.Model != model {
			stale[w.ID] = true
		}
	}
	return stale
}

// agentNeedsMine reports whether an agent directory has files that changed
// since they were last mined (for a file that was not settled when mined,
// by its content), files that are new, or files that are gone, or whether its wing is stale (embedded with another model), and whether
// a mine of it would run at all (it has markdown files).
func (d *Daemon) agentNeedsMine(a agentDir, trigger string, stale bool) (need, mines bool) {
	dir := a.dir
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	files := markdownFiles(dir)
	if len(files) == 0 {
		// Every markdown file gone: keep the wing as it is (a transient
		// state while an editor replaces a file must not empty it).
		return false, false
	}
	known := map[string]palace.Source{}
	for _, s := range d.p.Sources(a.wing) {
		if strings.HasPrefix(s.Path, dir+string(filepath.Separator)) {
			known[s.Path] = s
		}
	}
	// A file not settled when it was mined may have changed while keeping
	// its mtime and size; reading it tells, without a mine that would
	// write the palace (done before locking: it is file I/O).
	// A file found unchanged once it had settled is trusted on its stat
	// from then on (verified), so a file is read once, not at every tick.
	racy := map[string]bool{}
	for path, st := range files {
		if s, ok := known[path]; ok && s.Mtime.Equal(st.mtime) && s.Size == st.size && !mine.Settled(s) {
			d.mu.Lock()
			v, checked := d.verified[path]
			d.mu.Unlock()
			if checked && v == st {
				continue
			}
			at := time.Now()
			same, err := mine.SameContent(s)
			racy[path] = err != nil || !same
			if err == nil && same && mine.SettledAt(st.mtime, at) {
				d.mu.Lock()
				d.verified[path] = st
				d.mu.Unlock()
			}
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if f, ok := d.failures[dir]; ok && f.wingLevel && f.skip > 0 && trigger == triggerTick {
		return false, true
	}
	if stale {
		// mine re-embeds the whole wing before it mines the changes.
		return true, true
	}
	for path, st := range files {
		if f, ok := d.failures[path]; ok {
			if f.mtime.Equal(st.mtime) && f.size == st.size {
				if f.skip == 0 {
					return true, true
				}
				continue
			}
			return true, true
		}
		s, ok := known[path]
		if !ok || !s.Mtime.Equal(st.mtime) || s.Size != st.size || racy[path] {
			return true, true
		}
	}
	for path := range known {
		if _, ok := files[path]; !ok {
			return true, true
		}
	}
	return false, true
}

// mineAgent mines one agent directory into its wing and records how it went.
func (d *Daemon) mineAgent(ctx context.Context, dir, trigger string) {
	wing, err := palace.NormalizeWingID(filepath.Base(dir))
	if err != nil {
		return
	}
	d.mu.Lock()
	delete(d.debouncing, dir)
	d.mu.Unlock()
	if !d.isAgent(dir) {
		// Not (or no longer) an agent directory: its wing id is another's,
		// or it lies inside one; status says so. A removed one's wing is
		// kept and shows as orphaned.
		return
	}
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() || len(markdownFiles(dir)) == 0 {
		// The agent was removed (or emptied): its wing is kept and shows as
		// orphaned in status.
		return
	}
	start := time.Now()
	opts := d.mineOptions(nil)
	opts.Wing = wing
	s, err := mine.Mine(ctx, d.p, dir, opts)
	dur := time.Since(start)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		d.log.Info("mine interrupted by shutdown; what was mined is saved", "wing", wing)
		return
	}
	d.metrics.observeMine(trigger, dur, err, len(s.Problems))
	d.record(wing, dir, trigger, start, dur, s, err)
}

// isAgent reports whether dir (keyed as listAgents keys it) is one of the
// hive's agent directories now. The last listing answers unless the
// watcher saw agent directories come or go since it was made; then the
// hive is listed again, and what that finds is recorded, so status shows a
// directory that is skipped at once. (Listing the hive for every mine
// made a daemon's first start over a thousand agents quadratic.)
func (d *Daemon) isAgent(dir string) bool {
	d.mu.Lock()
	hs, fresh := d.listed, d.listed != nil && d.listed.gen == d.dirChanges.Load()
	d.mu.Unlock()
	if !fresh {
		h := d.refreshAgents()
		hs = &h
	}
	return slices.ContainsFunc(hs.agents, func(a agentDir) bool { return a.dir == dir })
}

// agentDirsChanged notes that an agent directory, or a directory in which
// they appear, came or went: the last listing of the hive is stale.
func (d *Daemon) agentDirsChanged() { d.dirChanges.Add(1) }

// reembedWing re-embeds a wing with the palace's model from the notes it
// holds, for a wing no agent directory of the hive mines, and saves it.
func (d *Daemon) reembedWing(ctx context.Context, wing, trigger string) {
	from, ok := d.p.ModelOf(wing)
	to := d.p.Model()
	if !ok || from == to {
		return // re-embedded by a mine meanwhile, or gone
	}
	start := time.Now()
	n, err := d.p.Reembed(ctx, wing)
	if err == nil {
		err = d.p.Flush()
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		d.log.Info("re-embedding interrupted by shutdown", "wing", wing)
		return
	}
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		path := d.p.Dir()
		if roots := d.p.Roots(wing); len(roots) > 0 {
			path = roots[0]
		}
		d.fail(d.reembedFailures, wing, path, wing, fmt.Sprintf("re-embed with model %s: %v", to, err), fileStat{}, now, true)
		return
	}
	delete(d.reembedFailures, wing)
	d.log.Warn("wing was embedded with another model; re-embedded it", "wing", wing, "from", from, "to", to,
		"notes", n, "trigger", trigger, "took", time.Since(start).Round(time.Millisecond))
}

// record updates the failure table and the wing's last mine after a mine.
func (d *Daemon) record(wing, dir, trigger string, start time.Time, dur time.Duration, s mine.Summary, err error) {
	now := time.Now()
	problems := map[string]string{}
	for _, pr := range s.Problems {
		problems[pr.Path] = pr.Err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mines++
	lm := WingMine{At: start.UTC(), Trigger: trigger, Seconds: dur.Seconds(), FilesChanged: s.FilesChanged, NotesAdded: s.NotesAdded, NotesRemoved: s.NotesRemoved}
	if err != nil {
		lm.Error = err.Error()
	}
	d.lastMine[wing] = lm
	for _, m := range s.Migrated {
		d.log.Info("wing migrated to the current note format; vectors of unchanged notes kept", "wing", m.Wing, "format", m.Format, "files", m.Files, "notes", m.Notes, "embedded", m.Embedded)
	}
	if s.FilesChanged > 0 || s.FilesRemoved > 0 {
		d.log.Info("mined", "wing", wing, "trigger", trigger, "files_changed", s.FilesChanged, "files_removed", s.FilesRemoved,
			"notes_added", s.NotesAdded, "notes_removed", s.NotesRemoved, "took", dur.Round(time.Millisecond))
	}
	// Files of this agent that mined cleanly are no longer failing.
	prefix := dir + string(filepath.Separator)
	for path, f := range d.failures {
		if f.wingLevel || !strings.HasPrefix(path, prefix) {
			continue
		}
		if _, still := problems[path]; !still {
			d.log.Info("file mines again", "wing", wing, "path", path)
			delete(d.failures, path)
		}
	}
	for path, msg := range problems {
		var st fileStat
		if info, err := os.Stat(path); err == nil {
			st = fileStat{info.ModTime().UTC(), info.Size()}
		}
		d.fail(d.failures, path, path, wing, msg, st, now, false)
	}
	if err != nil {
		d.fail(d.failures, dir, dir, wing, err.Error(), fileStat{}, now, true)
	} else if f, ok := d.failures[dir]; ok && f.wingLevel {
		d.log.Info("wing mines again", "wing", wing)
		delete(d.failures, dir)
	}
}

// fail records one more failure of path in tab under key (d.mu held). A
// file that failed before in the same state is retried after twice as many
// ticks as last time; a changed file starts over.
func (d *Daemon) fail(tab map[string]*failure, key, path, wing, msg string, st fileStat, now time.Time, wingLevel bool) {
	f := tab[key]
	same := f != nil && f.mtime.Equal(st.mtime) && f.size == st.size
	if !same {
		f = &failure{FileError: FileError{Wing: wing, Path: path, Since: now}, wingLevel: wingLevel, mtime: st.mtime, size: st.size}
		tab[key] = f
	}
	if f.Failures == 0 || f.Error != msg {
		d.log.Warn("mine failed; retrying when the file changes or at the next tick", "wing", wing, "path", path, "err", msg)
	} else {
		d.log.Debug("mine failed again", "wing", wing, "path", path, "failures", f.Failures+1, "err", msg)
	}
	f.Failures++
	f.Error = msg
	f.Last = now
	// Ticks decrement skip before looking at it: 1 retries at the next
	// tick, 2 skips one tick, 4 three, …
	f.skip = min(1<<min(f.Failures-1, 10), maxRetrySkip)
	f.NextRetry = now.Add(time.Duration(f.skip) * d.opts.MineInterval).UTC()
}

// degrade notes that fsnotify no longer covers everything; the mine loop
// still does.
func (d *Daemon) degrade(reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	state := "degraded: " + reason
	if d.watchState != state {
		d.log.Warn("file watching degraded; changes are still found by the mine loop", "reason", reason, "mine_interval", d.opts.MineInterval)
		d.watchState = state
	}
}

// setDebouncing marks an agent directory as waiting out its debounce window.
func (d *Daemon) setDebouncing(dir string, on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if on {
		d.debouncing[dir] = true
	} else {
		delete(d.debouncing, dir)
	}
}

// Status reports the palace and the daemon's state.
func (d *Daemon) Status() Status {
	st := BuildStatus(d.p, d.opts.ModelSpec, d.opts.ModelError, true)
	st.Active = true
	st.ConflictsOpen = d.conflictsOpen()
	components := d.componentStatus()
	dirs, reqs, working := d.q.pending()
	reembeds := d.q.pendingReembeds()
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range st.Wings {
		if lm, ok := d.lastMine[st.Wings[i].ID]; ok {
			st.Wings[i].LastMine = &lm
		}
	}
	pendingWings := map[string]bool{}
	for _, dir := range dirs {
		if w, err := palace.NormalizeWingID(filepath.Base(dir)); err == nil {
			pendingWings[w] = true
		}
	}
	for dir := range d.debouncing {
		if w, err := palace.NormalizeWingID(filepath.Base(dir)); err == nil {
			pendingWings[w] = true
		}
	}
	for _, w := range reembeds {
		pendingWings[w] = true
	}
	info := &DaemonInfo{
		PID:           os.Getpid(),
		Started:       d.started.UTC(),
		UptimeSeconds: now.Sub(d.started).Seconds(),
		Hive:          d.opts.Hive,
		MineInterval:  d.opts.MineInterval.String(),
		Watch:         d.watchState,
		LastScan:      d.lastScan.UTC(),
		Scans:         d.scans,
		Mines:         d.mines,
		Working:       working,
		Pending:       Pending{Wings: sortedKeys(pendingWings), Requests: reqs},
		Errors:        []FileError{},
		Metrics:       d.MetricsAddr(),
		Components:    components,
	}
	if d.hiveErr != "" {
		info.Errors = append(info.Errors, FileError{Path: d.opts.Hive, Error: d.hiveErr})
	}
	if d.noAgents != nil {
		info.Errors = append(info.Errors, *d.noAgents)
	}
	info.Errors = append(info.Errors, d.badAgents...)
	for _, f := range d.failures {
		info.Errors = append(info.Errors, f.FileError)
	}
	for _, f := range d.reembedFailures {
		info.Errors = append(info.Errors, f.FileError)
	}
	sort.Slice(info.Errors, func(i, j int) bool { return info.Errors[i].Path < info.Errors[j].Path })
	st.Daemon = info
	return st
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// BuildStatus describes p the way `memminer status` prints it when no
// daemon runs; a daemon adds its part on top. modelSpec is the configured
// model and modelErr why it is unavailable, if it is.
func BuildStatus(p *palace.Palace, modelSpec, modelErr string, enabled bool) Status {
	st := Status{
		Available:   modelErr == "",
		Enabled:     enabled,
		Model:       modelSpec,
		ModelError:  modelErr,
		Palace:      p.Dir(),
		PalaceBytes: p.Bytes(),
	}
	for _, w := range p.Wings() {
		ws := WingStatus{WingInfo: w, Orphaned: orphaned(w.Roots)}
		st.Wings = append(st.Wings, ws)
		st.Notes += w.Notes
	}
	if st.Wings == nil {
		st.Wings = []WingStatus{}
	}
	st.Initialized = len(st.Wings) > 0
	return st
}

// orphaned reports whether every root a wing was mined from is gone.
func orphaned(roots []string) bool {
	if len(roots) == 0 {
		return false
	}
	for _, r := range roots {
		if _, err := os.Stat(r); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	return true
}
