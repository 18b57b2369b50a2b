package govern

import (
	"strings"
	"time"
)

// Fields are what search and wake-up JSON say of a note's governance.
// Every key is always present: null or empty, never missing.
type Fields struct {
	// Status is "approved", "superseded", "stale" or null.
	Status *string `json:"status"`
	// Superseded is Status == "superseded", for readers that test one key.
	Superseded bool `json:"superseded"`
	// Date is the note's date, YYYY-MM-DD: the latest date written in it,
	// else its file's mtime (Note.When).
	Date *string `json:"date"`
	// DateSource says where Date comes from: "note" (written in the note
	// or its headings) or "mtime" (its file's modification time, which a
	// copy or a clone resets), null without a date.
	DateSource *string `json:"date_source"`
	// ReviewDate is when the note is due for review, or null.
	ReviewDate *string `json:"review_date"`
	// Stale tells that the note may be out of date, and StaleReason why.
	Stale       bool    `json:"stale"`
	StaleReason *string `json:"stale_reason"`
	// Tags are the note's tags, [] when none.
	Tags []string `json:"tags"`
}

// Fields renders the note's governance for JSON; mtime is its file's, and
// stale and reason its Staleness at query time.
func (g Note) Fields(mtime time.Time, stale bool, reason string) Fields {
	out := Fields{Superseded: g.Status == Superseded, Stale: stale, Tags: g.Tags}
	if g.Status != None {
		s := string(g.Status)
		out.Status = &s
	}
	if when := g.When(mtime); !when.IsZero() {
		d := when.UTC().Format(time.DateOnly)
		src := DateFromNote
		if g.Date.IsZero() {
			src = DateFromMtime
		}
		out.Date, out.DateSource = &d, &src
	}
	if !g.Review.IsZero() {
		d := g.Review.UTC().Format(time.DateOnly)
		out.ReviewDate = &d
	}
	if stale {
		out.StaleReason = &reason
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	return out
}

// Where a note's date comes from (Fields.DateSource).
const (
	DateFromNote  = "note"
	DateFromMtime = "mtime"
)

// DateText is the note's date as text output shows it: a date taken from
// the file's modification time reads "modified YYYY-MM-DD", since it may
// be when the file was copied rather than when the note was written.
// DateTextFor is DateText for a line that also shows text, the note's own
// words: "" when the date is the note's (not its file's mtime) and text
// already says it, as "(added 2026-12-07)" does, so no line prints the
// date twice.
func (f Fields) DateTextFor(text string) string {
	if f.Date != nil && (f.DateSource == nil || *f.DateSource != DateFromMtime) && strings.Contains(text, *f.Date) {
		return ""
	}
	return f.DateText()
}

func (f Fields) DateText() string {
	switch {
	case f.Date == nil:
		return ""
	case f.DateSource != nil && *f.DateSource == DateFromMtime:
		return "modified " + *f.Date
	}
	return *f.Date
}
