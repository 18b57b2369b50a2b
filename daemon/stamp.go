package daemon

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/mine"
)

// An agentStamp is what stat says of every directory and memory file a
// mine of one agent directory walks, taken when a check found its wing
// up to date. While every stat is the same, nothing a mine reads has
// changed: a file written changes its mtime and ctime (or size), a file
// added, removed or renamed changes its directory's, a directory
// replaced or a link re-pointed changes the inode found at the path. So
// the mine loop's tick, the safety net for what fsnotify misses, stats
// these paths alone instead of walking the directory, resolving its
// links and asking mine for the change check (a tick over 100 agents
// cost about 36 ms of CPU that way, nearly all of it when idle).
//
// A stamp whose times are not settled (mine.Settled) when taken is not
// kept: on a filesystem with coarse timestamps a later write in the same
// tick of its clock could leave every stat the same.
type agentStamp struct {
	paths []string
	keys  []statKey
}

// statKey is the part of a stat that any change to a file or directory
// moves.
type statKey struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds
	mode         uint32
}

// takeStamp stats the agent directory at path (as listed: links
// followed) and, below resolved (its real path), every non-hidden
// directory and every memory file, as mine's walk visits them. It
// returns nil when a stat fails or a time is not settled at now.
func takeStamp(path, resolved string, now time.Time) *agentStamp {
	skip := func(name string) bool { return hive.IsHidden(name) }
	return stampTree(path, resolved, now, skip, false)
}

// takeHiveStamp stats the hive directory at path (links followed) and,
// below its real path, every directory a scan of the hive enters (hidden
// ones too: the conflict scan walks them) and every memory file. While it
// holds, nothing the tick's scan reads has changed: no agent directory
// came or went, no stamp of one broke, no conflict copy appeared or left.
// It returns nil when a stat fails, a time is not settled at now, or the
// hive holds a symlink other than a memory file: a link may lead to an
// agent directory elsewhere, whose changes no stat here sees (those
// hives keep a stamp per agent directory).
func takeHiveStamp(path string, now time.Time) *agentStamp {
	return stampTree(path, resolve(path), now, hive.IsSyncthingDir, true)
}

// stampTree stats path and, below root, every directory whose name skip
// does not refuse and every memory file. With noLinks, any other symlink
// found makes it return nil, as a failed or unsettled stat does.
func stampTree(path, root string, now time.Time, skip func(name string) bool, noLinks bool) *agentStamp {
	s := &agentStamp{}
	if !s.add(path, now) {
		return nil
	}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir():
			if p != root && skip(e.Name()) {
				return fs.SkipDir
			}
		case !hive.IsMemoryFile(e.Name()):
			if noLinks && e.Type()&fs.ModeSymlink != 0 {
				return errLink
			}
			return nil
		}
		if !s.add(p, now) {
			return errUnsettled
		}
		return nil
	})
	if err != nil {
		return nil
	}
	return s
}

// errUnsettled and errLink end stampTree's walk.
var (
	errUnsettled = errors.New("not settled")
	errLink      = errors.New("a symlink")
)

// add records the stat of path, reporting whether it could be taken and
// is settled at now.
func (s *agentStamp) add(path string, now time.Time) bool {
	k, ok := statOf(path)
	if !ok || !mine.Settled(time.Unix(0, k.mtime), now) || !mine.Settled(time.Unix(0, k.ctime), now) {
		return false
	}
	s.paths = append(s.paths, path)
	s.keys = append(s.keys, k)
	return true
}

// holds reports whether every path still stats as it did.
func (s *agentStamp) holds() bool {
	for i, p := range s.paths {
		if k, ok := statOf(p); !ok || k != s.keys[i] {
			return false
		}
	}
	return true
}

// keepStamp keeps stamp as agent directory dir's (listed path; resolved is
// its real path) when the check made with it found nothing to do (ok),
// and no file of it fails: a failing file is retried when its backoff
// ends, unchanged or not, so its agent must be checked at every tick.
func (d *Daemon) keepStamp(dir, resolved string, stamp *agentStamp, ok bool) {
	if !ok || stamp == nil || d.failingBelow(resolved) || d.failingBelow(dir) {
		delete(d.stamps, dir)
		return
	}
	if d.stamps == nil {
		d.stamps = map[string]*agentStamp{}
	}
	d.stamps[dir] = stamp
}

// failingBelow reports whether the failure table holds dir or a path
// below it.
func (d *Daemon) failingBelow(dir string) bool {
	if d.failures.len() == 0 {
		return false
	}
	prefix := dir + string(filepath.Separator)
	for _, f := range d.failures.errors() {
		if f.Path == dir || strings.HasPrefix(f.Path, prefix) {
			return true
		}
	}
	return false
}

// keepHiveStamp keeps stamp as the hive's when the scan made with it
// found the whole hive up to date: listed without error or skipped
// directory, every agent directory stamped (so nothing queued), nothing
// failing or waiting for re-embedding. Anything else is looked at again
// at the next tick.
func (d *Daemon) keepHiveStamp(stamp *agentStamp, hs hiveState, stale map[string]bool) {
	d.hiveStamp = nil
	if stamp == nil || hs.err != nil || len(hs.bad) > 0 || hs.noAgents || len(stale) > 0 ||
		d.failures.len() > 0 || d.reembedFailures.len() > 0 {
		return
	}
	for _, a := range hs.agents {
		if d.stamps[a.dir] == nil {
			return
		}
	}
	d.hiveStamp = stamp
}

// pruneStamps drops the stamps of directories that are no longer agents.
func (d *Daemon) pruneStamps(agents []agentDir) {
	if len(d.stamps) <= len(agents) {
		return
	}
	listed := make(map[string]bool, len(agents))
	for _, a := range agents {
		listed[a.dir] = true
	}
	for dir := range d.stamps {
		if !listed[dir] {
			delete(d.stamps, dir)
		}
	}
}

// forgetStamps drops the stamps work may make stale: a mine of one
// agent directory its own and the hive's, any other change of the palace
// (a mine through the socket may mine any directory into any wing, a
// call may remove a wing) every one, so the next scan checks them with
// mine.
func (d *Daemon) forgetStamps(w work) {
	switch {
	case w.scan != "":
	case w.agent != "":
		delete(d.stamps, w.agent)
		d.hiveStamp = nil
	default:
		d.stamps, d.hiveStamp = nil, nil
	}
}

// stampTime is when a scan that began at now takes its stamps.
func (d *Daemon) stampTime(now time.Time) time.Time {
	if d.testStampClock != nil {
		return d.testStampClock()
	}
	return now
}
