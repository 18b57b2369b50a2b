package daemon

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/memminer/memminer/hive"
)

// watcher turns fsnotify events into debounced agent mines. Whatever it
// misses (overflow, watch limits, network filesystems) the mine loop finds.
//
// It watches the hive, every directory in which agent directories can
// appear (agents/, and what the leading elements of the agents globs
// match), and every agent directory's tree, all by their paths below the
// hive as configured, so an event's path relative to the hive says what
// it concerns.
type watcher struct {
	to       watchTarget
	log      *slog.Logger
	fw       *fsnotify.Watcher
	events   <-chan fsnotify.Event // fw.Events, or in tests a channel fed from it
	hive     *hive.Hive
	debounce time.Duration
	// quiet is how long an overflow warning silences the next one: the
	// mine interval, since each overflow only moves a scan forward.
	quiet time.Duration
	// drop and errs are the test hooks of Options.dropEvents and
	// Daemon.testErrs.
	drop  bool
	errs  <-chan error
	due   map[string]time.Time // agent directory → when to mine it
	first map[string]time.Time // agent directory → its first unmined change
	// skillsDue is when to tell of changes in the hive's skills, and
	// skillsFirst the first change not told yet; zero when none waits.
	skillsDue, skillsFirst time.Time
	timer                  *time.Timer
	// lastOverflow rate-limits the overflow warning (readErrors' own).
	lastOverflow time.Time
}

// watchTarget is what the watcher tells the daemon; the daemon
// implements it.
type watchTarget interface {
	// watchDegraded notes that fsnotify no longer covers everything.
	watchDegraded(reason string)
	// watchError counts one fsnotify error.
	watchError()
	// rescan asks for a scan of the whole hive.
	rescan(trigger string)
	// agentDirsChanged notes that agent directories, or directories in
	// which they appear, came or went; with refresh, the hive is listed
	// again at once, so status shows a directory that is no agent.
	agentDirsChanged(refresh bool)
	// setDebouncing marks an agent directory as waiting out its debounce
	// window, or no longer.
	setDebouncing(dir string, on bool)
	// agentChanged queues a mine of an agent directory whose debounce
	// window has passed.
	agentChanged(dir string)
	// skillsChanged tells that the hive's skills (HIVE/skills) changed
	// and their debounce window has passed.
	skillsChanged()
}

// newWatcher watches h and tells to what it sees (see watcher).
func newWatcher(h *hive.Hive, to watchTarget, log *slog.Logger, debounce, quiet time.Duration) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{
		to:       to,
		log:      log,
		fw:       fw,
		events:   fw.Events,
		hive:     h,
		debounce: debounce,
		quiet:    quiet,
		due:      map[string]time.Time{},
		first:    map[string]time.Time{},
		timer:    time.NewTimer(time.Hour),
	}
	w.timer.Stop()
	w.addHive()
	return w, nil
}

// addHive watches the hive, the directories in which agent directories
// can appear, every agent directory's tree and the skills' tree (again:
// adding a watch twice is harmless).
func (w *watcher) addHive() {
	w.add(w.hive.Dir())
	w.addTree(filepath.Join(w.hive.Dir(), hive.SkillsDir))
	parents, _ := w.hive.Parents()
	for _, p := range parents {
		w.add(p.Path)
	}
	// Only agents: a link leading out of the hive, say to /usr, is no
	// agent and must not cost a watch per directory there.
	agents, _, _ := w.hive.Agents()
	for _, a := range agents {
		w.addTree(a.Path)
	}
}

// unwatchBelow drops the watches of dir and of every directory below it.
// inotify keeps watching a directory that was moved, under its old path
// as far as fsnotify knows: after `mv teams/blue teams/red` events in
// teams/red would arrive as teams/blue's, and watching teams/red again
// returns that same stale watch. Dropping them first makes addHive watch
// the new paths.
func (w *watcher) unwatchBelow(dir string) {
	prefix := dir + string(filepath.Separator)
	for _, p := range w.fw.WatchList() {
		if p == dir || strings.HasPrefix(p, prefix) {
			_ = w.fw.Remove(p)
		}
	}
}

// add watches one directory. Failing to is not fatal: the mine loop still
// covers the directory.
func (w *watcher) add(dir string) {
	if err := w.fw.Add(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return // removed meanwhile
		}
		w.to.watchDegraded("cannot watch " + dir + ": " + watchErrHint(err))
	}
}

// addTree watches dir and every non-hidden directory below it. dir itself
// may be a symlink to a directory (an agent directory may be one).
func (w *watcher) addTree(dir string) {
	root := dir + string(filepath.Separator) // followed when a symlink
	_ = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return nil
		}
		if path != root && hive.IsHidden(e.Name()) {
			return fs.SkipDir
		}
		w.add(filepath.Clean(path))
		return nil
	})
}

// watchErrHint explains the usual reasons a watch cannot be added.
func watchErrHint(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "no space left on device"):
		return msg + " (the inotify watch limit, sysctl fs.inotify.max_user_watches, is reached)"
	case strings.Contains(msg, "too many open files"):
		return msg + " (the inotify instance limit, sysctl fs.inotify.max_user_instances, is reached)"
	}
	return msg
}

// run handles events until ctx ends, then closes the fsnotify watcher.
//
// fsnotify's errors are read by a goroutine of their own, which calls no
// method of the fsnotify watcher: its inotify backend sends some errors
// (a moved directory's watch that the kernel already dropped) while
// holding the lock that Add, Remove, WatchList and Close take. Were they
// read here, between calls to those methods, the watcher and this loop
// would each wait for the other, and the daemon could never stop.
func (w *watcher) run(ctx context.Context) {
	errsDone := make(chan struct{})
	go func() {
		defer close(errsDone)
		w.readErrors()
	}()
	defer func() {
		w.timer.Stop()
		w.fw.Close() // ends readErrors: fsnotify closes Errors
		<-errsDone
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.events:
			if !ok {
				w.to.watchDegraded("fsnotify stopped")
				return
			}
			if w.drop {
				continue
			}
			w.handle(ev, time.Now())
		case now := <-w.timer.C:
			w.fire(now)
		}
	}
}

// readErrors handles fsnotify's errors, and the test hook's, until
// fsnotify closes its Errors channel (see run).
func (w *watcher) readErrors() {
	for {
		select {
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.handleErr(err)
		case err := <-w.errs:
			w.handleErr(err)
		}
	}
}

// handleErr counts an fsnotify error and rescans the hive. Only
// readErrors calls it.
func (w *watcher) handleErr(err error) {
	w.to.watchError()
	switch {
	case errors.Is(err, fsnotify.ErrEventOverflow):
		// Events were lost: a scan finds whatever they were about.
		if time.Since(w.lastOverflow) > w.quiet {
			w.log.Warn("fsnotify queue overflowed; rescanning the hive", "hive", w.hive.Dir())
		}
		w.lastOverflow = time.Now()
	case errors.Is(err, syscall.EINVAL):
		// inotify_rm_watch of a directory moved away and removed before
		// fsnotify saw the move: the kernel had dropped the watch already.
		w.log.Debug("fsnotify could not drop the watch of a directory moved and removed meanwhile; rescanning the hive", "err", err)
	default:
		w.log.Warn("fsnotify error; rescanning the hive", "err", err)
	}
	w.to.rescan(triggerOverflow)
}

// handle maps one event to the agent directory it concerns.
func (w *watcher) handle(ev fsnotify.Event, now time.Time) {
	if ev.Op == fsnotify.Chmod {
		return
	}
	path := filepath.Clean(ev.Name)
	rel, err := filepath.Rel(w.hive.Dir(), path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return
	}
	rel = filepath.ToSlash(rel)
	gone := ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	if gone {
		w.unwatchBelow(path)
	}
	if rel == hive.SkillsDir || strings.HasPrefix(rel, hive.SkillsDir+"/") {
		w.skillsTouched(path, ev, now)
		return
	}
	if w.hive.Globs().Parent(rel) && (gone || isDirectory(path)) {
		// A directory in which agent directories appear (agents/, say)
		// came, went or was replaced.
		w.to.agentDirsChanged(false)
		w.addHive()
		w.to.rescan(triggerWatch)
	}
	agentRel, below, ok := w.hive.Globs().AgentOf(rel)
	if !ok {
		return
	}
	agentPath := filepath.Join(w.hive.Dir(), filepath.FromSlash(agentRel))
	_, badName := hive.NormalizeWingID(filepath.Base(agentPath))
	if below == "" {
		// A directory with a bad name is never mined: when it comes, goes
		// or is renamed, status and the log learn of it now, not at the
		// next tick.
		w.to.agentDirsChanged(badName != nil)
	}
	if badName != nil {
		return
	}
	below = filepath.FromSlash(below)
	dir := hive.ResolveParent(agentPath) // as listAgents keys it (Match.Canonical)
	base := filepath.Base(path)
	isDir := ev.Has(fsnotify.Create) && isDirectory(path)
	if isDir && !hive.IsHidden(base) {
		// Files written before the watch existed are found by the mine
		// this change schedules.
		w.addTree(path)
	}
	switch {
	case below == "":
		// The agent directory itself came or went.
		w.touch(dir, now)
	case hive.IsHiddenPath(below):
	case isDir, hive.IsMemoryFile(base):
		w.touch(dir, now)
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		// Perhaps a directory of markdown moved away.
		if filepath.Ext(base) == "" {
			w.touch(dir, now)
		}
	}
}

// skillsTouched (re)starts the debounce window of the hive's skills, and
// watches a directory that came among them.
func (w *watcher) skillsTouched(path string, ev fsnotify.Event, now time.Time) {
	if ev.Has(fsnotify.Create) && isDirectory(path) {
		w.addTree(path)
	}
	if w.skillsFirst.IsZero() {
		w.skillsFirst = now
	}
	w.skillsDue = now.Add(w.debounce)
	if limit := w.skillsFirst.Add(maxDebounceFactor * w.debounce); w.skillsDue.After(limit) {
		w.skillsDue = limit
	}
	w.reset(now)
}

// isDirectory reports whether path is a directory, or a symlink to one.
func isDirectory(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// touch (re)starts the debounce window of an agent directory.
func (w *watcher) touch(dir string, now time.Time) {
	first, ok := w.first[dir]
	if !ok {
		first = now
		w.first[dir] = now
		w.to.setDebouncing(dir, true)
	}
	due := now.Add(w.debounce)
	if limit := first.Add(maxDebounceFactor * w.debounce); due.After(limit) {
		due = limit
	}
	w.due[dir] = due
	w.reset(now)
}

// reset arms the timer for the earliest due agent.
func (w *watcher) reset(now time.Time) {
	next := w.skillsDue
	for _, due := range w.due {
		if next.IsZero() || due.Before(next) {
			next = due
		}
	}
	w.timer.Stop()
	if !next.IsZero() {
		w.timer.Reset(max(next.Sub(now), 0))
	}
}

// fire queues every agent whose debounce window has passed.
func (w *watcher) fire(now time.Time) {
	for dir, due := range w.due {
		if due.After(now) {
			continue
		}
		delete(w.due, dir)
		delete(w.first, dir)
		w.to.agentChanged(dir)
		w.to.setDebouncing(dir, false)
	}
	if !w.skillsDue.IsZero() && !w.skillsDue.After(now) {
		w.skillsDue, w.skillsFirst = time.Time{}, time.Time{}
		w.to.skillsChanged()
	}
	w.reset(now)
}

// The daemon's side of watchTarget.

func (d *Daemon) watchDegraded(reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	state := "degraded: " + reason
	if d.watchState != state {
		d.log.Warn("file watching degraded; changes are still found by the mine loop", "reason", reason, "mine_interval", d.opts.MineInterval)
		d.watchState = state
	}
}

func (d *Daemon) watchError() { d.metrics.watchErrors.inc() }

func (d *Daemon) rescan(trigger string) { d.q.requestScan(trigger) }

// agentDirsChanged makes the last listing of the hive stale (see isAgent).
func (d *Daemon) agentDirsChanged(refresh bool) {
	d.dirChanges.Add(1)
	if refresh {
		d.refreshAgents()
	}
}

func (d *Daemon) setDebouncing(dir string, on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if on {
		d.debouncing[dir] = true
	} else {
		delete(d.debouncing, dir)
	}
}

func (d *Daemon) agentChanged(dir string) { d.q.addAgent(dir, triggerWatch) }

// skillsChanged tells every SkillsListener (signalComponents).
func (d *Daemon) skillsChanged() { d.signalComponents(skillsSignal) }
