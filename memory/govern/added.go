package govern

import (
	"regexp"
	"strings"
	"sync"
)

// AddedMarker is the date marker memminer writes after a note it appends.
func AddedMarker(date string) string { return " (added " + date + ")" }

var addedRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\s*\(added \d{4}-\d{2}-\d{2}\)`)
})

// WithoutAdded returns text without its AddedMarker dates: they say when a
// note was written, not what it says, so two notes of the same fact
// written on different days (or one and the request to write it again)
// compare alike.
func WithoutAdded(text string) string {
	if !mayAdded(text) {
		return text
	}
	return addedRe().ReplaceAllString(text, "")
}

// ReviewMarker is the review date memminer writes after a note remembered
// with a time to live (remember --ttl).
func ReviewMarker(date string) string { return " (review: " + date + ")" }

var reviewMarkerRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\s*\(review: \d{4}-\d{2}-\d{2}\)`)
})

// CapturedMarker is the provenance memminer writes after a note it
// captured from what the user said in an agent session (memminer
// capture): the client and the session. The date is the note's
// AddedMarker.
func CapturedMarker(client, session string) string {
	return " (" + capturedPrefix + client + " session " + session + ")"
}

const capturedPrefix = "captured from the user's words: "

var capturedMarkerRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\s*\(captured from the user's words: [^()]*\)`)
})

// WithoutMarkers returns text without what memminer writes after a note
// beside its words (AddedMarker, ReviewMarker, CapturedMarker): the same
// fact remembered on another day, with a time to live, or captured in
// another session compares alike.
func WithoutMarkers(text string) string {
	text = WithoutAdded(text)
	if strings.Contains(text, "(review: ") {
		text = reviewMarkerRe().ReplaceAllString(text, "")
	}
	if strings.Contains(text, capturedPrefix) {
		text = capturedMarkerRe().ReplaceAllString(text, "")
	}
	return text
}

// Statement returns what a note states: text without the markers memminer
// writes after it (WithoutMarkers) and without an approval marker
// ("status: approved —", "[approved]", "#approved"), so an approved note
// and the same words unmarked say the same thing.
func Statement(text string) string {
	text = WithoutMarkers(text)
	if mayApprove(fold(text)) {
		text = approvedRe().ReplaceAllString(text, "")
	}
	return strings.TrimLeft(text, " \t—–-:")
}
