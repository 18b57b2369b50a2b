// Package words is the one way memminer cuts text into words and words
// into terms. Search's index and queries (palace), the same-fact rule and
// the resemblance of notes (remember, wakeup) and merge's alignment of a
// note's versions (merge) compare the same words, so "the same fact" and
// "a search hit" agree on what a word is.
//
// A word is a run of letters, digits and combining marks, lower-cased,
// which may hold a joiner (- _ . ' ’) between two of them: identifiers such
// as electron-vite, db-2, max_client_conn and v1.2 are one word. A
// possessive is not part of its word (build-04's is build-04). Each
// ideograph (Han, Hiragana, Katakana, Hangul) is a word of its own: CJK
// text has no spaces between its words, and a character is what both the
// index and a query can agree on.
package words

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// Joiners may sit inside a word between two of its letters or digits.
const Joiners = "-_.'’"

// Split returns text's words in order, lower-cased.
func Split(text string) []string {
	var out []string
	Each(text, func(w string) { out = append(out, strings.ToLower(w)) })
	return out
}

// Each calls yield with each of text's words in order, as text spells them
// (case kept: a query's CamelCase names an identifier).
func Each(text string, yield func(word string)) {
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		if w := trimPossessive(strings.Trim(text[start:end], Joiners)); w != "" {
			yield(w)
		}
		start = -1
	}
	for i, r := range text {
		switch {
		case IsIdeograph(r):
			flush(i)
			yield(string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			if start < 0 {
				start = i
			}
		case start >= 0 && strings.ContainsRune(Joiners, r):
		default:
			flush(i)
		}
	}
	flush(len(text))
}

// trimPossessive drops a possessive ending ('s, ’s) from a word: the host
// build-04's disk is on is build-04. Contractions stay whole: "don't" is a
// negation the same-fact rule counts.
func trimPossessive(w string) string {
	for _, s := range []string{"'s", "’s", "'S", "’S"} {
		if base, ok := strings.CutSuffix(w, s); ok && base != "" {
			return strings.TrimRight(base, Joiners)
		}
	}
	return w
}

// Parts returns a compound word's parts, split at its joiners
// (electron-vite: electron, vite), or the word alone. A contraction is one
// part: "don't" is "don", which is no stopword, so that a note about what
// not to do keeps a term for it.
func Parts(word string) []string {
	parts := strings.FieldsFunc(word, func(r rune) bool { return strings.ContainsRune(Joiners, r) })
	if len(parts) == 2 && strings.ContainsAny(word, "'’") {
		switch parts[1] {
		case "s", "t", "ll", "re", "ve", "d", "m":
			return parts[:1]
		}
	}
	return parts
}

// AppendTerms appends the search terms of text to terms, as the palace
// indexes a note and reads a query: each word, lower-cased; a compound
// such as "electron-vite", "db-2" or "ERR_NO_SPACE" both whole and by its
// parts, so identifiers match exactly and by part; stopwords left out;
// English words stemmed (Term). Han, kana and hangul characters are one
// term each (they have no spaces).
func AppendTerms(terms []string, text string) []string {
	Each(text, func(w string) {
		w = strings.ToLower(w)
		parts := Parts(w)
		if len(parts) > 1 {
			terms = append(terms, w)
		}
		for _, part := range parts {
			if !IsStopword(part) {
				terms = append(terms, Term(part))
			}
		}
	})
	return terms
}

// IsIdeograph reports whether r is a character of a script written without
// spaces between words.
func IsIdeograph(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
}

// IsStopword reports whether w (lower-cased) is an English function word,
// too common to tell notes apart or to say what a note is about.
func IsStopword(w string) bool {
	_, ok := stopwords()[w]
	return ok
}

// stopwords is made on first use, not by every command at start-up.
var stopwords = sync.OnceValue(func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
	before being below between both but by can could did do does doing down during each few for from further had has
	have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself
	no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that
	the their theirs them themselves then there these they this those through to too under until up very was we were
	what when where which while who whom why will with would you your yours yourself yourselves also via per us`) {
		m[w] = struct{}{}
	}
	return m
})

// Term is the term a word (lower-cased) is compared by: an English word of
// plain letters stemmed (deploys, deployed: deploy), a number, an
// identifier or a very long word as it is.
func Term(w string) string {
	if utf8.RuneCountInString(w) <= 2 || len(w) >= 40 || !IsLetters(w) {
		return w
	}
	stems.RLock()
	s, ok := stems.m[w]
	stems.RUnlock()
	if ok {
		return s
	}
	s = english.Stem(w, false)
	stems.Lock()
	if len(stems.m) >= maxStems {
		clear(stems.m)
	}
	stems.m[w] = s
	stems.Unlock()
	return s
}

// stems remembers stems: a palace has a small vocabulary compared with its
// word count, and the Snowball stemmer is the costliest step of indexing.
// It is emptied when it grows past maxStems words, so queries full of new
// words cannot grow a long-running daemon without bound.
var stems = struct {
	sync.RWMutex
	m map[string]string
}{m: map[string]string{}}

const maxStems = 1 << 17

// IsLetters reports whether w is letters only.
func IsLetters(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}
