package syncthing

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	// A sibling import, kept: hive owns the one conflict-name parser, so what this reports is what mine skips.
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/backoff"
)

// Conflict actions reported in [ConflictEvent.Action].
const (
	// ActionModified means the conflict copy was created or changed.
	ActionModified = "modified"
	// ActionDeleted means the conflict copy was removed (resolved).
	ActionDeleted = "deleted"
)

// ConflictEvent reports a change to a conflict copy inside a Syncthing
// folder.
type ConflictEvent struct {
	// Path is the conflict copy's absolute path on this machine.
	Path string
	// Original is the absolute path of the file it conflicts with.
	Original string
	// FolderID and FolderLabel name the Syncthing folder.
	FolderID, FolderLabel string
	// RelPath is Path relative to the folder root.
	RelPath string
	// Name is the parsed conflict file name.
	Name hive.ConflictName
	// Winner is the device whose version won (Name.ShortDevice resolved
	// through /rest/config/devices); valid only when WinnerKnown.
	Winner Device
	// WinnerKnown reports whether Name.ShortDevice matched a configured
	// device.
	WinnerKnown bool
	// Action is the copy's state on disk when the event was handled:
	// [ActionModified] while it exists, [ActionDeleted] once it is gone.
	Action string
	// Source is the event type that revealed the change, e.g.
	// "LocalChangeDetected" or "ItemFinished".
	Source string
	// Time is when Syncthing logged the event.
	Time time.Time
}

// DefaultPollTimeout is a [Watcher]'s long-poll timeout. Syncthing
// answers a poll as soon as an event comes, and a restart or a crash
// ends the poll's connection at once, so the timeout only bounds how
// long a Syncthing that hangs, or one restarted between two polls, goes
// unnoticed. Each timeout wakes the daemon for a poll and a status check
// on both streams: at 30 s that was 8 requests a minute of an idle
// daemon, at 5 minutes it is under 1 (Syncthing takes any timeout).
const DefaultPollTimeout = 5 * time.Minute

// WatcherOptions tunes a [Watcher]. The zero value gives the defaults.
type WatcherOptions struct {
	// Logger receives the watcher's few log lines; nil means slog.Default().
	Logger *slog.Logger
	// PollTimeout is the long-poll timeout of each events request
	// (DefaultPollTimeout).
	PollTimeout time.Duration
	// MinBackoff and MaxBackoff bound the exponential, jittered wait
	// between attempts while Syncthing is unreachable (defaults 500 ms and
	// 30 s).
	MinBackoff, MaxBackoff time.Duration
	// StatusInterval is how often /rest/system/status is checked for a
	// restart while events keep flowing (default 30 s). Failed and empty
	// polls always trigger a check.
	StatusInterval time.Duration
	// RefreshInterval is the least time between two lookups of the same
	// unknown folder id or short device id (default 2 s); the first
	// lookup of an id is never delayed.
	RefreshInterval time.Duration
}

func (o *WatcherOptions) setDefaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.PollTimeout <= 0 {
		o.PollTimeout = DefaultPollTimeout
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = o.MinBackoff
	}
	if o.StatusInterval <= 0 {
		o.StatusInterval = 30 * time.Second
	}
	if o.RefreshInterval <= 0 {
		o.RefreshInterval = 2 * time.Second
	}
}

// WatcherStatus is a snapshot of a [Watcher]'s state for status output.
type WatcherStatus struct {
	// Running reports whether Run is active.
	Running bool
	// Connected reports whether the last request to Syncthing succeeded.
	Connected bool
	// LastError is the most recent failure (nil if none yet). It never
	// contains the API key.
	LastError error
	// LastErrorTime is when LastError happened.
	LastErrorTime time.Time
	// Since is the last event id consumed from /rest/events/disk.
	Since int
	// ItemSince is the last event id consumed from the ItemFinished /
	// LocalIndexUpdated stream.
	ItemSince int
	// StartTime is the start time of the Syncthing process being watched.
	StartTime time.Time
	// Restarts counts Syncthing restarts noticed since Run began.
	Restarts int
	// Delivered counts conflict events handed to the callback.
	Delivered int
}

// Watcher follows a Syncthing's event streams and reports changes to
// conflict copies. It long-polls /rest/events/disk (LocalChangeDetected,
// RemoteChangeDetected) and /rest/events?events=ItemFinished,LocalIndexUpdated
// at the same time, resolves each conflict copy to an absolute path through
// the folder map, and calls the handler each time a copy's state on disk
// (present or deleted) differs from what it last reported for that path.
//
// On start and after every Syncthing restart it reads the streams from the
// beginning of Syncthing's event buffer, so conflicts from shortly before
// can be reported; restarts are noticed from a changed startTime, a failed
// or empty poll, or event ids going backwards. While Syncthing is down the
// watcher retries with capped exponential backoff and logs one line when
// it goes down and one when it is back.
type Watcher struct {
	c       *Client
	handler func(context.Context, ConflictEvent)
	opts    WatcherOptions
	log     *slog.Logger
	running atomic.Bool

	mu          sync.Mutex
	conn        connState
	downSince   time.Time // when the current outage was noted
	upSince     time.Time // when the current connection was noted
	statusAsked time.Time // when the status answer applied last was asked for
	lastErr     error
	lastErrTime time.Time
	startTime   time.Time
	uptime      int
	epoch       int
	restarts    int
	since       [numStreams]int
	delivered   int

	// refreshMu serialises map refreshes; the maps themselves are read
	// and replaced under mu.
	refreshMu       sync.Mutex
	tilde           string
	folders         map[string]Folder
	foldersStale    bool
	unknownFolders  map[string]time.Time // folder id -> last lookup that missed
	devices         map[DeviceID]Device
	unknownDevices  map[string]time.Time // short id -> last lookup that missed
	warnedFolders   map[string]bool
	lastDeliveredAt map[string]string // absolute path -> last action delivered
}

type connState int

const (
	connUnknown connState = iota
	connUp
	connDown
)

const (
	streamDisk = iota
	streamItems
	numStreams
)

var streamNames = [numStreams]string{"disk", "items"}

// itemEventTypes are the types requested on the second stream.
var itemEventTypes = []string{EventItemFinished, EventLocalIndexUpdated}

// maxDedup bounds the memory of delivered (path, action) pairs.
const maxDedup = 10000

// NewWatcher returns a watcher that reports conflict copies seen by c to
// handler. The handler runs on the goroutine that called [Watcher.Run],
// one event at a time; while it runs, polling continues but no further
// event is handed over.
func NewWatcher(c *Client, handler func(context.Context, ConflictEvent), opts WatcherOptions) *Watcher {
	opts.setDefaults()
	return &Watcher{
		c:               c,
		handler:         handler,
		opts:            opts,
		log:             opts.Logger.With("component", "syncthing-watcher", "url", c.BaseURL()),
		warnedFolders:   map[string]bool{},
		unknownFolders:  map[string]time.Time{},
		unknownDevices:  map[string]time.Time{},
		lastDeliveredAt: map[string]string{},
	}
}

// Status returns a snapshot of the watcher's state. It is safe to call from
// any goroutine.
func (w *Watcher) Status() WatcherStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return WatcherStatus{
		Running:       w.running.Load(),
		Connected:     w.conn == connUp,
		LastError:     w.lastErr,
		LastErrorTime: w.lastErrTime,
		Since:         w.since[streamDisk],
		ItemSince:     w.since[streamItems],
		StartTime:     w.startTime,
		Restarts:      w.restarts,
		Delivered:     w.delivered,
	}
}

// Run watches until ctx is cancelled, then returns nil once every goroutine
// it started has ended. It returns an error only when misused (nil
// handler, or called while already running).
func (w *Watcher) Run(ctx context.Context) error {
	if w.handler == nil {
		return errors.New("syncthing watcher: nil handler")
	}
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("syncthing watcher: already running")
	}
	defer w.running.Store(false)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make(chan ConflictEvent)
	var wg sync.WaitGroup
	for s := range numStreams {
		wg.Go(func() { w.pollLoop(ctx, s, out) })
	}
	for {
		select {
		case <-ctx.Done():
			cancel()
			wg.Wait()
			return nil
		case ev := <-out:
			// The two streams are not ordered with respect to each
			// other, so report the copy's state on disk now rather than
			// what the event said at the time.
			if !w.settleAction(&ev) {
				continue
			}
			if w.shouldDeliver(ev) {
				w.handler(ctx, ev)
			}
		}
	}
}

// settleAction sets ev.Action from the disk: modified while the copy
// exists, deleted once it is gone. It reports false for something that is
// not a regular file. When the disk cannot be asked (permissions), the
// event's own action stands.
func (w *Watcher) settleAction(ev *ConflictEvent) bool {
	fi, err := os.Lstat(ev.Path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return false
	case err == nil:
		ev.Action = ActionModified
	case errors.Is(err, fs.ErrNotExist):
		ev.Action = ActionDeleted
	case ev.Action == "":
		ev.Action = ActionModified
	}
	return true
}

// shouldDeliver drops repeats: the same conflict copy shows up in several
// events (scan, index update, pull), but a caller wants one report per
// change of state.
func (w *Watcher) shouldDeliver(ev ConflictEvent) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lastDeliveredAt[ev.Path] == ev.Action {
		return false
	}
	if len(w.lastDeliveredAt) >= maxDedup {
		clear(w.lastDeliveredAt)
	}
	w.lastDeliveredAt[ev.Path] = ev.Action
	w.delivered++
	return true
}

// pollLoop follows one event stream until ctx ends.
func (w *Watcher) pollLoop(ctx context.Context, stream int, out chan<- ConflictEvent) {
	var (
		since     int
		epoch     = -1
		failures  int
		needCheck = true
		lastCheck time.Time
	)
	fail := func(asked time.Time, err error) {
		w.noteFailure(asked, err)
		needCheck = true
		w.sleep(ctx, w.backoff(failures))
		failures++
	}
	for ctx.Err() == nil {
		if needCheck || time.Since(lastCheck) >= w.opts.StatusInterval {
			asked := time.Now()
			if err := w.checkRestart(ctx); err != nil {
				if ctx.Err() == nil {
					fail(asked, err)
				}
				continue
			}
			needCheck, lastCheck = false, time.Now()
		}
		if e := w.currentEpoch(); e != epoch {
			epoch, since = e, 0
			w.setSince(stream, since)
		}

		asked := time.Now()
		evs, err := w.poll(ctx, stream, since)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			fail(asked, err)
			continue
		}
		w.noteSuccess(asked)
		failures = 0
		if len(evs) == 0 {
			// Nothing new within the poll timeout; a restart leaves a
			// stale since stuck here forever, so look.
			needCheck = true
			continue
		}
		if evs[0].ID <= since {
			// Ids went backwards: Syncthing restarted and has already
			// logged more events than we had seen.
			w.log.Debug("event ids went backwards", "stream", streamNames[stream], "since", since, "first", evs[0].ID)
			asked := time.Now()
			if err := w.checkRestart(ctx); err != nil {
				if ctx.Err() == nil {
					fail(asked, err)
				}
				continue
			}
			if e := w.currentEpoch(); e == epoch {
				since = 0 // same startTime yet reset ids: re-read anyway
				w.setSince(stream, since)
			}
			continue
		}
		for _, ev := range evs {
			asked := time.Now()
			cands, err := w.conflictsIn(ctx, ev)
			if err != nil {
				// The folder map could not be loaded: retry this event.
				if ctx.Err() == nil {
					fail(asked, err)
				}
				break
			}
			for _, c := range cands {
				select {
				case out <- c:
				case <-ctx.Done():
					return
				}
			}
			since = ev.ID
			w.setSince(stream, since)
		}
	}
}

func (w *Watcher) poll(ctx context.Context, stream, since int) ([]Event, error) {
	if stream == streamDisk {
		return w.c.DiskEvents(ctx, since, w.opts.PollTimeout)
	}
	return w.c.Events(ctx, since, itemEventTypes, w.opts.PollTimeout)
}

// checkRestart compares Syncthing's startTime with the one seen before and
// starts a new epoch (every stream back to since=0) when it changed.
func (w *Watcher) checkRestart(ctx context.Context) error {
	asked := time.Now()
	st, err := w.c.SystemStatus(ctx)
	if err != nil {
		return err
	}
	w.noteSuccess(asked)
	w.mu.Lock()
	defer w.mu.Unlock()
	// Both streams check; an answer overtaken by one asked for later
	// (from before a restart, or with a smaller uptime) would otherwise
	// look like a restart, and then its successor like another.
	if asked.Before(w.statusAsked) {
		return nil
	}
	w.statusAsked = asked
	w.tilde = st.Tilde
	// startTime has one-second resolution in some versions; an uptime
	// that went backwards catches a restart within the same second.
	restarted := !w.startTime.IsZero() &&
		(!st.StartTime.Equal(w.startTime) || st.Uptime < w.uptime)
	if restarted {
		w.log.Info("syncthing restarted; reading its events from the start",
			"previous_start", w.startTime, "start", st.StartTime)
		w.epoch++
		w.restarts++
		w.foldersStale = true
	}
	w.startTime, w.uptime = st.StartTime, st.Uptime
	return nil
}

func (w *Watcher) currentEpoch() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.epoch
}

func (w *Watcher) setSince(stream, since int) {
	w.mu.Lock()
	w.since[stream] = since
	w.mu.Unlock()
}

// noteFailure records err, the failure of a request made at asked, and
// logs the first failure of an outage. The failure of a request made
// before the connection was noted (another stream's, dialled while
// Syncthing was still down) belongs to the outage that has ended, and
// does not start another: if Syncthing is down again, the next request
// fails too.
func (w *Watcher) noteFailure(asked time.Time, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lastErr = err
	w.lastErrTime = time.Now()
	switch {
	case w.conn == connDown:
	case w.conn == connUp && asked.Before(w.upSince):
		w.log.Debug("failure of a request from before the reconnect", "err", err)
	default:
		w.conn = connDown
		w.downSince = time.Now()
		w.log.Warn("syncthing unreachable; retrying with backoff", "err", err)
	}
}

// noteSuccess logs the end of an outage (or the first contact), for an
// answer to a request made at asked. An answer to a request made before
// the outage was noted (another stream's, in flight while Syncthing went
// down) says nothing of now, and does not end it.
func (w *Watcher) noteSuccess(asked time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch w.conn {
	case connDown:
		if asked.Before(w.downSince) {
			return
		}
		w.log.Info("syncthing reachable again", "down_for", time.Since(w.downSince).Round(time.Millisecond))
	case connUnknown:
		w.log.Info("connected to syncthing")
	default:
		return
	}
	w.conn = connUp
	w.upSince = time.Now()
}

// backoff returns the wait before retry number n+1: MinBackoff doubled n
// times, capped at MaxBackoff, jittered (see internal/backoff).
func (w *Watcher) backoff(n int) time.Duration {
	return backoff.Delay(w.opts.MinBackoff, w.opts.MaxBackoff, n)
}

func (w *Watcher) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// conflictsIn extracts the conflict copies an event talks about. An error
// means the folder map was needed but could not be fetched.
func (w *Watcher) conflictsIn(ctx context.Context, ev Event) ([]ConflictEvent, error) {
	type item struct{ folder, path, action string }
	var items []item
	switch ev.Type {
	case EventLocalChangeDetected, EventRemoteChangeDetected:
		d, err := ev.DiskChange()
		if err != nil {
			w.log.Debug("skip malformed event", "err", err)
			return nil, nil
		}
		if d.Type == "dir" || d.Type == "symlink" {
			return nil, nil
		}
		action := ActionModified
		if d.Action == "deleted" {
			action = ActionDeleted
		}
		items = append(items, item{d.Folder, d.Path, action})
	case EventItemFinished:
		d, err := ev.ItemFinished()
		if err != nil {
			w.log.Debug("skip malformed event", "err", err)
			return nil, nil
		}
		if d.Error != nil || d.Type == "dir" || d.Type == "symlink" {
			return nil, nil
		}
		action := ActionModified
		if d.Action == "delete" {
			action = ActionDeleted
		}
		items = append(items, item{d.Folder, d.Item, action})
	case EventLocalIndexUpdated:
		d, err := ev.LocalIndexUpdated()
		if err != nil {
			w.log.Debug("skip malformed event", "err", err)
			return nil, nil
		}
		for _, name := range d.Filenames {
			// The event does not say whether a file was added or
			// deleted; settleAction asks the disk.
			items = append(items, item{d.Folder, name, ""})
		}
	default:
		return nil, nil
	}

	var out []ConflictEvent
	for _, it := range items {
		rel := filepath.FromSlash(it.path)
		cn, ok := hive.ParseConflictName(filepath.Base(rel))
		if !ok {
			continue
		}
		root, label, ok, err := w.folderRoot(ctx, it.folder)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		abs := filepath.Join(root, rel)
		ce := ConflictEvent{
			Path:        abs,
			Original:    filepath.Join(filepath.Dir(abs), cn.Original),
			FolderID:    it.folder,
			FolderLabel: label,
			RelPath:     rel,
			Name:        cn,
			Action:      it.action, // settled against the disk before delivery
			Source:      ev.Type,
			Time:        ev.Time,
		}
		ce.Winner, ce.WinnerKnown = w.device(ctx, cn.ShortDevice)
		out = append(out, ce)
	}
	return out, nil
}

// folderRoot returns the absolute root of folder id, refreshing the folder
// map when the id is unknown or Syncthing restarted. ok is false for a
// folder Syncthing does not (or no longer) know.
func (w *Watcher) folderRoot(ctx context.Context, id string) (root, label string, ok bool, err error) {
	w.mu.Lock()
	f, known := w.folders[id]
	stale := w.foldersStale || w.folders == nil
	tilde := w.tilde
	w.mu.Unlock()
	if known && !stale {
		return f.AbsPath(tilde), f.Label, true, nil
	}

	w.refreshMu.Lock()
	defer w.refreshMu.Unlock()
	w.mu.Lock()
	f, known = w.folders[id]
	stale = w.foldersStale || w.folders == nil
	// An id is looked up afresh the first time it is unknown, then at
	// most once per RefreshInterval, so a stream of events for a removed
	// folder does not hammer the API.
	recent := time.Since(w.unknownFolders[id]) < w.opts.RefreshInterval
	w.mu.Unlock()
	if stale || (!known && !recent) {
		folders, err := w.c.Folders(ctx)
		if err != nil {
			return "", "", false, fmt.Errorf("refresh folder map: %w", err)
		}
		w.mu.Lock()
		w.folders, w.foldersStale = folders, false
		f, known = folders[id]
		if !known {
			w.unknownFolders[id] = time.Now()
		}
		w.mu.Unlock()
		w.log.Debug("refreshed folder map", "folders", len(folders))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !known {
		if !w.warnedFolders[id] {
			w.warnedFolders[id] = true
			w.log.Warn("conflict copy in a folder syncthing does not list; ignoring it", "folder", id)
		}
		return "", "", false, nil
	}
	return f.AbsPath(w.tilde), f.Label, true, nil
}

// device resolves a short device id, refreshing the device map (at most
// once per RefreshInterval) when it is unknown. Failures only mean the
// winner stays unknown.
func (w *Watcher) device(ctx context.Context, short string) (Device, bool) {
	if short == "" {
		return Device{}, false
	}
	w.mu.Lock()
	d, ok := DeviceByShort(w.devices, short)
	w.mu.Unlock()
	if ok {
		return d, true
	}
	w.refreshMu.Lock()
	defer w.refreshMu.Unlock()
	w.mu.Lock()
	d, ok = DeviceByShort(w.devices, short)
	recent := time.Since(w.unknownDevices[short]) < w.opts.RefreshInterval
	w.mu.Unlock()
	if ok || recent {
		return d, ok
	}
	devices, err := w.c.Devices(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.unknownDevices[short] = time.Now()
		w.log.Debug("refresh device map", "err", err)
		return Device{}, false
	}
	w.devices = devices
	d, ok = DeviceByShort(devices, short)
	if !ok {
		w.unknownDevices[short] = time.Now()
	}
	return d, ok
}
