package inproc

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
)

// Inbox lists the inbox items of the palace (inbox.List), files named
// relative to the hive; none when nothing was mined yet.
func (s *Service) Inbox(ctx context.Context, req api.InboxRequest) ([]inbox.Item, error) {
	p, done, err := s.openWings(ctx)
	if err != nil || p == nil {
		return []inbox.Item{}, err
	}
	defer done()
	if req.Wing != "" {
		var known []string
		for _, w := range p.Wings() {
			known = append(known, w.ID)
		}
		if !slices.Contains(known, req.Wing) {
			return nil, palace.UnknownWingError(req.Wing, known)
		}
	}
	items := inbox.List(p, s.hive(), req.Wing, req.All, time.Now())
	if items == nil {
		items = []inbox.Item{}
	}
	return items, nil
}

// hive is the configured hive, for naming files; nil when unset or when
// it cannot be opened.
func (s *Service) hive() *hive.Hive {
	if s.opts.Hive == "" {
		return nil
	}
	h, _ := hive.Open(s.opts.Hive, s.opts.Agents)
	return h
}

// Decide approves or rejects the pending inbox item req.Ref names
// (docs/remember.md, "The inbox"): a rejection marks the inbox line; an
// approval writes the note into memory through Remember, then marks the
// line with where it went. Either way the inbox is mined, so the next
// listing, search and wake-up see the decision; the result says what was
// decided, also when that mine failed.
func (s *Service) Decide(ctx context.Context, req api.DecideRequest) (api.Decision, error) {
	if s.opts.Hive == "" {
		return api.Decision{}, remember.ErrNoHive
	}
	n, it, err := s.findItem(ctx, req.Ref, req.Dir, req.Now)
	if err != nil {
		return api.Decision{}, err
	}
	d := inbox.Decision{By: req.By, Note: req.Note, Now: req.Now}
	res := api.Decision{Decision: "rejected", Wing: n.Wing, File: it.File, Line: it.Line}
	maxBytes := s.opts.MineOptions().MaxFileBytes
	if !req.Approve {
		if err := inbox.MarkRejected(ctx, n, d, maxBytes); err != nil {
			return api.Decision{}, err
		}
		return res, s.mineInbox(ctx, n)
	}
	text, heading, err := inbox.Approval(n, d)
	if err != nil {
		return api.Decision{}, err
	}
	rem, err := s.Remember(ctx, api.RememberRequest{
		Request: remember.Request{Wing: n.Wing, Text: text, Heading: heading},
		Hive:    s.opts.Hive, MaxNoteBytes: req.MaxNoteBytes, Machine: req.Machine,
	})
	if err != nil {
		// Nothing decided; the wing is the caller's to advise with.
		return api.Decision{Wing: n.Wing, File: it.File, Line: it.Line}, err
	}
	where := fmt.Sprintf("%s:%d", rem.File, rem.Line)
	res.Decision, res.Into, res.ID, res.AlreadyInMemory = "approved", &where, rem.ID, rem.DuplicateOf != nil
	if err := inbox.MarkApproved(ctx, n, d, where, maxBytes); err != nil {
		return api.Decision{}, fmt.Errorf("the note is in memory at %s, but marking the inbox failed: %w; approve again to mark it", where, err)
	}
	return res, s.mineInbox(ctx, n)
}

// findItem finds the pending inbox item ref names: a ref that names no
// note gets the inbox's own answer (inbox.ErrNoItem).
func (s *Service) findItem(ctx context.Context, ref, dir string, now time.Time) (palace.Note, inbox.Item, error) {
	p, done, err := s.openWings(ctx)
	if err != nil {
		return palace.Note{}, inbox.Item{}, err
	}
	defer done()
	if p == nil {
		return palace.Note{}, inbox.Item{}, fmt.Errorf("%s: %w (nothing is mined yet)", ref, inbox.ErrNoItem)
	}
	id := ref
	if n, err := ResolveRef(p, s.opts.Hive, dir, ref); err == nil {
		id = n.ID
	} else if !errors.Is(err, api.ErrNoNote) {
		return palace.Note{}, inbox.Item{}, err
	}
	it, n, err := inbox.Find(p, s.hive(), id, now)
	return n, it, err
}

// mineInbox mines the agent directory of inbox note n. The decision is in
// the file either way; a failure says so.
func (s *Service) mineInbox(ctx context.Context, n palace.Note) error {
	dir := filepath.Dir(n.Source)
	if _, err := s.Mine(ctx, api.MineRequest{Path: dir, Wing: n.Wing, Model: s.opts.ModelSpec, Agents: s.opts.Agents}); err != nil {
		return fmt.Errorf("the decision is written, but mining %s failed: %w; the next mine picks it up", n.Source, err)
	}
	return nil
}
