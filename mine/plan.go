package mine

import (
	"context"
	"fmt"
	"slices"

	"github.com/memminer/memminer/palace"
)

// Plan is a mine's wings and their files, so that the palace need not
// load the wings none of whose files changed: pass Unchanged as
// palace.Options.Unchanged, then MinePlan. The palace asks Unchanged
// while it opens, one wing at a time; a Plan is not for concurrent use.
type Plan struct {
	path string
	opts Options

	// The jobs are planned once, by the first Unchanged the palace asks
	// (with the writer lock held, as a mine of every wing lists) or by
	// MinePlan; each job's files are collected by the Unchanged of its
	// wing, which may take them from the manifest's listing, or by
	// MinePlan.
	listed  bool
	jobs    []job
	skipped []Problem
	err     error
	// job is the index of each wing's job, -1 for a wing of several.
	job map[string]int

	// kept are the notes of each wing Unchanged reported unchanged.
	kept map[string]int
}

// NewPlan returns the plan of a mine of path with opts. An error listing
// it is MinePlan's to return.
func NewPlan(path string, opts Options) *Plan {
	return &Plan{path: path, opts: opts, kept: map[string]int{}}
}

// list lists the plan's jobs, once.
func (pl *Plan) list() {
	if pl.listed {
		return
	}
	pl.listed = true
	pl.jobs, pl.skipped, pl.err = planJobs(pl.path, pl.opts)
	pl.job = make(map[string]int, len(pl.jobs))
	for i := range pl.jobs {
		if _, dup := pl.job[pl.jobs[i].wing]; dup {
			pl.job[pl.jobs[i].wing] = -1
		} else {
			pl.job[pl.jobs[i].wing] = i
		}
	}
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
	i, ok := pl.job[id]
	if !ok || i < 0 {
		return false
	}
	j := pl.collect(i, &w)
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
	pl.kept[id] = notes
	return true
}

// collect collects the files of job i, once: from w's listing (the
// manifest's of the job's wing, nil when none is known) while it holds,
// else by listing the job's root.
func (pl *Plan) collect(i int, w *palace.ManifestWing) *job {
	j := &pl.jobs[i]
	if j.collected {
		return j
	}
	j.collected = true
	if w != nil {
		if files, ok := listedFiles(*j, *w); ok {
			j.files = files
			return j
		}
	}
	j.files, j.problems, j.listing = collectListing(*j)
	return j
}

// recordListings gives the palace the listings the plan took that prove
// themselves current (collectListing), for the manifest. A wing of
// several jobs has none.
func (pl *Plan) recordListings(p *palace.Palace) {
	for _, j := range pl.jobs {
		if j.listing == nil || pl.job[j.wing] < 0 {
			continue
		}
		paths := make([]string, len(j.files))
		for k, f := range j.files {
			paths[k] = f.path
		}
		p.SetListing(j.wing, j.listing, paths)
	}
}

// keptSummary is what mineOne reports of job j, whose wing the palace
// left unloaded as unchanged: every file seen and unchanged.
func (pl *Plan) keptSummary(j job, opts Options) Summary {
	s := Summary{Wings: []string{j.wing}, DryRun: opts.DryRun, FilesSeen: len(j.files), FilesUnchanged: len(j.files), NotesUnchanged: pl.kept[j.wing]}
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
	opts := pl.opts
	if !opts.DryRun && !p.Writable() {
		return Summary{}, fmt.Errorf("mine %s: %w", pl.path, palace.ErrReadOnly)
	}
	var repaired []Repaired
	if !opts.DryRun {
		// A damaged wing is rebuilt before anything is added to it.
		repaired = Repair(ctx, p, opts)
	}
	s, err := minePlanned(ctx, p, pl)
	s.Repaired = repaired
	return s, err
}
