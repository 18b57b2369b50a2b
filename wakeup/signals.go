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
	// A heading component naming what is below it: "Decisions", "Rules", "Pinned".
	headingMarkRe = regexp.MustCompile(`(?i)\b(decisions?|rules?|important|pinned)\b`)

	// Inline supersession: "status: superseded", "(superseded)", "superseded by …".
	supersededRe = regexp.MustCompile(`(?i)(?:\bstatus\s*:\s*\**superseded\b|[(\[]\s*superseded\s*[)\]]|\bsuperseded\s+by\b|#superseded\b)`)
	// Inline staleness: "status: deprecated", "(obsolete)", "#stale".
	staleRe = regexp.MustCompile(`(?i)(?:\bstatus\s*:\s*\**(?:stale|deprecated|obsolete|archived|outdated)\b|[(\[]\s*(?:stale|deprecated|obsolete|archived|outdated)\s*[)\]]|#(?:stale|deprecated|obsolete|outdated)\b)`)
)

// markerOf returns the strongest explicit marker of a note and whether it is
// pinned. Markers count in the note's text as a label at its start, a tag,
// or a capitalised word, and in its heading path as a heading word; a note
// or heading marked with "!" (see bang) is important.
func markerOf(text, heading string) (float64, bool) {
	best, pinned := textMarker(strings.TrimSpace(text))
	if bang(text) {
		best = math.Max(best, markImportant)
	}
	hm, hp := headingMarker(heading)
	return math.Max(best, hm), pinned || hp
}

// markerStrength is the strength of a marker word and whether it pins.
func markerStrength(word string) (float64, bool) {
	switch w := asciiLower(word); {
	case strings.HasPrefix(w, "pinned"):
		return markPinned, true
	case strings.HasPrefix(w, "important"):
		return markImportant, false
	}
	return markDecision, false
}

// labelPrefix bounds the text a label is looked for in: labels are short.
const labelPrefix = 48

// textMarker finds the markers of a note's text without a regular
// expression over the whole text: Build looks at every note of the palace.
func textMarker(t string) (float64, bool) {
	lower := asciiLower(t)
	if !mentionsAny(lower, markerWords) {
		return 0, false
	}
	best, pinned := 0.0, false
	take := func(word string) {
		s, p := markerStrength(word)
		best, pinned = math.Max(best, s), pinned || p
	}
	head := t
	if len(head) > labelPrefix {
		head = head[:labelPrefix]
	}
	if m := labelRe.FindStringSubmatch(head); m != nil {
		take(m[1])
	}
	for _, w := range tagWords {
		for i := 0; i < len(lower); {
			j := strings.Index(lower[i:], w)
			if j < 0 {
				break
			}
			j += i
			end := j + len(w)
			i = end
			if j > 0 && isWordByte(lower[j-1]) || end < len(lower) && isWordByte(lower[end]) {
				continue // part of a longer word: "rules", "pinnedness"
			}
			before := strings.TrimRight(lower[:j], " ")
			after := strings.TrimLeft(lower[end:], " ")
			switch {
			case before != "" && strings.ContainsRune("([{", rune(before[len(before)-1])) &&
				after != "" && strings.ContainsRune(")]}", rune(after[0])):
				take(w) // (pinned), [important], {rule}
			case j > 0 && lower[j-1] == '#' && (j == 1 || !isWordByte(lower[j-2])):
				take(w) // #decision
			case t[j:end] == strings.ToUpper(w):
				take(w) // IMPORTANT
			}
		}
	}
	return best, pinned
}

// tagWords are the marker words that count as tags or in capitals.
var tagWords = []string{"decision", "rule", "important", "pinned"}

// asciiLower lower-cases ASCII letters only, so byte offsets stay those
// of s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
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
	return supersededText(text) || supersededHeading(heading)
}

func supersededText(text string) bool {
	return strings.Contains(asciiLower(text), "superseded") && supersededRe.MatchString(text)
}

func supersededHeading(heading string) bool {
	return strings.Contains(asciiLower(heading), "superseded")
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
	return staleText(text) || staleHeading(heading)
}

func staleText(text string) bool {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "[x] ") || strings.HasPrefix(t, "[X] ") {
		return true // a completed task
	}
	if strings.HasPrefix(t, "~~") && strings.HasSuffix(t, "~~") {
		return true
	}
	return mentionsAny(asciiLower(t), staleWords) && staleRe.MatchString(t)
}

// staleHeadings are first words of headings over history, lower case.
var staleHeadings = map[string]bool{"archive": true, "archived": true, "deprecated": true, "obsolete": true, "outdated": true, "stale": true, "done": true, "old": true}

func staleHeading(heading string) bool {
	for _, h := range headingParts(heading) {
		first, _, _ := strings.Cut(asciiLower(h), " ")
		if staleHeadings[strings.TrimRight(first, ":!.")] {
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
