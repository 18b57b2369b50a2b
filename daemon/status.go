package daemon

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/inproc"
)

// Status reports the palace and the daemon's state, and asks Syncthing
// how the hive's folder stands. Like status without
// a daemon it asks a remote embedding backend to answer a probe, since
// "available" means usable now: the server may have gone away since the
// daemon started. A model in the process that loaded stays usable.
func (d *Daemon) Status(ctx context.Context) api.Status {
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
	// What the daemon has left to do is read before what its work
	// changes (the palace, the mines' records), so a status that says
	// idle shows that work done.
	act := d.activity()
	st := inproc.BuildStatus(d.p, d.opts.ModelSpec, modelErr, true, d.opts.Domains)
	st.Active = true
	st.Syncthing = HiveReplication(ctx, d.opts.Syncthing, d.opts.Hive)
	if d.opts.Syncthing == nil && d.opts.SyncthingOff != "" {
		st.Syncthing = api.ReplicationOff(d.opts.SyncthingOff)
	}
	st.ConflictsOpen = d.conflictsOpen(ctx)
	components := d.componentStatus()
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range st.Wings {
		if lm, ok := d.lastMine[st.Wings[i].ID]; ok {
			st.Wings[i].LastMine = &lm
		}
	}
	info := act.info()
	info.PID = os.Getpid()
	info.Started = d.started.UTC()
	info.UptimeSeconds = now.Sub(d.started).Seconds()
	info.Hive = d.opts.Hive
	info.MineInterval = d.opts.MineInterval.String()
	info.Watch = d.watchState
	info.Mines = d.mines
	info.Errors = []api.FileError{}
	info.Metrics = optional(d.MetricsAddr())
	info.Activity = d.metrics.activity(now)
	info.Components = components
	info.FirstMine = d.firstMineProgress(now)
	if d.hiveErr != "" {
		info.Errors = append(info.Errors, api.FileError{Path: d.opts.Hive, Error: d.hiveErr})
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

// activity is how far the daemon got and what it has left to do.
type activity struct {
	scans    int64
	lastScan time.Time
	// debouncing are agent directories in their debounce window, queued
	// those waiting to be mined; a directory may be in both.
	debouncing, queued []string
	reembeds           []string // wings waiting to be re-embedded
	requests           int      // socket requests waiting
	working            string   // what the worker does now; "" when nothing
}

// agents lists the agent directories waiting, in their debounce window or
// queued, sorted, each once.
func (a activity) agents() []string {
	return slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(a.debouncing), a.queued...))))
}

// info is the api.DaemonInfo of a status with the scans, the current work and
// the pending work of a.
func (a activity) info() *api.DaemonInfo {
	wings := map[string]bool{}
	for _, dir := range a.agents() {
		if w, err := palace.NormalizeWingID(filepath.Base(dir)); err == nil {
			wings[w] = true
		}
	}
	for _, w := range a.reembeds {
		wings[w] = true
	}
	return &api.DaemonInfo{
		LastScan: a.lastScan.UTC(),
		Scans:    a.scans,
		Working:  optional(a.working),
		Pending:  api.Pending{Wings: sortedKeys(wings), Requests: a.requests},
	}
}

// activity reads the daemon's progress and to-do list without missing
// work on its way: an agent's change leaves its debounce window only once
// it is queued, queued work leaves the queue as the worker's current work,
// and a scan queues what it found before it is counted. So the scan count
// and the debounce windows are read first, then the queue; one that shows
// nothing to do after N scans means everything those scans found is done,
// and what is read after it (the palace, the mines' records) shows it.
func (d *Daemon) activity() activity {
	var a activity
	d.mu.Lock()
	a.scans, a.lastScan = d.scans, d.lastScan
	for dir := range d.debouncing {
		a.debouncing = append(a.debouncing, dir)
	}
	d.mu.Unlock()
	if d.testActivityGap != nil {
		d.testActivityGap()
	}
	a.queued, a.requests, a.working = d.q.pending()
	a.reembeds = d.q.pendingReembeds()
	return a
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// optional is s for a JSON key that is null when s is empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
