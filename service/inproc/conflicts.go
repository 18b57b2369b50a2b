package inproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
)

// Conflicts lists the open conflicts without a daemon: a scan of the hive
// (only req.Wing's part when set), or of the directories the palace's
// wings were mined from when no hive is configured, reusing the records
// of the registry a daemon left. A wing neither the hive nor the palace
// has is refused by conflicts.KnownWing, the daemon's rule. A scan that
// found some copies but not all returns them with ScanError set and no
// error.
func (s *Service) Conflicts(ctx context.Context, req api.ConflictsRequest) (conflicts.List, error) {
	p, done, err := s.openWings(ctx)
	if err != nil {
		return conflicts.List{}, err
	}
	defer done()
	l, err := s.scanConflicts(ctx, p, req.Wing)
	if l.Conflicts == nil && err != nil {
		return conflicts.List{}, err
	}
	return l, nil
}

// MergeConflicts merges the copies Conflicts lists for req.Wing, limited
// to req.Paths (conflicts.Select), with the palace's mined contents for
// the bases (conflicts.MergeCopies).
func (s *Service) MergeConflicts(ctx context.Context, req conflicts.MergeRequest) (conflicts.MergeReport, error) {
	p, done, err := s.openWings(ctx)
	if err != nil {
		return conflicts.MergeReport{}, err
	}
	defer done()
	list, err := s.scanConflicts(ctx, p, req.Wing)
	if err != nil {
		return conflicts.MergeReport{}, err
	}
	sel, err := conflicts.Select(list, req.Paths)
	if err != nil {
		return conflicts.MergeReport{}, err
	}
	return conflicts.MergeCopies(ctx, p, sel, conflicts.MergeOptions{
		Apply: req.Apply, AcceptConflicts: req.AcceptConflicts, AcceptRemovals: req.AcceptRemovals, Reviewed: req.Reviewed,
		PalaceDir: s.opts.Dir, MaxFileBytes: s.opts.MineOptions().MaxFileBytes,
	}), nil
}

// openWings opens the palace as its files hold it, for its wings and
// their mined contents; nil when nothing was mined yet.
func (s *Service) openWings(ctx context.Context) (*palace.Palace, func(), error) {
	if s.opts.Palace == nil && !palace.HasWings(s.opts.Dir) {
		return nil, func() {}, nil
	}
	return s.open(ctx, nil, AsIs, nil)
}

// scanConflicts lists the open conflicts of wing (empty: every wing) in
// the hive, or without one in the roots of p's wings. On a partial
// failure it returns what it found along with the error; Conflicts is nil
// only when nothing could be scanned.
func (s *Service) scanConflicts(ctx context.Context, p *palace.Palace, wing string) (conflicts.List, error) {
	var h *hive.Hive
	if s.opts.Hive != "" {
		if _, err := os.Stat(s.opts.Hive); err != nil {
			return conflicts.List{}, fmt.Errorf("hive: %w", err)
		}
		var err error
		if h, err = hive.Open(s.opts.Hive, s.opts.Agents); err != nil {
			return conflicts.List{}, err
		}
	}
	var roots []conflicts.WingRoots
	if h == nil {
		if p != nil {
			for _, w := range p.Wings() {
				roots = append(roots, conflicts.WingRoots{Wing: w.ID, Roots: w.Roots})
			}
		}
		if len(roots) == 0 {
			return conflicts.List{}, conflicts.ErrNothingToScan
		}
	}
	if wing != "" {
		if err := conflicts.KnownWing(wing, h, conflicts.PalaceWings(p)); err != nil {
			return conflicts.List{}, err
		}
		roots = slices.DeleteFunc(roots, func(r conflicts.WingRoots) bool { return r.Wing != wing })
	}
	known := s.registryRecords(ctx)
	var found []conflicts.Conflict
	var err error
	if h != nil {
		found, err = conflicts.ScanHive(ctx, s.opts.Hive, s.opts.Agents, wing, known)
	} else {
		found, err = conflicts.ScanWings(ctx, roots, known)
	}
	if found == nil && err != nil {
		return conflicts.List{}, err
	}
	l := conflicts.List{Conflicts: found}.Wing(wing)
	if err != nil {
		l.ScanError = new(err.Error())
	}
	return l, err
}

// registryRecords are the conflicts the registry a daemon left records;
// one that cannot be read is said and, when corrupt, moved aside.
func (s *Service) registryRecords(ctx context.Context) []conflicts.Conflict {
	known, err := conflicts.ReadRegistry(s.opts.Dir)
	if err == nil {
		return known
	}
	s.warn("%v; listing what is on disk without it", err)
	if errors.Is(err, conflicts.ErrCorruptRegistry) {
		s.setAsideRegistry(ctx)
	}
	return nil
}

// setAsideRegistry moves a corrupt conflict registry aside when no writer
// holds the palace (else the writer's next save replaces it), so the
// corruption is reported once, not by every command until a daemon runs.
func (s *Service) setAsideRegistry(ctx context.Context) {
	if s.opts.Palace != nil {
		return // the daemon's registry is its own to replace
	}
	// No wing is loaded: only the lock is wanted.
	p, err := s.Open(ctx, nil, AsIs, []string{"-"})
	if err != nil {
		return
	}
	defer p.Close()
	if p.Lock(ctx, 0) != nil {
		return
	}
	if aside, err := conflicts.SetAsideCorrupt(s.opts.Dir); err != nil {
		s.warn("%v", err)
	} else if aside != "" {
		s.warn("moved the corrupt registry aside to %s; conflicts are recorded again from what is on disk", aside)
	}
}

// conflictsOpen counts the open conflicts as Conflicts finds them, for
// status: what cannot be scanned is said and counts nothing.
func (s *Service) conflictsOpen(ctx context.Context, p *palace.Palace) int {
	if s.opts.Hive == "" && (p == nil || len(p.Wings()) == 0) {
		return 0 // nothing mined, no hive: nothing to scan
	}
	l, err := s.scanConflicts(ctx, p, "")
	if err != nil {
		s.warn("open conflicts may be undercounted: %v", err)
	}
	return len(l.Conflicts)
}
