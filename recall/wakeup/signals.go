package wakeup

import (
	"math"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/memminer/memminer/memory/govern"
)

// Marker strengths: how much an explicit marker says "this matters".
const (
	markPinned    = 1.0
	markImportant = 0.8 // "important", "!"
	markDecision  = 0.6 // "decision", "rule"
)

var (
	// A label opening the note: "Decision:", "**Rule** -", "[x] Important:".
	labelRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(?:\[[ x]\]\s*)?[*_]{0,2}(decisions?|decided|rules?|important|pinned)[*_]{0,2}\s*(?:[:—–-]|[*_]{0,2}\s*$)`)
	})
	// A heading component naming what is below it: "Decisions", "Rules", "Pinned".
	headingMarkRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(decisions?|rules?|important|pinned)\b`) })
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
	if m := labelRe().FindStringSubmatch(head); m != nil {
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
	for _, h := range govern.HeadingParts(heading) {
		if mentionsAny(strings.ToLower(h), markerWords) {
			for _, m := range headingMarkRe().FindAllStringSubmatch(h, -1) {
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

// decay is the weight of something age old: 1 when new, halving every
// half-life. Ages below zero count as new.
func decay(age, halfLife time.Duration) float64 {
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(halfLife))
}

func isWordByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_'
}
