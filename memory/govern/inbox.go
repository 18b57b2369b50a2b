package govern

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
)

// InInbox returns f for a file that is an agent's inbox (hive.IsInboxFile):
// every note in it is Unapproved, unless it is marked done (approved into
// memory, or rejected), which makes it Superseded history.
func InInbox(f File) File {
	f.Status, f.Reason = Unapproved, "waiting in the inbox for approval"
	return f
}

// The markers of an inbox item. What the agent said of the note, written
// when it enters the inbox, and what a person decided, added at the end of
// its first line when it leaves (the item stays as history).
const (
	// Verified and Hypothesis are the confidences a note is written with.
	Verified   = "verified"
	Hypothesis = "hypothesis"
	// LowRisk and HighRisk are the risks.
	LowRisk  = "low"
	HighRisk = "high"
)

// InboxMarker is what an inbox item carries after its text: the
// confidence and risk it was written with, " (inbox: hypothesis, risk high)".
func InboxMarker(confidence, risk string) string {
	return " (inbox: " + confidence + ", risk " + risk + ")"
}

// ApprovedInboxMarker is what approving an inbox item adds to its first
// line: who approved it, when, and where it went.
func ApprovedInboxMarker(date, by, into string) string {
	return " (inbox: approved " + date + " by " + by + " into " + into + ")"
}

// RejectedInboxMarker is what rejecting an inbox item adds to its first
// line: who rejected it, when and why.
func RejectedInboxMarker(date, by, why string) string {
	return " (inbox: rejected " + date + " by " + by + ": " + why + ")"
}

// ApprovedMarker is what a note approved from the inbox carries in memory:
// a status governance reads as approved, attributed.
func ApprovedMarker(date, by string) string {
	return " (status: approved " + date + " by " + by + ")"
}

var (
	inboxItemRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\s*\(inbox: (verified|hypothesis), risk (low|high)\)`)
	})
	inboxDoneRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\(inbox: (approved|rejected) (\d{4}-\d{2}-\d{2}) by ([^:)]+?)(?: into ([^)]*)|: ([^)]*))?\)`)
	})
)

// InboxItem is what the markers of an inbox item's text say.
type InboxItem struct {
	// Confidence and Risk are as written ("" when the marker is missing).
	Confidence, Risk string
	// Decision is "approved", "rejected" or "" while the item is pending;
	// On, By and Note (where it went, or why it was rejected) say more.
	Decision string
	On       time.Time
	By, Note string
	// Added is the date of its AddedMarker (zero without one).
	Added time.Time
}

// ReadInboxItem reads the markers of an inbox item's text.
func ReadInboxItem(text string) InboxItem {
	var it InboxItem
	if m := inboxItemRe().FindStringSubmatch(text); m != nil {
		it.Confidence, it.Risk = m[1], m[2]
	}
	if m := inboxDoneRe().FindStringSubmatch(text); m != nil {
		it.Decision, it.By = m[1], strings.TrimSpace(m[3])
		it.On, _ = time.Parse(time.DateOnly, m[2])
		it.Note = m[4] + m[5]
	}
	if m := addedRe().FindString(text); m != "" {
		it.Added, _ = time.Parse(time.DateOnly, Dates(m)[0])
	}
	return it
}

// WithoutInboxMarkers returns an inbox item's text as the agent wrote it:
// without its confidence and risk marker, a decision's marker and its
// AddedMarker date.
func WithoutInboxMarkers(text string) string {
	if !strings.Contains(text, "(inbox: ") {
		return strings.TrimSpace(WithoutAdded(text))
	}
	text = inboxDoneRe().ReplaceAllString(inboxItemRe().ReplaceAllString(text, ""), "")
	return strings.TrimSpace(WithoutAdded(text))
}

// inboxDone reports whether text is an inbox item marked done, and why.
func inboxDone(text string) (string, bool) {
	m := inboxDoneRe().FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	return fmt.Sprintf("%s in the inbox on %s by %s", m[1], m[2], strings.TrimSpace(m[3])), true
}
