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
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/embed"
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
)

// Options configure a daemon.
type Options struct {
	// Palace is the palace directory. The daemon holds its writer lock.
	Palace string
	// Hive is the directory whose agents/<id>/ directories are mined, one
	// wing per agent.
	Hive string
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

	mu         sync.Mutex // guards the fields below
	failures   map[string]*failure
	lastMine   map[string]WingMine
	lastScan   time.Time
	scans      int64
	mines      int64
	watchState string
	debouncing map[string]bool // agent directories in their debounce window
	hiveErr    string
	badAgents  []FileError // agent directories whose names are no wing id
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
// Nothing is mined until Run.
func New(ctx context.Context, opts Options) (*Daemon, error) {
	if opts.Palace == "" {
		return nil, errors.New("daemon: no palace directory set")
	}
	if opts.Hive == "" {
		return nil, errors.New("no hive set: pass --hive DIR, set MEMMINER_HIVE, or put hive: in the config file")
	}
	hive, err := filepath.Abs(opts.Hive)
	if err != nil {
		return nil, fmt.Errorf("hive %s: %w", opts.Hive, err)
	}
	info, err := os.Stat(hive)
	if err != nil {
		return nil, fmt.Errorf("hive %s: %w", opts.Hive, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("hive %s is not a directory", opts.Hive)
	}
	opts.Hive = hive
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
		opts:       opts,
		log:        opts.Logger,
		socket:     SocketPath(opts.Palace),
		q:          newQueue(),
		failures:   map[string]*failure{},
		lastMine:   map[string]WingMine{},
		debouncing: map[string]bool{},
		watchState: "fsnotify",
	}
	if opts.NoWatch {
		d.watchState = "off"
	}
	d.host = &Host{d: d}
	if len(d.socket) > maxSocketPath {
		return nil, fmt.Errorf("control socket path %s is %d bytes, longer than the %d a Unix socket allows; use a shorter palace path", d.socket, len(d.socket), maxSocketPath)
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
			case w.scan != "":
				d.scan(ctx, w.scan)
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
	opts.Wing, opts.Agent, opts.DryRun = j.req.Wing, j.req.Agent, j.req.DryRun
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

// agentDir is one agents/<name>/ directory of the hive.
type agentDir struct {
	wing string
	dir  string
}

// agentsRoot returns the hive's agents directory, symlinks resolved the way
// mine resolves the paths it records.
func (d *Daemon) agentsRoot() string {
	root := filepath.Join(d.opts.Hive, "agents")
	if r, err := filepath.EvalSymlinks(root); err == nil {
		return r
	}
	return root
}

// listAgents lists the hive's agent directories.
func (d *Daemon) listAgents() ([]agentDir, []FileError, error) {
	root := d.agentsRoot()
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil // an empty hive: nothing to mine yet
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read hive: %w", err)
	}
	var out []agentDir
	var bad []FileError
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(root, name)
		if !e.IsDir() {
			// A symlink to a directory is an agent too.
			if info, err := os.Stat(path); err != nil || !info.IsDir() {
				continue
			}
		}
		wing, err := palace.NormalizeWingID(name)
		if err != nil {
			bad = append(bad, FileError{Path: path, Error: "not mined: " + err.Error()})
			continue
		}
		out = append(out, agentDir{wing: wing, dir: path})
	}
	return out, bad, nil
}

// scan stats every memory file of the hive and queues the agents whose
// files changed since they were last mined. A tick's scan also advances
// the retry backoff of failing files.
func (d *Daemon) scan(ctx context.Context, trigger string) {
	agents, bad, err := d.listAgents()
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
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg != d.hiveErr {
		if msg != "" {
			d.log.Error("cannot read the hive; retrying every mine interval", "hive", d.opts.Hive, "err", err)
		}
		d.hiveErr = msg
	}
	was := map[string]FileError{}
	for _, b := range d.badAgents {
		was[b.Path] = b
	}
	for i, b := range bad {
		if old, ok := was[b.Path]; ok && old.Error == b.Error {
			bad[i] = old
			continue
		}
		d.log.Warn("agent directory skipped", "path", b.Path, "err", b.Error)
		bad[i].Failures, bad[i].Since, bad[i].Last = 1, now.UTC(), now.UTC()
	}
	d.badAgents = bad
	d.mu.Unlock()
	for _, a := range agents {
		if ctx.Err() != nil {
			return
		}
		if d.agentNeedsMine(a, trigger) {
			d.q.addAgent(a.dir, trigger)
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

// markdownFiles lists the files mine would mine below dir, with their stat.
func markdownFiles(dir string) map[string]fileStat {
	out := map[string]fileStat{}
	_ = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if e != nil && e.IsDir() && path != dir {
				return fs.SkipDir
			}
			return nil
		}
		name := e.Name()
		if e.IsDir() {
			if path != dir && strings.HasPrefix(name, ".") {
				return fs.SkipDir
			}
			return nil
		}
		if !minable(name) {
			return nil
		}
		info, err := os.Stat(path)
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		out[path] = fileStat{info.ModTime().UTC(), info.Size()}
		return nil
	})
	return out
}

// minable reports whether mine mines a file of this name.
func minable(name string) bool {
	if strings.HasPrefix(name, ".") || mine.IsConflictCopy(name) {
		return false
	}
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".md" || ext == ".markdown"
}

// agentNeedsMine reports whether an agent directory has files that changed
// since they were last mined, files that are new, or files that are gone.
func (d *Daemon) agentNeedsMine(a agentDir, trigger string) bool {
	dir := a.dir
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	files := markdownFiles(dir)
	if len(files) == 0 {
		// Every markdown file gone: keep the wing as it is (a transient
		// state while an editor replaces a file must not empty it).
		return false
	}
	known := map[string]palace.Source{}
	for _, s := range d.p.Sources(a.wing) {
		if strings.HasPrefix(s.Path, dir+string(filepath.Separator)) {
			known[s.Path] = s
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if f, ok := d.failures[dir]; ok && f.wingLevel && f.skip > 0 && trigger == triggerTick {
		return false
	}
	for path, st := range files {
		if f, ok := d.failures[path]; ok {
			if f.mtime.Equal(st.mtime) && f.size == st.size {
				if f.skip == 0 {
					return true
				}
				continue
			}
			return true
		}
		s, ok := known[path]
		if !ok || !s.Mtime.Equal(st.mtime) || s.Size != st.size {
			return true
		}
	}
	for path := range known {
		if _, ok := files[path]; !ok {
			return true
		}
	}
	return false
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
		d.fail(d.failures[path], path, wing, msg, st, now, false)
	}
	if err != nil {
		d.fail(d.failures[dir], dir, wing, err.Error(), fileStat{}, now, true)
	} else if f, ok := d.failures[dir]; ok && f.wingLevel {
		d.log.Info("wing mines again", "wing", wing)
		delete(d.failures, dir)
	}
}

// fail records one more failure of path (d.mu held). A file that failed
// before in the same state is retried after twice as many ticks as last
// time; a changed file starts over.
func (d *Daemon) fail(f *failure, path, wing, msg string, st fileStat, now time.Time, wingLevel bool) {
	same := f != nil && f.mtime.Equal(st.mtime) && f.size == st.size
	if !same {
		f = &failure{FileError: FileError{Wing: wing, Path: path, Since: now}, wingLevel: wingLevel, mtime: st.mtime, size: st.size}
		d.failures[path] = f
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
	info.Errors = append(info.Errors, d.badAgents...)
	for _, f := range d.failures {
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
