package conflicts

import (
	"context"

	"github.com/memminer/memminer/palace"
)

// Conflicts answers the daemon's GET /conflicts[?wing=ID] (wing
// normalized; empty: every wing).
//
// The answer reflects the hive at the time of the request, whether or not
// Syncthing's events are followed: the wing's agent directories (the whole
// hive without a wing) are walked first and the registry reconciled with
// what is there, so a copy made a moment ago is listed (and alerted, once,
// as any new conflict) and a deleted one is resolved. A wing that is
// neither a wing of the palace nor an agent directory of the hive is
// refused (KnownWing). A walk that failed in part answers what it found
// with ScanError set.
func (c *Component) Conflicts(ctx context.Context, wing string) (List, error) {
	if err := c.readyFor(ctx, wing); err != nil {
		return List{}, err
	}
	scanErr := c.scan(ctx, wing, requestLookupTimeout)
	if err := ctx.Err(); err != nil {
		return List{}, err
	}
	l := c.List().Wing(wing)
	if scanErr != nil {
		l.ScanError = new(scanErr.Error())
	}
	return l, nil
}

// MergeConflicts answers the daemon's POST /conflicts/merge (req.Wing
// normalized): the copies are those Conflicts lists for the wing, limited
// to the request's paths (Select: a path that matches none is a
// *NoCopyError), merged by MergeCopies with the daemon's palace for bases.
// When something was applied the registry is reconciled with the disk at
// once.
func (c *Component) MergeConflicts(ctx context.Context, req MergeRequest) (MergeReport, error) {
	if err := c.readyFor(ctx, req.Wing); err != nil {
		return MergeReport{}, err
	}
	c.scan(ctx, req.Wing, requestLookupTimeout)
	sel, err := Select(c.List().Wing(req.Wing), req.Paths)
	if err != nil {
		return MergeReport{}, err
	}
	c.mu.Lock()
	h := c.host
	c.mu.Unlock()
	var p *palace.Palace
	dir := ""
	if h != nil {
		if p = h.Palace(); p != nil {
			dir = p.Dir()
		}
	}
	rep := MergeCopies(ctx, p, sel, MergeOptions{Apply: req.Apply, AcceptConflicts: req.AcceptConflicts, AcceptRemovals: req.AcceptRemovals, Reviewed: req.Reviewed, PalaceDir: dir, MaxFileBytes: c.opts.MaxFileBytes})
	if req.Apply {
		c.scan(ctx, "", requestLookupTimeout)
	}
	return rep, nil
}

// readyFor waits for the registry's first scan, then checks wing (when
// set) with KnownWing.
func (c *Component) readyFor(ctx context.Context, wing string) error {
	select {
	case <-c.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	if wing == "" {
		return nil
	}
	c.mu.Lock()
	h, reg := c.host, c.reg
	c.mu.Unlock()
	if h == nil || reg == nil {
		return nil // Run failed early; the list is empty anyway
	}
	return KnownWing(wing, reg.hive, PalaceWings(h.Palace()))
}
