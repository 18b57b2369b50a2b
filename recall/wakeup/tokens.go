package wakeup

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// runesPerToken is the divisor of the rune count in EstimateTokens. Common
// tokenizers average about four runes of English per token; three errs on
// the side of counting too many, which is the safe side for a hard budget.
const runesPerToken = 3

// ellipsis ends a text that was cut short.
const ellipsis = "…"

// EstimateTokens approximates how many tokens a language model's tokenizer
// makes of text: the larger of its word count (whitespace-separated fields)
// and its rune count divided by three, rounded up. It never counts fewer
// tokens than words, and for English prose it counts more than common
// tokenizers do, so a digest that fits the estimate fits the real budget.
//
// For text of several lines the estimate of the whole is at most the sum of
// the estimates of its lines, each counted with its newline (LineTokens), so
// a budget enforced line by line also holds for the whole.
func EstimateTokens(text string) int {
	words := len(strings.Fields(text))
	byRunes := (utf8.RuneCountInString(text) + runesPerToken - 1) / runesPerToken
	return max(words, byRunes)
}

// LineTokens is the estimate of one output line together with its newline.
func LineTokens(line string) int {
	return EstimateTokens(line + "\n")
}

// flatten turns a note's markdown into one line: lines are joined by single
// spaces and fenced code is dropped when the note has prose besides it (the
// prose says what the code is for; the file has the code).
func flatten(text string) string {
	lines := strings.Split(text, "\n")
	var prose, all []string
	inFence := false
	fence := ""
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if marker, ok := fenceMarker(t); ok {
			switch {
			case !inFence:
				inFence, fence = true, marker
				continue
			case strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "":
				inFence = false
				continue
			}
		}
		if t == "" {
			continue
		}
		all = append(all, t)
		if !inFence {
			prose = append(prose, t)
		}
	}
	kept := prose
	if len(kept) == 0 {
		kept = all
	}
	return strings.Join(strings.Fields(strings.Join(kept, " ")), " ")
}

// fenceMarker reports whether a trimmed line opens or closes a code fence,
// returning its run of backticks or tildes.
func fenceMarker(t string) (string, bool) {
	for _, c := range []string{"`", "~"} {
		n := 0
		for n < len(t) && t[n:n+1] == c {
			n++
		}
		if n >= 3 {
			return t[:n], true
		}
	}
	return "", false
}

// truncate returns the longest prefix of text, cut at a word boundary and
// ended with an ellipsis, such that render(prefix) costs at most limit
// tokens by LineTokens. It returns false when not even one word fits. text
// that fits whole is returned unchanged.
func truncate(text string, limit int, render func(string) string) (string, bool) {
	if LineTokens(render(text)) <= limit {
		return text, true
	}
	words := strings.Fields(text)
	// The cost of the rendered prefix grows with the number of words kept,
	// so the longest prefix that fits is found by binary search.
	lo, hi := 0, len(words)-1 // lo words are known to fit (0 trivially)
	fits := func(n int) bool { return LineTokens(render(cutWords(words, n))) <= limit }
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0 || !fits(lo) {
		return "", false
	}
	return cutWords(words, lo), true
}

// cutWords joins the first n words and appends an ellipsis, dropping
// punctuation that would dangle before it.
func cutWords(words []string, n int) string {
	s := strings.Join(words[:n], " ")
	s = strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsPunct(r) && r != ')' && r != '`' && r != '"' })
	return s + ellipsis
}

// Truncate returns the longest prefix of text, cut at a word boundary and
// ended with an ellipsis, whose rendering costs at most limit tokens by
// LineTokens; false when not even one word fits. Text that fits whole is
// returned unchanged. The digest cuts its story lines with it; the prompt
// hook cuts its notes the same way.
func Truncate(text string, limit int, render func(string) string) (string, bool) {
	return truncate(text, limit, render)
}
