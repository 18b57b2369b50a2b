package daemon

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/palace"
)

// Status reports the palace and the daemon's state, and asks Syncthing
// how the hive's folder stands. Like status without
// a daemon it asks a remote embedding backend to answer a probe, since
// "available" means usable now: the server may have gone away since the
// daemon started. A model in the process that loaded stays usable.
func (d *Daemon) Status(ctx context.Context) Status {
	modelErr := d.opts.ModelError
	if modelErr == "" && d.opts.Embedder != nil && embed.Remote(d.opts.ModelSpec) {
		prober := d.opts.Prober
		if prober == nil {
			prober = d.opts.Embedder
		}
		if err := embed.Probe(ctx, prober, embed.ProbeTimeout); err != nil {
			modelErr = err.Error()
		}
	}
	st := BuildStatus(d.p, d.opts.ModelSpec, modelErr, true)
	st.Active = true
	st.Syncthing = HiveReplication(ctx, d.opts.Syncthing, d.opts.Hive)
	if d.opts.Syncthing == nil && d.opts.SyncthingOff != "" {
		st.Syncthing = ReplicationOff(d.opts.SyncthingOff)
	}
	st.ConflictsOpen = d.conflictsOpen(ctx)
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
		Working:       optional(working),
		Pending:       Pending{Wings: sortedKeys(pendingWings), Requests: reqs},
		Errors:        []FileError{},
		Metrics:       optional(d.MetricsAddr()),
		Components:    components,
	}
	if d.hiveErr != "" {
		info.Errors = append(info.Errors, FileError{Path: d.opts.Hive, Error: d.hiveErr})
	}
	if d.noAgents != nil {
		info.Errors = append(info.Errors, *d.noAgents)
	}
	info.Errors = append(info.Errors, d.badAgents...)
	info.Errors = append(info.Errors, d.failures.errors()...)
	info.Errors = append(info.Errors, d.reembedFailures.errors()...)
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
		ModelError:  optional(modelErr),
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

// optional is s for a JSON key that is null when s is empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
