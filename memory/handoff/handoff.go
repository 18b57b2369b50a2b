// Package handoff is the wording of handoffs between agents: a note in the
// sender's own memory file hands work to another wing, and a note in the
// receiver's own file accepts it. Both are ordinary notes, written by the
// remember path; this package makes their text and reads it back, so the
// CLI, wake-up and MCP agree on one form. docs/connect.md describes it.
package handoff

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
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

// Claim is one handoff note carrying a ref: the wing whose own memory
// holds it (the sender), its date (YYYY-MM-DD, "" when unknown), whether
// it is withdrawn (superseded), and where it is.
type Claim struct {
	Note
	From      string
	Date      string
	Withdrawn bool
	Source    string
	Line      int
}

// ErrContested means two wings wrote a handoff with the same ref on its
// first day: which one sent it cannot be told, so it belongs to neither.
var ErrContested = errors.New("two wings claim this handoff reference")

// Owner returns the handoff a ref belongs to among claims, every handoff
// note carrying it (none of them from an inbox: an unapproved note is no
// handoff): the first, by date, in the sender's own wing. A wing that
// copies a ref it read later writes a note of its own that is no
// handoff, so it can neither take the handoff over nor block it; claims
// of two wings on the first day are ErrContested. ok is false for no
// claims.
func Owner(claims []Claim) (owner Claim, ok bool, err error) {
	if len(claims) == 0 {
		return Claim{}, false, nil
	}
	sorted := slices.Clone(claims)
	slices.SortStableFunc(sorted, func(a, b Claim) int {
		switch {
		case a.Date == b.Date:
			return 0
		case a.Date == "":
			return 1 // undated last
		case b.Date == "":
			return -1
		}
		return strings.Compare(a.Date, b.Date)
	})
	first := sorted[0]
	for _, c := range sorted[1:] {
		if c.Date != first.Date {
			break
		}
		if c.From != first.From {
			return Claim{}, false, fmt.Errorf("handoff %s: %w on %s (%s and %s); ask the sender for a new handoff", first.Ref, ErrContested, first.Date, first.From, c.From)
		}
	}
	return first, true, nil
}
