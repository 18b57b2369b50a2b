package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/service/api"
)

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
	api.FileError
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
		b := badAgent{FileError: api.FileError{Path: s.Canonical, Error: s.Err.Error()}}
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
		d.noAgents = &api.FileError{Path: d.opts.Hive, Error: status, Failures: 1, Since: now.UTC(), Last: now.UTC()}
	case !hs.noAgents && d.noAgents != nil:
		d.log.Info("the hive's agents/ directory appeared", "hive", d.opts.Hive)
		d.noAgents = nil
	}
	was := map[string]api.FileError{}
	for _, b := range d.badAgents {
		was[b.Path] = b
	}
	bad := make([]api.FileError, len(hs.bad))
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
