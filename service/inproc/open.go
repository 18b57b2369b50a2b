package inproc

import (
	"context"
	"errors"
	"fmt"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
)

// Access says how a call uses the palace, and so which lock it takes.
type Access int

const (
	// Read takes no lock; damaged wings and a damaged manifest are rebuilt
	// and saved when no writer is busy.
	Read Access = iota
	// Write takes the writer lock; mine.Mine rebuilds damaged wings first.
	Write
	// DryRun takes no lock and saves nothing, ever.
	DryRun
	// AsIs takes no lock and repairs nothing: the palace as its files hold
	// it, damaged wings listed (Palace.Damaged), for a reader that reports
	// on the palace or only needs what it records of its wings.
	AsIs
)

// open returns the palace for a call, and what closes it: the served
// palace as it is (closed by its owner), or Dir opened for access.
func (s *Service) open(ctx context.Context, e embed.Embedder, access Access, wings []string) (*palace.Palace, func(), error) {
	return s.openWith(ctx, palace.Options{Embedder: e, Wings: wings}, access)
}

// openWith is open with opts (Embedder, Wings, Unchanged) given; a served
// palace is returned as it is.
func (s *Service) openWith(ctx context.Context, opts palace.Options, access Access) (*palace.Palace, func(), error) {
	if s.opts.Palace != nil {
		return s.opts.Palace, func() {}, nil
	}
	p, err := s.openDir(ctx, opts, access)
	if err != nil {
		return nil, nil, err
	}
	return p, func() { p.Close() }, nil
}

// Open opens the palace directory for access, limited to wings when
// given. Damaged wings are rebuilt from their markdown, and Repaired told.
func (s *Service) Open(ctx context.Context, e embed.Embedder, access Access, wings []string) (*palace.Palace, error) {
	return s.openDir(ctx, palace.Options{Embedder: e, Wings: wings}, access)
}

// openDir is Open with opts (Embedder, Wings, Unchanged) given.
func (s *Service) openDir(ctx context.Context, opts palace.Options, access Access) (*palace.Palace, error) {
	opts.ReadOnly, opts.LockTimeout, opts.Logger = access != Write, s.opts.LockTimeout, s.opts.Logger
	p, err := palace.Open(ctx, s.opts.Dir, opts)
	if err != nil {
		return nil, err
	}
	if access == Write || access == AsIs || (len(p.Damaged()) == 0 && !p.ManifestRebuilt()) {
		return p, nil
	}
	if access == Read {
		// Save what gets rebuilt, unless a writer is busy (it will) or the
		// palace cannot be written (a read-only disk): then the rebuild
		// serves this call from memory, and the intact wings with it.
		err := p.Lock(ctx, 0)
		switch {
		case err == nil, errors.Is(err, palace.ErrLocked):
		case ctx.Err() != nil:
			return nil, err
		default:
			s.warn("cannot save repairs to the palace (%v); rebuilding in memory for this command", err)
		}
	}
	rs := mine.Repair(ctx, p, s.opts.MineOptions())
	if p.Writable() { // Read, with the lock taken
		err := p.Flush()
		if err == nil {
			err = repairError(rs)
		}
		if err != nil && ctx.Err() == nil {
			// The lock could be taken but the repair failed: if because the
			// wings cannot be written (an immutable or read-only wings
			// directory), a rebuild in memory serves this call, and the
			// intact wings with it; if that fails too, the rebuild is what
			// failed, and its results are reported.
			p.Close()
			opts.ReadOnly = true
			mem, oerr := palace.Open(ctx, s.opts.Dir, opts)
			if oerr != nil {
				return nil, oerr
			}
			p, rs = mem, mine.Repair(ctx, mem, s.opts.MineOptions())
			if repairError(rs) == nil {
				s.warn("cannot save repairs to the palace (%v); rebuilt in memory for this command", err)
			}
		}
	}
	if s.opts.Repaired != nil {
		s.opts.Repaired(rs)
	}
	return p, nil
}

// repairError is the first failure of rs, or nil.
func repairError(rs []mine.Repaired) error {
	for _, r := range rs {
		if r.Err != nil {
			return fmt.Errorf("wing %s: %s", r.Wing, *r.Err)
		}
	}
	return nil
}
