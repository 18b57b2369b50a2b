// Package handoff is the wording of handoffs between agents: a note in the
// sender's own memory file hands work to another wing, and a note in the
// receiver's own file accepts it. Both are ordinary notes, written by the
// remember path; this package makes their text and reads it back, so the
// CLI, wake-up and MCP agree on one form. docs/connect.md describes it.
package handoff

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strings"
	"sync"
)

// A handoff note reads "handoff REF to WING: SUMMARY"; its acceptance
// "accepted handoff REF from WING: SUMMARY". REF is "ho-" and 8 hex digits.
// The expressions are compiled at first use, not at every process's start:
// most commands never read a handoff.
var (
	handoffRe = lazyRegexp(`(?is)^(?:[-*+] )?handoff (ho-[0-9a-f]{8}) to ([^\s:]+): (.+)$`)
	acceptRe  = lazyRegexp(`(?is)^(?:[-*+] )?accepted handoff (ho-[0-9a-f]{8}) from ([^\s:]+)(?:: |$)`)
	refRe     = lazyRegexp(`^ho-[0-9a-f]{8}$`)
	// addedRe is the date remember appends to an item.
	addedRe = lazyRegexp(`\s*\((?:added|updated) \d{4}-\d{2}-\d{2}\)\s*$`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// NewRef returns a fresh handoff reference.
func NewRef() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "ho-" + hex.EncodeToString(b[:])
}

// ValidRef reports whether ref has the form of a handoff reference.
func ValidRef(ref string) bool { return refRe().MatchString(ref) }

// Text is the note that hands work to wing to.
func Text(ref, to, summary string) string {
	return "handoff " + ref + " to " + to + ": " + oneLine(summary)
}

// AcceptText is the note that accepts handoff ref from wing from; summary
// (cut to a line) says what was taken over.
func AcceptText(ref, from, summary string) string {
	s := oneLine(summary)
	if r := []rune(s); len(r) > maxAcceptSummary {
		s = strings.TrimSpace(string(r[:maxAcceptSummary])) + "…"
	}
	return "accepted handoff " + ref + " from " + from + ": " + s
}

const maxAcceptSummary = 120

// Note is a handoff read back from a note's text.
type Note struct {
	Ref     string
	To      string
	Summary string
}

// Parse reads a handoff note; false for any other note.
func Parse(text string) (Note, bool) {
	m := handoffRe().FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return Note{}, false
	}
	return Note{Ref: strings.ToLower(m[1]), To: strings.ToLower(m[2]), Summary: oneLine(addedRe().ReplaceAllString(m[3], ""))}, true
}

// ParseAccept reads an acceptance note: the handoff it closes.
func ParseAccept(text string) (ref string, ok bool) {
	m := acceptRe().FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return "", false
	}
	return strings.ToLower(m[1]), true
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
