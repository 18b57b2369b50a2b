package daemon

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
)

// watcher turns fsnotify events into debounced agent mines. Whatever it
// misses (overflow, watch limits, network filesystems) the mine loop finds.
type watcher struct {
	d        *Daemon
	fw       *fsnotify.Watcher
	hive     string
	agents   string // the hive's agents directory, symlinks resolved
	debounce time.Duration
	due      map[string]time.Time // agent directory → when to mine it
	first    map[string]time.Time // agent directory → its first unmined change
	timer    *time.Timer
	// lastOverflow rate-limits the overflow warning.
	lastOverflow time.Time
}

func newWatcher(d *Daemon) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &watcher{
		d:        d,
		fw:       fw,
		hive:     d.opts.Hive,
		agents:   d.agentsRoot(),
		debounce: d.opts.Debounce,
		due:      map[string]time.Time{},
		first:    map[string]time.Time{},
		timer:    time.NewTimer(time.Hour),
	}
	w.timer.Stop()
	w.add(w.hive)
	w.addTree(w.agents)
	return w, nil
}

// add watches one directory. Failing to is not fatal: the mine loop still
// covers the directory.
func (w *watcher) add(dir string) {
	if err := w.fw.Add(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return // removed meanwhile
		}
		w.d.degrade("cannot watch " + dir + ": " + watchErrHint(err))
	}
}

// addTree watches dir and every non-hidden directory below it.
func (w *watcher) addTree(dir string) {
	_ = filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if !e.IsDir() {
			// An agent directory may be a symlink to a directory.
			if e.Type()&fs.ModeSymlink != 0 && filepath.Dir(path) == w.agents {
				if info, err := os.Stat(path); err == nil && info.IsDir() {
					w.addTree(path + string(filepath.Separator))
				}
			}
			return nil
		}
		if path != dir && strings.HasPrefix(e.Name(), ".") {
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

func (w *watcher) run(ctx context.Context) {
	defer w.fw.Close()
	defer w.timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				w.d.degrade("fsnotify stopped")
				return
			}
			if w.d.opts.dropEvents {
				continue
			}
			w.handle(ev, time.Now())
		case err, ok := <-w.fw.Errors:
			if !ok {
				w.d.degrade("fsnotify stopped")
				return
			}
			w.handleErr(err)
		case err := <-w.d.testErrs:
			w.handleErr(err)
		case now := <-w.timer.C:
			w.fire(now)
		}
	}
}

func (w *watcher) handleErr(err error) {
	w.d.metrics.watchErrors.Inc()
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		// Events were lost: a scan finds whatever they were about.
		if time.Since(w.lastOverflow) > w.d.opts.MineInterval {
			w.d.log.Warn("fsnotify queue overflowed; rescanning the hive", "hive", w.hive)
		}
		w.lastOverflow = time.Now()
	} else {
		w.d.log.Warn("fsnotify error; rescanning the hive", "err", err)
	}
	w.d.q.requestScan(triggerOverflow)
}

// handle maps one event to the agent directory it concerns.
func (w *watcher) handle(ev fsnotify.Event, now time.Time) {
	if ev.Op == fsnotify.Chmod {
		return
	}
	path := filepath.Clean(ev.Name)
	if path == filepath.Join(w.hive, "agents") || path == w.agents {
		// The agents directory appeared, vanished or was replaced.
		w.agents = w.d.agentsRoot()
		w.addTree(w.agents)
		w.d.q.requestScan(triggerWatch)
		return
	}
	rel, err := filepath.Rel(w.agents, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return
	}
	agent, below, _ := strings.Cut(rel, string(filepath.Separator))
	if strings.HasPrefix(agent, ".") {
		return
	}
	if _, err := palace.NormalizeWingID(agent); err != nil {
		// Never mined; when the directory itself comes, goes or is
		// renamed, status and the log learn of it now, not at the next
		// tick.
		if below == "" {
			w.d.refreshAgents()
		}
		return
	}
	dir := filepath.Join(w.agents, agent)
	base := filepath.Base(path)
	isDir := false
	if ev.Has(fsnotify.Create) {
		if info, err := os.Stat(path); err == nil && info.IsDir() {
			isDir = true
			if !strings.HasPrefix(base, ".") {
				// Files written before the watch existed are found by the
				// mine this change schedules.
				w.addTree(path)
			}
		}
	}
	switch {
	case below == "":
		// The agent directory itself came or went.
		w.touch(dir, now)
	case hiddenPath(below):
	case isDir, mine.Minable(base):
		w.touch(dir, now)
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		// Perhaps a directory of markdown moved away.
		if filepath.Ext(base) == "" {
			w.touch(dir, now)
		}
	}
}

// hiddenPath reports whether a path relative to an agent directory passes
// through a hidden directory or names a hidden file.
func hiddenPath(rel string) bool {
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if strings.HasPrefix(part, ".") {
			return true
		}
	}
	return false
}

// touch (re)starts the debounce window of an agent directory.
func (w *watcher) touch(dir string, now time.Time) {
	first, ok := w.first[dir]
	if !ok {
		first = now
		w.first[dir] = now
		w.d.setDebouncing(dir, true)
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
	var next time.Time
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
		w.d.q.addAgent(dir, triggerWatch)
		w.d.setDebouncing(dir, false)
	}
	w.reset(now)
}
