package conflicts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/backoff"
	"github.com/memminer/memminer/memory/memfile"
)

// AutoMergeState is what the automatic merge is doing with an open copy,
// in Conflict.AutoMerge.
type AutoMergeState struct {
	// State is AutoMergeRetrying or AutoMergeNeedsPerson.
	State string `json:"state"`
	// Reason is the failure being retried, or why a person must merge.
	Reason string `json:"reason"`
	// Attempts counts the merges tried.
	Attempts int `json:"attempts"`
	// NextAttempt is when a retrying merge is tried again; null when it
	// needs a person.
	NextAttempt *time.Time `json:"next_attempt"`
}

// States of an automatic merge, in AutoMergeState.State.
const (
	// AutoMergeRetrying: the merge failed in a way that passes (the copy
	// or the file changed while it was merged, the copy came back after
	// its merge, another writer held the lock); it is tried again with
	// backoff.
	AutoMergeRetrying = "retrying"
	// AutoMergeNeedsPerson: the merge needs review, or cannot be made
	// (not text, too large, not laid out), or kept failing for
	// AutoMergeGiveUp; a person merges it (memminer conflicts merge).
	AutoMergeNeedsPerson = "needs_person"
)

// Defaults of the automatic merge's retries.
const (
	// DefaultAutoMergeWait is how long a device waits for the device named
	// in a conflict copy to merge it before alerting it as open.
	DefaultAutoMergeWait = 30 * time.Second
	// DefaultAutoMergeRetry is the wait before the first retry, doubled
	// (jittered) up to DefaultAutoMergeMaxRetry.
	DefaultAutoMergeRetry    = time.Second
	DefaultAutoMergeMaxRetry = time.Minute
	// DefaultAutoMergeGiveUp is how long a merge that keeps failing in a
	// passing way is retried before it is left to a person.
	DefaultAutoMergeGiveUp = 30 * time.Minute
)

// alert logs a new conflict and queues its command and webhook; with
// AutoMerge it first merges the copy when that is clean, and then alerts
// it as merged; a merge that failed in a passing way is retried in the
// background, and alerted when it merges or needs a person.
func (c *Component) alert(cf Conflict) {
	cf.Action = ActionOpen
	switch m, outcome, reason := c.autoMerge(cf); outcome {
	case autoMerged:
		c.alertMerged(cf, m, 1)
	case autoMergeElsewhere:
		c.alertUnlessMerged(cf)
	case autoMergeRetry:
		c.retryMerge(cf, reason)
	case autoMergeGone:
	case autoMergeNeedsPerson:
		cf.AutoMerge = c.setMergeState(cf.Path, AutoMergeNeedsPerson, reason, 1, nil)
		c.alertOpen(cf)
	default:
		c.alertOpen(cf)
	}
}

// alertMerged logs and queues the alert of a copy merged automatically.
func (c *Component) alertMerged(cf Conflict, m CopyMerge, attempts int) {
	c.mu.Lock()
	log := c.log
	c.mu.Unlock()
	cf.Action, cf.AutoMerge = ActionMerged, nil
	log.Warn("syncthing conflict merged: the copy merged cleanly into the original and was removed; the replaced contents are kept",
		"wing", cf.Wing, "path", cf.Path, "original", cf.Original, "device", cf.Device, "device_name", cf.DeviceName,
		"from_copy", len(m.FromCopy), "removals_declined", len(m.ProposedRemovals), "attempts", attempts, "kept_in", deref(m.Backup))
	c.alerts.enqueue(cf)
}

// alertOpen logs and queues the alert of an open conflict.
func (c *Component) alertOpen(cf Conflict) {
	c.mu.Lock()
	log := c.log
	c.mu.Unlock()
	args := []any{"wing", cf.Wing, "path", cf.Path, "original", cf.Original, "device", cf.Device, "device_name", cf.DeviceName, "found_by", cf.FoundBy}
	if s := cf.AutoMerge; s != nil {
		args = append(args, "auto_merge", s.State, "reason", s.Reason, "attempts", s.Attempts)
	}
	msg := "syncthing conflict: a memory file has a conflict copy; merge it with memminer conflicts merge, or by hand and delete the copy"
	if cf.Markers {
		msg = "git conflict: a memory file holds conflict markers; resolve them in Git (memminer git setup merges memory files note by note)"
	}
	log.Warn(msg, args...)
	c.alerts.enqueue(cf)
}

// alertUnlessMerged waits, in the background, for the device the copy
// names to merge it (its removal reaches this device through Syncthing),
// and alerts the conflict as open only if the copy is still there after
// Options.AutoMergeWait.
func (c *Component) alertUnlessMerged(cf Conflict) {
	c.mu.Lock()
	ctx, log := c.runCtx, c.log
	c.mu.Unlock()
	if ctx == nil {
		c.alertOpen(cf)
		return
	}
	wait := c.opts.AutoMergeWait
	if wait <= 0 {
		wait = DefaultAutoMergeWait
	}
	log.Info("conflict copy names another device; waiting for its merge before alerting", "path", cf.Path, "device", cf.Device, "wait", wait)
	c.bg.Go(func() {
		if backoff.Sleep(ctx, wait) != nil {
			return
		}
		if _, err := os.Lstat(cf.Path); err != nil {
			log.Info("conflict copy merged by the device it names", "path", cf.Path, "device", cf.Device)
			return
		}
		c.alertOpen(cf)
	})
}

// retryMerge tries the merge of cf again, in the background, with
// backoff, until it merges, the copy is gone, it needs a person, or it
// kept failing for Options.AutoMergeGiveUp; reason is the first failure.
func (c *Component) retryMerge(cf Conflict, reason string) {
	c.mu.Lock()
	ctx, log := c.runCtx, c.log
	c.mu.Unlock()
	if ctx == nil {
		cf.AutoMerge = c.setMergeState(cf.Path, AutoMergeNeedsPerson, reason, 1, nil)
		c.alertOpen(cf)
		return
	}
	initial, limit, giveUp := c.opts.AutoMergeRetry, c.opts.AutoMergeMaxRetry, c.opts.AutoMergeGiveUp
	if initial <= 0 {
		initial = DefaultAutoMergeRetry
	}
	if limit <= 0 {
		limit = DefaultAutoMergeMaxRetry
	}
	if giveUp <= 0 {
		giveUp = DefaultAutoMergeGiveUp
	}
	c.bg.Go(func() {
		b := backoff.New(initial, limit)
		start := time.Now()
		for attempts := 1; ; attempts++ {
			d := b.Next()
			next := time.Now().Add(d).UTC()
			c.setMergeState(cf.Path, AutoMergeRetrying, reason, attempts, &next)
			log.Info("automatic merge of the conflict copy failed; retrying", "path", cf.Path, "reason", reason, "attempts", attempts, "in", d)
			if backoff.Sleep(ctx, d) != nil {
				return
			}
			m, outcome, why := c.autoMerge(cf)
			switch {
			case outcome == autoMerged:
				c.clearMergeState(cf.Path)
				c.alertMerged(cf, m, attempts+1)
				return
			case outcome == autoMergeGone:
				c.clearMergeState(cf.Path)
				log.Info("conflict copy gone before its merge was retried", "path", cf.Path)
				return
			case outcome == autoMergeElsewhere:
				c.clearMergeState(cf.Path)
				c.alertUnlessMerged(cf)
				return
			case outcome == autoMergeRetry && time.Since(start) < giveUp:
				reason = why
				continue
			case outcome == autoMergeRetry:
				why = fmt.Sprintf("kept failing for %s: %s", giveUp.Round(time.Second), why)
			}
			cf.AutoMerge = c.setMergeState(cf.Path, AutoMergeNeedsPerson, why, attempts+1, nil)
			c.alertOpen(cf)
			return
		}
	})
}

// mergeLeftOpen tries, in the background, the automatic merge of the
// copies the registry held open when the daemon started (they were
// alerted before and are not again): one merged is alerted as merged, one
// failing in a passing way retried, one needing a person marked so.
func (c *Component) mergeLeftOpen(ctx context.Context) {
	c.mu.Lock()
	reg := c.reg
	c.mu.Unlock()
	if reg == nil {
		return
	}
	var left []Conflict
	c.mu.Lock()
	for _, cf := range reg.list() {
		if _, tried := c.merging[cf.Path]; !tried {
			left = append(left, cf)
		}
	}
	c.mu.Unlock()
	if len(left) == 0 {
		return
	}
	c.bg.Go(func() {
		for _, cf := range left {
			if ctx.Err() != nil {
				return
			}
			switch m, outcome, reason := c.autoMerge(cf); outcome {
			case autoMerged:
				c.alertMerged(cf, m, 1)
			case autoMergeRetry:
				c.retryMerge(cf, reason)
			case autoMergeNeedsPerson:
				c.setMergeState(cf.Path, AutoMergeNeedsPerson, reason, 1, nil)
			}
		}
	})
}

// setMergeState records what the automatic merge does with the copy at
// path and returns a copy of the record.
func (c *Component) setMergeState(path, state, reason string, attempts int, next *time.Time) *AutoMergeState {
	s := AutoMergeState{State: state, Reason: reason, Attempts: attempts, NextAttempt: next}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.merging == nil {
		c.merging = map[string]AutoMergeState{}
	}
	c.merging[path] = s
	return &s
}

func (c *Component) clearMergeState(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.merging, path)
}

// withMergeStates sets AutoMerge on the conflicts the automatic merge
// tried, and forgets the states of copies no longer open.
func (c *Component) withMergeStates(cs []Conflict) []Conflict {
	c.mu.Lock()
	defer c.mu.Unlock()
	open := make(map[string]bool, len(cs))
	for i := range cs {
		open[cs[i].Path] = true
		if s, ok := c.merging[cs[i].Path]; ok {
			cs[i].AutoMerge = &s
		}
	}
	for p, s := range c.merging {
		if !open[p] && s.State == AutoMergeNeedsPerson {
			delete(c.merging, p)
		}
	}
	return cs
}

// What autoMerge did.
type autoMergeOutcome int

const (
	autoMergeNot         autoMergeOutcome = iota // not tried (AutoMerge off, not a memory file): alert as open
	autoMerged                                   // merged and resolved
	autoMergeElsewhere                           // left to the device the copy names
	autoMergeRetry                               // failed in a passing way: try again
	autoMergeNeedsPerson                         // needs review or cannot be merged
	autoMergeGone                                // the copy is gone: nothing to merge
)

// autoMerge merges cf when AutoMerge is on, this device is the one to
// merge it, and the merge is clean (the copy is then resolved in the
// registry). A merge that fails in a way that passes is autoMergeRetry;
// reason says what happened.
func (c *Component) autoMerge(cf Conflict) (CopyMerge, autoMergeOutcome, string) {
	if !c.opts.AutoMerge || cf.Markers || !hive.IsMemoryFile(cf.Original) || cf.Wing == "" {
		return CopyMerge{}, autoMergeNot, ""
	}
	c.mu.Lock()
	h, reg, log := c.host, c.reg, c.log
	c.mu.Unlock()
	if h == nil || reg == nil {
		return CopyMerge{}, autoMergeNot, ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), autoMergeTimeout)
	defer cancel()
	if c.opts.Syncthing != nil {
		// Only the device the copy names merges it: a second device
		// writing the same merge at the same time would make a new
		// conflict.
		st, err := c.opts.Syncthing.SystemStatus(ctx)
		if err != nil {
			log.Info("cannot ask Syncthing which device this is; retrying the automatic merge", "path", cf.Path, "err", err)
			return CopyMerge{}, autoMergeRetry, "cannot ask Syncthing which device this is: " + err.Error()
		}
		if cf.Device != "" && st.MyID.Short() != cf.Device {
			return CopyMerge{}, autoMergeElsewhere, ""
		}
	}
	p := h.Palace()
	dir := ""
	if p != nil {
		dir = p.Dir()
	}
	rep := MergeCopies(ctx, p, []Conflict{cf}, MergeOptions{Apply: true, PalaceDir: dir, MaxFileBytes: c.opts.MaxFileBytes})
	if len(rep.Merges) == 0 {
		return CopyMerge{}, autoMergeRetry, "the merge was cut short"
	}
	m := rep.Merges[0]
	switch {
	case m.Applied:
		if _, err := os.Lstat(cf.Path); err == nil {
			// Syncthing brought the copy back (or made it again) after
			// the merge removed it: merge what is there now.
			return m, autoMergeRetry, "the copy reappeared after its merge"
		}
		if _, _, err := reg.resolve(cf.Path); err != nil {
			c.noteSave(err)
		}
		return m, autoMerged, ""
	case m.Status == StatusNeedsReview:
		return m, autoMergeNeedsPerson, fmt.Sprintf("the merge needs review: %d %s", len(m.Conflicts), plural(len(m.Conflicts), "conflict", "conflicts"))
	case passing(m.err):
		return m, autoMergeRetry, deref(m.Error)
	case errors.Is(m.err, fs.ErrNotExist):
		if _, err := os.Lstat(cf.Path); errors.Is(err, fs.ErrNotExist) {
			return m, autoMergeGone, ""
		}
	}
	log.Warn("automatic merge of the conflict copy failed; left for a person", "path", cf.Path, "err", deref(m.Error))
	return m, autoMergeNeedsPerson, "the merge failed: " + deref(m.Error)
}

// passing reports whether a failed merge may work when tried again: the
// copy or the file changed while it was merged, another writer held the
// lock, or the merge ran out of time.
func passing(err error) bool {
	return errors.Is(err, ErrCopyChanged) || errors.Is(err, memfile.ErrChanged) ||
		errors.Is(err, memfile.ErrLocked) || errors.Is(err, context.DeadlineExceeded)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// autoMergeTimeout bounds one automatic merge.
const autoMergeTimeout = 30 * time.Second

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
