package palace

import (
	"math"
	"slices"
	"time"

	"github.com/memminer/memminer/memory/govern"
)

// approvedBonus is what an approved note gains, per channel in use, over an
// unmarked one: a quarter of a standard deviation, enough to put it first
// when both state the same fact (they then score alike), too little to lift
// an unrelated approved note over a good match.
const approvedBonus = 0.25

// Filters are the governance filters of a search; the zero value leaves out
// superseded notes and nothing else.
type Filters struct {
	// IncludeSuperseded keeps superseded notes (marked as such).
	IncludeSuperseded bool
	// IncludeInbox keeps unapproved notes, those waiting in an agent's
	// inbox (marked as such).
	IncludeInbox bool
	// Status, when set, keeps only notes of this status.
	Status govern.Status
	// Fresh leaves out stale notes.
	Fresh bool
	// Since and Until, when set, keep notes dated (govern.Note.When) in
	// [Since, Until].
	Since, Until time.Time
	// Tags keeps notes carrying every one of these tags.
	Tags []string
	// Now is the time staleness is measured at; zero means time.Now().
	Now time.Time
	// StaleAfter is how long notes stay fresh when their file does not say;
	// zero means govern.DefaultStaleAfter.
	StaleAfter time.Duration
}

// admits reports whether the filters keep note n of a file last modified
// at mtime.
func (f *Filters) admits(g *govern.Note, mtime time.Time) bool {
	if !f.admitsStatus(g.Status) {
		return false
	}
	if !f.Since.IsZero() || !f.Until.IsZero() {
		when := g.When(mtime)
		if !f.Since.IsZero() && when.Before(f.Since) || !f.Until.IsZero() && when.After(f.Until) {
			return false
		}
	}
	for _, t := range f.Tags {
		if !slices.Contains(g.Tags, t) {
			return false
		}
	}
	if f.Fresh {
		if stale, _ := g.Staleness(mtime, f.Now, f.StaleAfter); stale {
			return false
		}
	}
	return true
}

// admitsStatus reports whether the filters keep a note of status st,
// whatever else it is.
func (f *Filters) admitsStatus(st govern.Status) bool {
	switch {
	case f.Status != govern.None && st != f.Status:
		return false
	case st == govern.Superseded && !f.IncludeSuperseded && f.Status != govern.Superseded:
		return false
	case st == govern.Unapproved && !f.IncludeInbox && f.Status != govern.Unapproved:
		return false
	}
	return true
}

// narrows reports whether the filters can leave out notes other than
// superseded ones.
func (f *Filters) narrows() bool {
	return f.Status != govern.None || f.Fresh || !f.Since.IsZero() || !f.Until.IsZero() || len(f.Tags) > 0
}

// priors returns, by document number of ws, what governance adds to each
// note's fused score: approvedBonus per channel for an approved note, -Inf
// for a note the filters leave out. It returns nil when that is zero for
// every note.
func (f *Filters) priors(ws *wingScores, channels int) []float64 {
	var prior []float64
	docs, narrows := ws.v.marked, f.narrows()
	if narrows {
		docs = ws.v.docs()
	}
	for _, d := range docs {
		// Without narrowing filters a note's status decides, which a
		// frozen wing has without decoding its governance.
		st, admitted := ws.v.statusAt(d), false
		if narrows {
			g := ws.v.govAt(d)
			st, admitted = g.Status, f.admits(g, ws.w.mtimeOf(ws.v.pathAt(d)))
		} else {
			admitted = f.admitsStatus(st)
		}
		p := 0.0
		switch {
		case !admitted:
			p = math.Inf(-1)
		case st == govern.Approved:
			p = approvedBonus * float64(channels)
		}
		if p != 0 {
			if prior == nil {
				prior = make([]float64, len(ws.v.rank))
			}
			prior[d] = p
		}
	}
	return prior
}
