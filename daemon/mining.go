package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
)

func (d *Daemon) mineOptions(reembeds *[]Reembed) mine.Options {
	return mine.Options{
		MaxFileBytes: d.opts.MaxFileBytes,
		// Running lexically because the model is unavailable must not
		// strip wings of its vectors.
		ModelUnavailable: d.opts.ModelError,
		OnReembed: func(wing, from, to string, n int) {
			d.log.Warn("wing was embedded with another model; re-embedding", "wing", wing, "from", from, "to", to, "notes", n)
			if reembeds != nil {
				*reembeds = append(*reembeds, Reembed{Wing: wing, From: from, To: to, Notes: n})
			}
		},
	}
}

// doRequest runs a mine handed over through the socket.
func (d *Daemon) doRequest(ctx context.Context, j *mineJob) {
	if err := j.ctx.Err(); err != nil {
		j.reply <- mineOutcome{err: err}
		return
	}
	// The mine stops when the daemon stops or the caller gives up.
	mctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(j.ctx, cancel)
	defer func() { stop(); cancel() }()

	var reembeds []Reembed
	opts := d.mineOptions(&reembeds)
	opts.Wing, opts.Agent, opts.DryRun, opts.Agents, opts.Hive = j.req.Wing, j.req.Agent, j.req.DryRun, j.req.Agents, d.opts.Hive
	start := time.Now()
	s, err := mine.Mine(mctx, d.p, j.req.Path, opts)
	d.metrics.observeMine(triggerRequest, time.Since(start), err, len(s.Problems))
	d.mu.Lock()
	d.mines++
	d.mu.Unlock()
	d.log.Info("mined on request", "path", j.req.Path, "wings", strings.Join(s.Wings, ","), "files_changed", s.FilesChanged,
		"notes_added", s.NotesAdded, "notes_removed", s.NotesRemoved, "dry_run", j.req.DryRun, "err", err)
	j.reply <- mineOutcome{reply: MineReply{Result: NewMineResult(s), Reembeds: reembeds}, err: err}
}

// scan stats every memory file of the hive and queues the agents whose
// files changed since they were last mined, and the wings embedded with
// another model than the palace's. A tick's scan also advances the retry
// backoff of failing files.
func (d *Daemon) scan(ctx context.Context, trigger string) {
	hs := d.listAgents()
	stale := d.staleWings()
	now := time.Now()
	d.mu.Lock()
	for path, f := range d.failures {
		if trigger == triggerTick && f.skip > 0 {
			f.skip--
		}
		// A failing file (or agent) that is gone no longer fails.
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			delete(d.failures, path)
		}
	}
	for wing, f := range d.reembedFailures {
		if trigger == triggerTick && f.skip > 0 {
			f.skip--
		}
		// Re-embedded meanwhile (by a mine), or gone.
		if !stale[wing] {
			delete(d.reembedFailures, wing)
		}
	}
	d.noteHive(hs, now)
	d.mu.Unlock()
	mined := map[string]bool{} // wings an agent directory's mine re-embeds
	for _, a := range hs.agents {
		if ctx.Err() != nil {
			return
		}
		need, mines := d.agentNeedsMine(a, trigger, stale[a.wing])
		if mines {
			mined[a.wing] = true
		}
		if need {
			d.q.addAgent(a.dir, trigger)
		}
	}
	// A wing no agent directory mines (mined through the socket from
	// elsewhere, or whose agent is gone) is re-embedded from its notes.
	for _, wing := range sortedKeys(stale) {
		if mined[wing] {
			continue
		}
		d.mu.Lock()
		f, failing := d.reembedFailures[wing]
		wait := failing && f.skip > 0 && trigger == triggerTick
		d.mu.Unlock()
		if !wait {
			d.q.addReembed(wing, trigger)
		}
	}
	d.mu.Lock()
	d.scans++
	d.lastScan = now
	d.mu.Unlock()
	d.signalComponents()
}

// fileStat is what the change check knows of a markdown file.
type fileStat struct {
	mtime time.Time
	size  int64
}

// markdownFiles lists the files a mine of dir reads, by mine's own rules,
// with their mtime and size.
func markdownFiles(dir string) map[string]fileStat {
	files, _ := mine.ListFiles(dir)
	out := make(map[string]fileStat, len(files))
	for _, f := range files {
		out[f.Path] = fileStat{f.Mtime, f.Size}
	}
	return out
}

// staleWings lists the wings whose notes were embedded with another model
// than the palace's, so searching them fails until they are re-embedded.
// A lexical palace (no model, or the model unavailable) searches every
// wing, so it re-embeds none: a wing whose markdown does not change keeps
// its vectors for when the model is back.
func (d *Daemon) staleWings() map[string]bool {
	model := d.p.Model()
	stale := map[string]bool{}
	if model == embed.Lexical {
		return stale
	}
	for _, w := range d.p.Wings() {
		if w.Notes > 0 && w.Model != model {
			stale[w.ID] = true
		}
	}
	return stale
}

// agentNeedsMine reports whether an agent directory has files that changed
// since they were last mined (for a file that was not settled when mined,
// by its content), files that are new, or files that are gone, or whether its wing is stale (embedded with another model), and whether
// a mine of it would run at all (it has markdown files).
func (d *Daemon) agentNeedsMine(a agentDir, trigger string, stale bool) (need, mines bool) {
	dir := a.dir
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	files := markdownFiles(dir)
	if len(files) == 0 {
		// Every markdown file gone: keep the wing as it is (a transient
		// state while an editor replaces a file must not empty it).
		return false, false
	}
	known := map[string]palace.Source{}
	for _, s := range d.p.Sources(a.wing) {
		if strings.HasPrefix(s.Path, dir+string(filepath.Separator)) {
			known[s.Path] = s
		}
	}
	// A file not settled when it was mined may have changed while keeping
	// its mtime and size; reading it tells, without a mine that would
	// write the palace (done before locking: it is file I/O).
	// A file found unchanged once it had settled is trusted on its stat
	// from then on (verified), so a file is read once, not at every tick.
	racy := map[string]bool{}
	for path, st := range files {
		if s, ok := known[path]; ok && s.Mtime.Equal(st.mtime) && s.Size == st.size && !mine.Settled(s) {
			d.mu.Lock()
			v, checked := d.verified[path]
			d.mu.Unlock()
			if checked && v == st {
				continue
			}
			at := time.Now()
			same, err := mine.SameContent(s)
			racy[path] = err != nil || !same
			if err == nil && same && mine.SettledAt(st.mtime, at) {
				d.mu.Lock()
				d.verified[path] = st
				d.mu.Unlock()
			}
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if f, ok := d.failures[dir]; ok && f.wingLevel && f.skip > 0 && trigger == triggerTick {
		return false, true
	}
	if stale {
		// mine re-embeds the whole wing before it mines the changes.
		return true, true
	}
	for path, st := range files {
		if f, ok := d.failures[path]; ok {
			if f.mtime.Equal(st.mtime) && f.size == st.size {
				if f.skip == 0 {
					return true, true
				}
				continue
			}
			return true, true
		}
		s, ok := known[path]
		if !ok || !s.Mtime.Equal(st.mtime) || s.Size != st.size || racy[path] || !mine.Classified(s) {
			return true, true
		}
	}
	for path := range known {
		if _, ok := files[path]; !ok {
			return true, true
		}
	}
	return false, true
}

// mineAgent mines one agent directory into its wing and records how it went.
func (d *Daemon) mineAgent(ctx context.Context, dir, trigger string) {
	wing, err := palace.NormalizeWingID(filepath.Base(dir))
	if err != nil {
		return
	}
	d.mu.Lock()
	delete(d.debouncing, dir)
	d.mu.Unlock()
	if !d.isAgent(dir) {
		// Not (or no longer) an agent directory: its wing id is another's,
		// or it lies inside one; status says so. A removed one's wing is
		// kept and shows as orphaned.
		return
	}
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() || len(markdownFiles(dir)) == 0 {
		// The agent was removed (or emptied): its wing is kept and shows as
		// orphaned in status.
		return
	}
	start := time.Now()
	opts := d.mineOptions(nil)
	opts.Wing = wing
	s, err := mine.Mine(ctx, d.p, dir, opts)
	dur := time.Since(start)
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		d.log.Info("mine interrupted by shutdown; what was mined is saved", "wing", wing)
		return
	}
	d.metrics.observeMine(trigger, dur, err, len(s.Problems))
	d.record(wing, dir, trigger, start, dur, s, err)
}

// reembedWing re-embeds a wing with the palace's model from the notes it
// holds, for a wing no agent directory of the hive mines, and saves it.
func (d *Daemon) reembedWing(ctx context.Context, wing, trigger string) {
	from, ok := d.p.ModelOf(wing)
	to := d.p.Model()
	if !ok || from == to {
		return // re-embedded by a mine meanwhile, or gone
	}
	start := time.Now()
	n, err := d.p.Reembed(ctx, wing)
	if err == nil {
		err = d.p.Flush()
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		d.log.Info("re-embedding interrupted by shutdown", "wing", wing)
		return
	}
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		path := d.p.Dir()
		if roots := d.p.Roots(wing); len(roots) > 0 {
			path = roots[0]
		}
		d.fail(d.reembedFailures, wing, path, wing, fmt.Sprintf("re-embed with model %s: %v", to, err), fileStat{}, now, true)
		return
	}
	delete(d.reembedFailures, wing)
	d.log.Warn("wing was embedded with another model; re-embedded it", "wing", wing, "from", from, "to", to,
		"notes", n, "trigger", trigger, "took", time.Since(start).Round(time.Millisecond))
}

// record updates the failure table and the wing's last mine after a mine.
func (d *Daemon) record(wing, dir, trigger string, start time.Time, dur time.Duration, s mine.Summary, err error) {
	now := time.Now()
	problems := map[string]string{}
	for _, pr := range s.Problems {
		problems[pr.Path] = pr.Err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.mines++
	lm := WingMine{At: start.UTC(), Trigger: trigger, Seconds: dur.Seconds(), FilesChanged: s.FilesChanged, NotesAdded: s.NotesAdded, NotesRemoved: s.NotesRemoved}
	if err != nil {
		lm.Error = err.Error()
	}
	d.lastMine[wing] = lm
	for _, m := range s.Migrated {
		d.log.Info("wing migrated to the current note format; vectors of unchanged notes kept", "wing", m.Wing, "format", m.Format, "files", m.Files, "notes", m.Notes, "embedded", m.Embedded)
	}
	if s.FilesChanged > 0 || s.FilesRemoved > 0 {
		d.log.Info("mined", "wing", wing, "trigger", trigger, "files_changed", s.FilesChanged, "files_removed", s.FilesRemoved,
			"notes_added", s.NotesAdded, "notes_removed", s.NotesRemoved, "took", dur.Round(time.Millisecond))
	}
	// Files of this agent that mined cleanly are no longer failing.
	prefix := dir + string(filepath.Separator)
	for path, f := range d.failures {
		if f.wingLevel || !strings.HasPrefix(path, prefix) {
			continue
		}
		if _, still := problems[path]; !still {
			d.log.Info("file mines again", "wing", wing, "path", path)
			delete(d.failures, path)
		}
	}
	for path, msg := range problems {
		var st fileStat
		if info, err := os.Stat(path); err == nil {
			st = fileStat{info.ModTime().UTC(), info.Size()}
		}
		d.fail(d.failures, path, path, wing, msg, st, now, false)
	}
	if err != nil {
		d.fail(d.failures, dir, dir, wing, err.Error(), fileStat{}, now, true)
	} else if f, ok := d.failures[dir]; ok && f.wingLevel {
		d.log.Info("wing mines again", "wing", wing)
		delete(d.failures, dir)
	}
}
