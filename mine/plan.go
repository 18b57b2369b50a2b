package mine

import (
	"context"
	"slices"
	"sync"

	"github.com/memminer/memminer/palace"
)

// Plan is a mine's wings and their files, so that the palace need not
// load the wings none of whose files changed: pass Unchanged as
// palace.Options.Unchanged, then MinePlan.
type Plan struct {
	path string
	opts Options

	// The listing is made once, by the first Unchanged the palace asks
	// (with the writer lock held, as a mine of every wing lists) or by
	// MinePlan.
	listed  sync.Once
	jobs    []job
	skipped []Problem
	err     error

	mu sync.Mutex
	// kept are the notes of each wing Unchanged reported unchanged.
	kept map[string]int
}

// NewPlan returns the plan of a mine of path with opts. An error listing
// it is MinePlan's to return.
func NewPlan(path string, opts Options) *Plan {
	return &Plan{path: path, opts: opts, kept: map[string]int{}}
}

// list lists the plan's jobs and their files, once.
func (pl *Plan) list() {
	pl.listed.Do(func() {
		pl.jobs, pl.skipped, pl.err = planJobs(pl.path, pl.opts)
		for i := range pl.jobs {
			pl.jobs[i].files, pl.jobs[i].problems = collect(pl.jobs[i])
		}
	})
}

// Unchanged reports whether the mine leaves wing id, of which the
// manifest says w, as it is: the mine's one job of the wing lists exactly
// the wing's files, from its one root, and every one is unchanged by the
// check mineFile makes first. A dry run loads every wing.
func (pl *Plan) Unchanged(id string, w palace.ManifestWing) bool {
	if pl.opts.DryRun {
		return false
	}
	if pl.list(); pl.err != nil {
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
