// Package inbox is the hive's risk-proportional approval: a note an agent
// writes as a hypothesis, or as high-risk, goes to the agent's inbox
// (hive.InboxFileName) instead of its memory, and stays out of recall
// until a person approves it into memory or rejects it. The package
// decides where a note goes (ParseClass, Class.Pending), lists what waits
// (List, Find, Count) and records the person's decision (MarkApproved,
// MarkRejected), always through memfile's
// atomic edits; an item is marked done, never deleted. docs/remember.md
// ("The inbox") has the rules.
package inbox

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memminer/memminer/memory/govern"
)

// ErrBadClass is matched by an unknown confidence, risk or TTL.
var ErrBadClass = errors.New("bad classification")

// Class is how an agent classifies a note it writes: its confidence and
// risk (govern.Verified or govern.Hypothesis, govern.LowRisk or
// govern.HighRisk), and for a verified low-risk note an optional TTL
// after which it is stale until reviewed.
type Class struct {
	Confidence string
	Risk       string
	TTL        time.Duration
}

// ParseClass reads a class as flags and requests spell it; empty values
// are the defaults, verified and low: today's behaviour.
func ParseClass(confidence, risk, ttl string) (Class, error) {
	c := Class{Confidence: strings.ToLower(strings.TrimSpace(confidence)), Risk: strings.ToLower(strings.TrimSpace(risk))}
	if c.Confidence == "" {
		c.Confidence = govern.Verified
	}
	if c.Risk == "" {
		c.Risk = govern.LowRisk
	}
	if c.Confidence != govern.Verified && c.Confidence != govern.Hypothesis {
		return Class{}, fmt.Errorf("%w: confidence %q: want verified or hypothesis", ErrBadClass, confidence)
	}
	if c.Risk != govern.LowRisk && c.Risk != govern.HighRisk {
		return Class{}, fmt.Errorf("%w: risk %q: want low or high", ErrBadClass, risk)
	}
	if strings.TrimSpace(ttl) != "" {
		d, err := govern.ParseAge(ttl)
		if err != nil || d == govern.Never {
			return Class{}, fmt.Errorf("%w: ttl %q: want a length of time such as 30d, 2w or 36h", ErrBadClass, ttl)
		}
		if c.Pending() {
			return Class{}, fmt.Errorf("%w: ttl applies to verified low-risk notes; a %s %s-risk note waits in the inbox until a person approves it", ErrBadClass, c.Confidence, c.Risk)
		}
		c.TTL = d
	}
	return c, nil
}

// Pending reports whether a note of this class goes to the inbox: a
// hypothesis, or anything high-risk. Only a verified low-risk note goes
// straight into memory.
func (c Class) Pending() bool {
	return c.Confidence == govern.Hypothesis || c.Risk == govern.HighRisk
}

// Text returns a note's text as it is written for this class: in the
// inbox with its confidence and risk marker; in memory with a review date
// TTL after today when it has a TTL (govern reads it, and the note is
// stale from then until reviewed).
func (c Class) Text(text string, today time.Time) string {
	switch {
	case c.Pending():
		return text + govern.InboxMarker(c.Confidence, c.Risk)
	case c.TTL > 0:
		return text + govern.ReviewMarker(today.Add(c.TTL).Format(time.DateOnly))
	}
	return text
}

// Title is the first line of an inbox file the first pending note
// creates. Any text below it would be a note, waiting like the others.
func Title(wing string) string { return "# " + wing + "'s inbox (waiting for approval)" }
