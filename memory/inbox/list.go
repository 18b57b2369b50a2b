package inbox

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace"
)

// States of an inbox item.
const (
	Pending  = "pending"
	Approved = "approved"
	Rejected = "rejected"
)

// Errors callers tell apart.
var (
	// ErrNoItem means a reference names no inbox item of the palace.
	ErrNoItem = errors.New("no such inbox item")
	// ErrDecided means the item was approved or rejected already.
	ErrDecided = errors.New("inbox item already decided")
)

// Item is one note of an inbox, as `memminer inbox --json` prints it.
type Item struct {
	// Ref is the note's id, what approve and reject take.
	Ref  string `json:"ref"`
	Wing string `json:"wing"`
	// File is the inbox relative to the hive, Path absolute.
	File string `json:"file"`
	Path string `json:"path"`
	Line int    `json:"line"`
	// Text is the note as the agent wrote it, without the markers.
	Text string `json:"text"`
	// Confidence and Risk are the class it was written with; "" for an
	// item written into the inbox by hand, without the marker.
	Confidence string `json:"confidence"`
	Risk       string `json:"risk"`
	// Added is the note's date (YYYY-MM-DD) and AgeDays its age in whole
	// days at the listing's now.
	Added   string `json:"added"`
	AgeDays int    `json:"age_days"`
	// State is Pending, Approved or Rejected; By, On and Note say who
	// decided, when, and where it went or why (null while pending).
	State string  `json:"state"`
	By    *string `json:"by"`
	On    *string `json:"on"`
	Note  *string `json:"note"`
}

// List returns the inbox items of the palace's wings (of wing alone when
// set), pending ones only unless all is set, oldest first. Files are named
// by hive.SourceName of h (nil: no hive known).
func List(p *palace.Palace, h *hive.Hive, wing string, all bool, now time.Time) []Item {
	var out []Item
	for _, w := range p.Wings() {
		if wing != "" && w.ID != wing {
			continue
		}
		mtimes := map[string]time.Time{}
		for _, s := range p.SourceHeads(w.ID) {
			mtimes[s.Path] = s.Mtime
		}
		for _, n := range p.Notes(w.ID) {
			it, ok := itemOf(n, h, mtimes[n.Source], now)
			if ok && (all || it.State == Pending) {
				out = append(out, it)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Item) int {
		if c := strings.Compare(a.Added, b.Added); c != 0 {
			return c
		}
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return out
}

// Count returns how many notes wait in the palace's inboxes. Only the
// notes of wings that have an inbox are read (palace.Notes copies them);
// the other wings' source heads are read as they are held, so a status
// does not read every wing whole.
func Count(p *palace.Palace) int {
	n := 0
	for _, w := range p.Wings() {
		if slices.ContainsFunc(p.SourceHeads(w.ID), func(s palace.SourceHead) bool { return hive.IsInboxFile(s.Path) }) {
			n += len(PendingIDs(p.Notes(w.ID)))
		}
	}
	return n
}

// Find returns the pending inbox item ref names (a note id) and its note.
// Its error matches ErrNoItem or ErrDecided.
func Find(p *palace.Palace, h *hive.Hive, ref string, now time.Time) (Item, palace.Note, error) {
	ref = strings.TrimSpace(ref)
	for _, w := range p.Wings() {
		for _, n := range p.Notes(w.ID) {
			if n.ID != ref {
				continue
			}
			var mtime time.Time
			it, ok := itemOf(n, h, mtime, now)
			switch {
			case !ok:
				return Item{}, n, fmt.Errorf("%s: %w (note %s:%d is in no inbox)", ref, ErrNoItem, it.File, n.Line)
			case it.State != Pending:
				return it, n, fmt.Errorf("%s: %w: %s %s by %s", ref, ErrDecided, it.State, *it.On, *it.By)
			}
			return it, n, nil
		}
	}
	return Item{}, palace.Note{}, fmt.Errorf("%s: %w: no pending item has this ref (an approved or rejected item gets a new one: memminer inbox --all --json)", ref, ErrNoItem)
}

// itemOf is note n as an inbox item; false when it is no inbox note.
func itemOf(n palace.Note, h *hive.Hive, mtime, now time.Time) (Item, bool) {
	it := Item{Ref: n.ID, Wing: n.Wing, File: hive.SourceName(h, n.Source), Path: n.Source, Line: n.Line}
	if !hive.IsInboxFile(n.Source) {
		return it, false
	}
	marks := govern.ReadInboxItem(n.Text)
	switch {
	case n.Governance.Status == govern.Unapproved:
		it.State = Pending
	case marks.Decision != "":
		it.State = marks.Decision
		on := marks.On.Format(time.DateOnly)
		it.By, it.On, it.Note = &marks.By, &on, &marks.Note
	default:
		return it, false // superseded by hand: history, not an item
	}
	it.Text = govern.WithoutInboxMarkers(n.Text)
	it.Confidence, it.Risk = marks.Confidence, marks.Risk
	when := marks.Added
	if when.IsZero() {
		when = n.Governance.When(mtime)
	}
	if !when.IsZero() {
		it.Added = when.UTC().Format(time.DateOnly)
		if age := now.Sub(when); age > 0 {
			it.AgeDays = int(age / (24 * time.Hour))
		}
	}
	return it, true
}
