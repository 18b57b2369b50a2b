package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
)

func (d *Daemon) mineOptions(reembeds *[]api.Reembed) mine.Options {
	return mine.Options{
		MaxFileBytes: d.opts.MaxFileBytes,
		// Running lexically because the model is unavailable must not
		// strip wings of its vectors.
		ModelUnavailable: d.opts.ModelError,
		OnReembed: func(wing, from, to string, n int) {
			d.log.Warn("wing was embedded with another model; re-embedding", "wing", wing, "from", from, "to", to, "notes", n)
			if reembeds != nil {
				*reembeds = append(*reembeds, api.Reembed{Wing: wing, From: from, To: to, Notes: n})
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

	reembeds := []api.Reembed{}
	opts := d.mineOptions(&reembeds)
	opts.Wing, opts.Agent, opts.DryRun, opts.Agents, opts.Hive = j.req.Wing, j.req.Agent, j.req.DryRun, j.req.Agents, d.opts.Hive
	start := time.Now()
	opts.Progress = func(done, total int) {
		d.mu.Lock()
		d.request = &api.MineProgress{FilesDone: done, FilesTotal: total, Started: start.UTC()}
		d.mu.Unlock()
	}
	s, err := mine.Mine(mctx, d.p, j.req.Path, opts)
	d.mu.Lock()
	d.request = nil
	d.mu.Unlock()
	if requestMined(s, err) {
		d.metrics.observeMine(triggerRequest, time.Since(start), err, len(s.Problems))
		d.mu.Lock()
		d.mines++
		d.mu.Unlock()
	} else {
		// No mine to count, but a skipped file failed to mine as in any.
		d.metrics.mineFailures.add(float64(len(s.Problems)))
	}
	logMineRequest(d.log, j.req, s, err)
	j.reply <- mineOutcome{reply: api.MineReply{Result: api.NewMineResult(s), Reembeds: reembeds}, err: err}
}

// requestMined reports whether a mine request counts in the daemon's mine
// totals (status, metrics): one that failed while mining a wing does, one
// refused before any wing was mined (no wing follows from its path, a
// missing path) does not, nor one in which nothing was mined (every file
// skipped), so a caller's mistakes do not pass for work.
func requestMined(s mine.Summary, err error) bool {
	if err != nil {
		return len(s.Wings) > 0
	}
	return len(s.Mined) > 0
}

// scan stats every memory file of the hive and queues the agents whose
// files changed since they were last mined, and the wings embedded with
// another model than the palace's. A tick's scan also advances the retry
// backoff of failing files.
func (d *Daemon) scan(ctx context.Context, trigger string) {
	stale := d.staleWings()
	now := time.Now()
	if trigger == triggerTick {
		d.failures.tick()
		d.reembedFailures.tick()
		if d.hiveStamp != nil && len(stale) == 0 && d.hiveStamp.holds() {
			d.scanned(now) // nothing the scan reads has changed
			return
		}
	}
	// Taken before the hive is listed, and counted after, so a change
	// during the scan, or during a component's walk told of it, breaks it.
	hiveStamp := takeHiveStamp(d.opts.Hive, d.stampTime(now))
	d.hiveChanges.Add(1)
	hs := d.listAgents()
	// A failing file (or agent) that is gone no longer fails.
	d.failures.drop(func(path string, _ *failure) bool {
		_, err := os.Stat(path)
		return errors.Is(err, fs.ErrNotExist)
	})
	// Re-embedded meanwhile (by a mine), or gone.
	d.reembedFailures.drop(func(wing string, _ *failure) bool { return !stale[wing] })
	d.mu.Lock()
	d.noteHive(hs, now)
	d.mu.Unlock()
	mined := map[string]bool{} // wings an agent directory's mine re-embeds
	d.pruneStamps(hs.agents)
	for _, a := range hs.agents {
		if ctx.Err() != nil {
			return
		}
		if !stale[a.wing] && d.stamps[a.dir] != nil && d.stamps[a.dir].holds() {
			continue // nothing a mine reads has changed (see agentStamp)
		}
		dir := resolve(a.dir)
		// Taken before the check, so a change during it breaks the stamp.
		stamp := takeStamp(a.dir, dir, d.stampTime(now))
		need, mines, files := d.agentNeedsMine(a.wing, dir, trigger, stale[a.wing])
		if mines {
			mined[a.wing] = true
		}
		d.keepStamp(a.dir, dir, stamp, !need && mines && !stale[a.wing])
		if need {
			d.mu.Lock()
			d.firstMineQueued(a.dir, files)
			d.mu.Unlock()
			d.q.addAgent(a.dir, trigger)
		}
	}
	// A wing no agent directory mines (mined through the socket from
	// elsewhere, or whose agent is gone) is re-embedded from its notes.
	for _, wing := range sortedKeys(stale) {
		if mined[wing] {
			continue
		}
		if trigger != triggerTick || !d.reembedFailures.waiting(wing) {
			d.q.addReembed(wing, trigger)
		}
	}
	d.keepHiveStamp(hiveStamp, hs, stale)
	d.scanned(now)
}

// scanned records a scan that began at now, and tells the components.
func (d *Daemon) scanned(now time.Time) {
	d.mu.Lock()
	d.scans++
	d.lastScan = now
	d.firstMineScanned()
	d.mu.Unlock()
	d.signalComponents(scanSignal)
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

// agentNeedsMine reports whether a mine of an agent directory would
// change its wing (mine.Changed), or its wing is stale (embedded with
// another model), and whether a mine of it would run at all (it has
// markdown files), and how many of its files the mine reads again. A
// file, or the whole directory, that failed and waits out its backoff
// unchanged does not call for a mine. dir is the agent directory's real
// path.
func (d *Daemon) agentNeedsMine(wing, dir, trigger string, stale bool) (need, mines bool, files int) {
	ch := mine.Changed(d.p, wing, dir)
	if len(ch.Files) == 0 {
		// Every markdown file gone: keep the wing as it is (a transient
		// state while an editor replaces a file must not empty it).
		return false, false, 0
	}
	if trigger == triggerTick && d.failures.waiting(dir) {
		return false, true, 0
	}
	due := func(f mine.File) bool { return !d.failures.heldBack(f.Path, fileStat{f.Mtime, f.Size}) }
	files = len(ch.Changed)
	if stale {
		files = len(ch.Files)
	}
	return stale || len(ch.Gone) > 0 || slices.ContainsFunc(ch.Changed, due), true, files
}

// hasFiles reports whether a mine of dir reads any file.
func hasFiles(dir string) bool {
	files, _ := mine.ListFiles(dir)
	return len(files) > 0
}

// resolve returns path with its symlinks resolved, or path when that fails.
func resolve(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// mineAgent mines one agent directory into its wing and records how it went.
func (d *Daemon) mineAgent(ctx context.Context, dir, trigger string) {
	defer d.firstMineDone(dir)
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
	dir = resolve(dir)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() || !hasFiles(dir) {
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
	if s.FilesChanged > 0 && holdsConflictMarkers(dir) {
		// A merge or rebase left markers: the conflict watcher scans now
		// rather than at the next tick.
		d.hiveChanges.Add(1)
		d.signalComponents(scanSignal)
	}
}

// holdsConflictMarkers reports whether a memory file of the agent
// directory holds Git conflict markers (hive.FileHasConflictMarkers).
func holdsConflictMarkers(dir string) bool {
	files, _ := mine.ListFiles(dir)
	for _, f := range files {
		if hive.FileHasConflictMarkers(f.Path) {
			return true
		}
	}
	return false
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
	if err != nil {
		path := d.p.Dir()
		if roots := d.p.Roots(wing); len(roots) > 0 {
			path = roots[0]
		}
		d.reembedFailures.fail(attempt{key: wing, path: path, wing: wing, err: fmt.Sprintf("re-embed with model %s: %v", to, err), wingLevel: true}, time.Now())
		return
	}
	d.reembedFailures.clear(wing)
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
	lm := api.WingMine{At: start.UTC(), Trigger: trigger, Seconds: dur.Seconds(), FilesChanged: s.FilesChanged, NotesAdded: s.NotesAdded, NotesRemoved: s.NotesRemoved}
	if err != nil {
		lm.Error = new(err.Error())
	}
	d.lastMine[wing] = lm
	for _, w := range s.Warnings {
		if w.Kind == mine.ProblemSecret && d.secretsLogged[w.Path] != w.Err {
			d.secretsLogged[w.Path] = w.Err
			d.log.Warn("file holds secrets; they are hidden from every output", "wing", wing, "path", w.Path, "found", w.Err)
		}
	}
	for _, m := range s.Migrated {
		d.log.Info("wing migrated to the current note format; vectors of unchanged notes kept", "wing", m.Wing, "format", m.Format, "files", m.Files, "notes", m.Notes, "embedded", m.Embedded)
	}
	if s.FilesChanged > 0 || s.FilesRemoved > 0 {
		d.log.Info("mined", "wing", wing, "trigger", trigger, "files_changed", s.FilesChanged, "files_removed", s.FilesRemoved,
			"notes_added", s.NotesAdded, "notes_removed", s.NotesRemoved, "took", dur.Round(time.Millisecond))
	}
	// Files of this agent that mined cleanly are no longer failing.
	prefix := dir + string(filepath.Separator)
	d.failures.drop(func(path string, f *failure) bool {
		if _, still := problems[path]; f.wingLevel || still || !strings.HasPrefix(path, prefix) {
			return false
		}
		d.log.Info("file mines again", "wing", wing, "path", path)
		return true
	})
	for path, msg := range problems {
		var st fileStat
		if info, err := os.Stat(path); err == nil {
			st = fileStat{info.ModTime().UTC(), info.Size()}
		}
		d.failures.fail(attempt{key: path, path: path, wing: wing, err: msg, stat: st}, now)
	}
	if err != nil {
		d.failures.fail(attempt{key: dir, path: dir, wing: wing, err: err.Error(), wingLevel: true}, now)
	} else if d.failures.clear(dir) {
		d.log.Info("wing mines again", "wing", wing)
	}
}

// logMineRequest logs a mine handed over through the socket: a dry run as
// what it is, a refusal (a usage error of the caller: no wing follows, a
// bad wing id, a path that does not exist) at WARN, a failure at ERROR
// with its error; a successful mine carries no error attribute.
func logMineRequest(log *slog.Logger, req api.MineRequest, s mine.Summary, err error) {
	attrs := []any{"path", req.Path, "wings", strings.Join(s.Wings, ","), "files_changed", s.FilesChanged,
		"notes_added", s.NotesAdded, "notes_removed", s.NotesRemoved}
	switch {
	case errors.Is(err, mine.ErrNeedsWing), errors.Is(err, mine.ErrAgentNeedsWing),
		errors.Is(err, hive.ErrBadWingID), errors.Is(err, fs.ErrNotExist):
		log.Warn("mine request refused", append(attrs, "err", err)...)
	case err != nil:
		log.Error("mine request failed", append(attrs, "err", err)...)
	case req.DryRun:
		log.Info("dry run on request; nothing changed", attrs...)
	default:
		log.Info("mined on request", attrs...)
	}
}
