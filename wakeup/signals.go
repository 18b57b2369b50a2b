package wakeup

import (
	"math"
	"regexp"
	"strings"
	"time"
)

// Marker strengths: how much an explicit marker says "this matters".
const (
	markPinned    = 1.0
	markImportant = 0.8 // "important", "!"
	markDecision  = 0.6 // "decision", "rule"
)

var (
	// A label opening the note: "Decision:", "**Rule** -", "[x] Important:".
	labelRe = regexp.MustCompile(`(?i)^(?:\[[ x]\]\s*)?[*_]{0,2}(decisions?|decided|rules?|important|pinned)[*_]{0,2}\s*(?:[:—–-]|[*_]{0,2}\s*$)`)
	// A tag anywhere: "(pinned)", "[important]", "#decision", "{rule}".
	tagRe = regexp.MustCompile(`(?i)(?:[(\[{]\s*(decision|rule|important|pinned)\s*[)\]}]|(?:^|\s)#(decision|rule|important|pinned)\b)`)
	// Shouting is a marker too: "IMPORTANT" or "PINNED" in capitals.
	shoutRe = regexp.MustCompile(`\b(IMPORTANT|PINNED|DECISION|RULE)\b`)
	// A heading component naming what is below it: "Decisions", "Rules", "Pinned".
	headingMarkRe = regexp.MustCompile(`(?i)\b(decisions?|rules?|important|pinned)\b`)

	// Inline supersession: "status: superseded", "(superseded)", "superseded by …".
	supersededRe = regexp.MustCompile(`(?i)(?:\bstatus\s*:\s*\**superseded\b|[(\[]\s*superseded\s*[)\]]|\bsuperseded\s+by\b|#superseded\b)`)
	// Inline staleness: "status: deprecated", "(obsolete)", "#stale".
	staleRe = regexp.MustCompile(`(?i)(?:\bstatus\s*:\s*\**(?:stale|deprecated|obsolete|archived|outdated)\b|[(\[]\s*(?:stale|deprecated|obsolete|archived|outdated)\s*[)\]]|#(?:stale|deprecated|obsolete|outdated)\b)`)
	// A heading naming a section of history: "Archive", "Deprecated", "Done".
	staleHeadingRe = regexp.MustCompile(`(?i)^(?:archived?|deprecated|obsolete|outdated|stale|done|old)\b`)
	// A completed task, "[x] …", is done and rarely needed at session start.
	doneRe = regexp.MustCompile(`^\[[xX]\]\s`)
)

// markerOf returns the strongest explicit marker of a note and whether it is
// pinned. Markers count in the note's text as a label at its start, a tag,
// or a capitalised word, and in its heading path as a heading word; a note
// or heading marked with "!" (see bang) is important.
func markerOf(text, heading string) (float64, bool) {
	best := 0.0
	pinned := false
	take := func(word string) {
		w := strings.ToLower(word)
		switch {
		case strings.HasPrefix(w, "pinned"):
			best, pinned = math.Max(best, markPinned), true
		case strings.HasPrefix(w, "important"):
			best = math.Max(best, markImportant)
		case w != "":
			best = math.Max(best, markDecision)
		}
	}
	t := strings.TrimSpace(text)
	// The regular expressions run only on text that holds a marker word:
	// most notes hold none, and Build sees every note of the palace.
	if mentionsAny(strings.ToLower(t), markerWords) {
		if m := labelRe.FindStringSubmatch(t); m != nil {
			take(m[1])
		}
		for _, m := range tagRe.FindAllStringSubmatch(t, -1) {
			take(m[1] + m[2])
		}
		for _, m := range shoutRe.FindAllStringSubmatch(t, -1) {
			take(m[1])
		}
	}
	if bang(t) {
		best = math.Max(best, markImportant)
	}
	hm, hp := headingMarker(heading)
	best = math.Max(best, hm)
	return best, pinned || hp
}

// markerWords are the words every marker contains, in lower case.
var markerWords = []string{"decision", "decided", "rule", "important", "pinned"}

// mentionsAny reports whether s contains any of words.
func mentionsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// headingMarker is the marker a heading path gives the notes below it.
func headingMarker(heading string) (float64, bool) {
	best, pinned := 0.0, false
	for _, h := range headingParts(heading) {
		if mentionsAny(strings.ToLower(h), markerWords) {
			for _, m := range headingMarkRe.FindAllStringSubmatch(h, -1) {
				switch w := strings.ToLower(m[1]); {
				case w == "pinned":
					best, pinned = math.Max(best, markPinned), true
				case w == "important":
					best = math.Max(best, markImportant)
				default:
					best = math.Max(best, markDecision)
				}
			}
		}
		if bang(h) || strings.HasSuffix(h, "!") {
			best = math.Max(best, markImportant)
		}
	}
	return best, pinned
}

// bang reports whether s is marked with "!": a leading "!" or "**!" (not
// an image, "![…]"), "(!)", "❗" or "⚠". A heading is also marked by a
// trailing "!" (headingMarker); prose often ends with one, so a note is not.
func bang(s string) bool {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "[ ]"))
	switch {
	case strings.HasPrefix(s, "!") && !strings.HasPrefix(s, "!["):
		return true
	case strings.Contains(s, "(!)") || strings.Contains(s, "❗"):
		return true
	case strings.HasPrefix(s, "**!") || strings.HasPrefix(s, "⚠"):
		return true
	}
	return false
}

// headingParts splits a heading path "A > B > C" into its headings.
func headingParts(heading string) []string {
	if heading == "" {
		return nil
	}
	parts := strings.Split(heading, " > ")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// superseded reports whether a note says it is superseded, inline or by its
// heading path ("## Superseded").
func superseded(text, heading string) bool {
	if strings.Contains(strings.ToLower(text), "superseded") && supersededRe.MatchString(text) {
		return true
	}
	for _, h := range headingParts(heading) {
		if strings.Contains(strings.ToLower(h), "superseded") {
			return true
		}
	}
	return false
}

// supersededSource reports whether a file's frontmatter marks all of it
// superseded: status: superseded, or a superseded_by key.
func supersededSource(fm map[string]string) bool {
	if strings.Contains(strings.ToLower(fm["status"]), "superseded") {
		return true
	}
	_, ok := fm["superseded_by"]
	return ok
}

// staleSource reports whether a file's frontmatter marks it stale.
func staleSource(fm map[string]string) bool {
	switch strings.ToLower(strings.TrimSpace(fm["status"])) {
	case "stale", "deprecated", "obsolete", "archived", "outdated":
		return true
	}
	return false
}

// staleNote reports whether a note is clearly stale by what it says: a
// stale status or tag, a completed task, text struck through as a whole, or
// a heading naming an archive.
func staleNote(text, heading string) bool {
	t := strings.TrimSpace(text)
	if doneRe.MatchString(t) {
		return true
	}
	if mentionsAny(strings.ToLower(t), staleWords) && staleRe.MatchString(t) {
		return true
	}
	if strings.HasPrefix(t, "~~") && strings.HasSuffix(t, "~~") {
		return true
	}
	for _, h := range headingParts(heading) {
		if staleHeadingRe.MatchString(h) {
			return true
		}
	}
	return false
}

// staleWords are the words every stale marker contains, in lower case.
var staleWords = []string{"stale", "deprecated", "obsolete", "archived", "outdated"}

// writtenDate returns the latest calendar date (YYYY-MM-DD) written in the
// note or its heading path, such as "(added 2026-05-17)" or a journal
// heading "## 2026-11-03". Dates after now are taken as now: a deadline or a
// plan is current, not from the future.
func writtenDate(text, heading string, now time.Time) (time.Time, bool) {
	var best time.Time
	found := false
	for _, s := range []string{text, heading} {
		for _, m := range dates(s) {
			d, err := time.Parse("2006-01-02", m)
			if err != nil {
				continue // 2026-13-45 is not a date
			}
			if !found || d.After(best) {
				best, found = d, true
			}
		}
	}
	if found && !now.IsZero() && best.After(now) {
		best = now
	}
	return best, found
}

// decay is the weight of something age old: 1 when new, halving every
// half-life. Ages below zero count as new.
func decay(age, halfLife time.Duration) float64 {
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(halfLife))
}

// dates returns the YYYY-MM-DD strings in s that are not part of a longer
// run of digits or letters.
func dates(s string) []string {
	var out []string
	for i := 0; i+10 <= len(s); i++ {
		if s[i+4] != '-' || s[i+7] != '-' || !digits(s[i:i+4]) || !digits(s[i+5:i+7]) || !digits(s[i+8:i+10]) {
			continue
		}
		if i > 0 && isWordByte(s[i-1]) || i+10 < len(s) && isWordByte(s[i+10]) {
			continue
		}
		out = append(out, s[i:i+10])
		i += 9
	}
	return out
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isWordByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_'
}
