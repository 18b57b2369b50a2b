package mine

import (
	"context"
	"slices"
	"sync"

	"github.com/memminer/memminer/palace"
)

// Plan is a mine's wings and their files, listed before the palace is
// opened, so that the palace need not load the wings none of whose files
// changed: pass Unchanged as palace.Options.Unchanged, then MinePlan.
type Plan struct {
	path    string
	opts    Options
	jobs    []job
	skipped []Problem
	err     error

	mu sync.Mutex
	// kept are the notes of each wing Unchanged reported unchanged.
	kept map[string]int
}

// NewPlan lists what a mine of path with opts reads. An error listing
// it is MinePlan's to return.
func NewPlan(path string, opts Options) *Plan {
	pl := &Plan{path: path, opts: opts, kept: map[string]int{}}
	pl.jobs, pl.skipped, pl.err = planJobs(path, opts)
	for i := range pl.jobs {
		pl.jobs[i].files, pl.jobs[i].problems = collect(pl.jobs[i])
	}
	return pl
}

// Unchanged reports whether the mine leaves wing id, of which the
// manifest says w, as it is: the mine's one job of the wing lists exactly
// the wing's files, from its one root, and every one is unchanged by the
// check mineFile makes first. A dry run loads every wing.
func (pl *Plan) Unchanged(id string, w palace.ManifestWing) bool {
	if pl.err != nil || pl.opts.DryRun {
		return false
	}
	i := slices.IndexFunc(pl.jobs, func(j job) bool { return j.wing == id })
	if i < 0 || slices.ContainsFunc(pl.jobs[i+1:], func(j job) bool { return j.wing == id }) {
		return false
	}
	j := pl.jobs[i]
	if len(j.problems) > 0 || !slices.Equal(w.Roots, []string{j.root}) || len(w.Sources) != len(j.files) {
		return false
	}
	notes := 0
	for k, f := range j.files {
		src := w.Sources[k]
		if src.Path != f.path || !currentRules(src.Source, false) || !unchangedStat(src.Source, f.info.ModTime().UTC(), f.info.Size()) {
			return false
		}
		notes += src.Notes
	}
	pl.mu.Lock()
	pl.kept[id] = notes
	pl.mu.Unlock()
	return true
}

// keptSummary is what mineOne reports of job j, whose wing the palace
// left unloaded as unchanged: every file seen and unchanged.
func (pl *Plan) keptSummary(j job, opts Options) Summary {
	pl.mu.Lock()
	notes := pl.kept[j.wing]
	pl.mu.Unlock()
	s := Summary{Wings: []string{j.wing}, DryRun: opts.DryRun, FilesSeen: len(j.files), FilesUnchanged: len(j.files), NotesUnchanged: notes}
	if opts.Progress != nil {
		for i := range j.files {
			opts.Progress(i+1, len(j.files))
		}
	}
	return s
}

// MinePlan is Mine of the plan's path, into a palace opened with the
// plan's Unchanged (or without).
func MinePlan(ctx context.Context, p *palace.Palace, pl *Plan) (Summary, error) {
	return mine(ctx, p, pl.path, pl.opts, pl)
}
