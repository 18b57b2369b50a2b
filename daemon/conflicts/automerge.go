package conflicts

import (
	"context"
	"os"
	"time"

	"github.com/memminer/memminer/hive"
)

// alert logs a new conflict and queues its command and webhook; with
// AutoMerge it first merges the copy when that is clean, and then alerts
// it as merged.
func (c *Component) alert(cf Conflict) {
	c.mu.Lock()
	log := c.log
	c.mu.Unlock()
	cf.Action = ActionOpen
	switch m, outcome := c.autoMerge(cf); outcome {
	case autoMerged:
		cf.Action = ActionMerged
		log.Warn("syncthing conflict merged: the copy merged cleanly into the original and was removed; the replaced contents are kept",
			"wing", cf.Wing, "path", cf.Path, "original", cf.Original, "device", cf.Device, "device_name", cf.DeviceName,
			"from_copy", len(m.FromCopy), "removed", len(m.Removed), "kept_in", *m.Backup)
		c.alerts.enqueue(cf)
		return
	case autoMergeElsewhere:
		c.alertUnlessMerged(cf)
		return
	}
	c.alertOpen(cf)
}

// alertOpen logs and queues the alert of an open conflict.
func (c *Component) alertOpen(cf Conflict) {
	c.mu.Lock()
	log := c.log
	c.mu.Unlock()
	msg := "syncthing conflict: a memory file has a conflict copy; merge it with memminer conflicts merge, or by hand and delete the copy"
	if cf.Markers {
		msg = "git conflict: a memory file holds conflict markers; resolve them in Git (memminer git setup merges memory files note by note)"
	}
	log.Warn(msg,
		"wing", cf.Wing, "path", cf.Path, "original", cf.Original, "device", cf.Device, "device_name", cf.DeviceName, "found_by", cf.FoundBy)
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
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := os.Lstat(cf.Path); err != nil {
			log.Info("conflict copy merged by the device it names", "path", cf.Path, "device", cf.Device)
			return
		}
		c.alertOpen(cf)
	})
}

// What autoMerge did.
type autoMergeOutcome int

const (
	autoMergeNot       autoMergeOutcome = iota // not merged: alert as open
	autoMerged                                 // merged and resolved
	autoMergeElsewhere                         // left to the device the copy names
)

// DefaultAutoMergeWait is how long a device waits for the device named in
// a conflict copy to merge it before alerting it as open.
const DefaultAutoMergeWait = 30 * time.Second

// autoMerge merges cf when AutoMerge is on, this device is the one to
// merge it, and the merge is clean (the copy is then resolved in the
// registry).
func (c *Component) autoMerge(cf Conflict) (CopyMerge, autoMergeOutcome) {
	if !c.opts.AutoMerge || cf.Markers || !hive.IsMemoryFile(cf.Original) || cf.Wing == "" {
		return CopyMerge{}, autoMergeNot
	}
	c.mu.Lock()
	h, reg, log := c.host, c.reg, c.log
	c.mu.Unlock()
	if h == nil || reg == nil {
		return CopyMerge{}, autoMergeNot
	}
	ctx, cancel := context.WithTimeout(context.Background(), autoMergeTimeout)
	defer cancel()
	if c.opts.Syncthing != nil {
		// Only the device the copy names merges it: a second device
		// writing the same merge at the same time would make a new
		// conflict.
		st, err := c.opts.Syncthing.SystemStatus(ctx)
		if err != nil {
			log.Info("not merging the conflict copy automatically: cannot ask Syncthing which device this is", "path", cf.Path, "err", err)
			return CopyMerge{}, autoMergeNot
		}
		if cf.Device != "" && st.MyID.Short() != cf.Device {
			return CopyMerge{}, autoMergeElsewhere
		}
	}
	p := h.Palace()
	dir := ""
	if p != nil {
		dir = p.Dir()
	}
	rep := MergeCopies(ctx, p, []Conflict{cf}, MergeOptions{Apply: true, PalaceDir: dir, MaxFileBytes: c.opts.MaxFileBytes})
	m := rep.Merges[0]
	if !m.Applied {
		if m.Status != StatusNeedsReview {
			log.Warn("automatic merge of the conflict copy failed; left for a person", "path", cf.Path, "err", deref(m.Error))
		}
		return m, autoMergeNot
	}
	if _, _, err := reg.resolve(cf.Path); err != nil {
		c.noteSave(err)
	}
	return m, autoMerged
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
