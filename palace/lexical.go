package palace

import (
	"math"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// BM25 parameters: the usual values, which held up on LoCoMo (see BENCHMARKS.md).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// lexIndex is a BM25 index over one wing's notes. It is updated in place
// as notes come and go, so a mine never rebuilds it from scratch.
type lexIndex struct {
	docs     map[string]lexDoc           // note id → its terms
	postings map[string]map[string]int32 // term → note id → term frequency
	totalLen int
}

type lexDoc struct {
	length int
	terms  map[string]int32
}

func newLexIndex() *lexIndex {
	return &lexIndex{docs: map[string]lexDoc{}, postings: map[string]map[string]int32{}}
}

func (x *lexIndex) add(id, text string) {
	if _, ok := x.docs[id]; ok {
		x.remove(id)
	}
	terms := map[string]int32{}
	n := 0
	for _, t := range lexTerms(text) {
		terms[t]++
		n++
	}
	x.docs[id] = lexDoc{length: n, terms: terms}
	x.totalLen += n
	for t, tf := range terms {
		p := x.postings[t]
		if p == nil {
			p = map[string]int32{}
			x.postings[t] = p
		}
		p[id] = tf
	}
}

func (x *lexIndex) remove(id string) {
	d, ok := x.docs[id]
	if !ok {
		return
	}
	for t := range d.terms {
		p := x.postings[t]
		delete(p, id)
		if len(p) == 0 {
			delete(x.postings, t)
		}
	}
	x.totalLen -= d.length
	delete(x.docs, id)
}

// scored is a note id with a score, higher is better.
type scored struct {
	id    string
	score float64
}

// search returns up to k notes by BM25 score for the query, best first.
// Ties are broken by id so results are deterministic.
func (x *lexIndex) search(query string, k int) []scored {
	if len(x.docs) == 0 || k <= 0 {
		return nil
	}
	n := float64(len(x.docs))
	avg := float64(x.totalLen) / n
	if avg == 0 {
		avg = 1
	}
	acc := map[string]float64{}
	seen := map[string]bool{}
	for _, t := range lexTerms(query) {
		if seen[t] {
			continue
		}
		seen[t] = true
		p := x.postings[t]
		if len(p) == 0 {
			continue
		}
		df := float64(len(p))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for id, tf := range p {
			f := float64(tf)
			dl := float64(x.docs[id].length)
			acc[id] += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*dl/avg))
		}
	}
	out := make([]scored, 0, len(acc))
	for id, s := range acc {
		out = append(out, scored{id, s})
	}
	sortScored(out)
	if len(out) > k {
		out = out[:k]
	}
	return out
}

func sortScored(s []scored) {
	sort.Slice(s, func(i, j int) bool {
		if s[i].score != s[j].score {
			return s[i].score > s[j].score
		}
		return s[i].id < s[j].id
	})
}

// lexTerms splits text into index terms: lower-cased words, stemmed, without
// stopwords. A compound such as "electron-vite", "db-2" or "ERR_NO_SPACE" is
// kept whole as well as split, so identifiers match exactly and by part.
// Han, kana and hangul characters are one term each (they have no spaces).
func lexTerms(text string) []string {
	var terms []string
	emit := func(tok string) {
		parts := splitCompound(tok)
		if len(parts) > 1 {
			terms = append(terms, tok)
		}
		for _, w := range parts {
			if isStopword(w) {
				continue
			}
			terms = append(terms, stem(w))
		}
	}
	start := -1
	for i, r := range text {
		switch {
		case isIdeograph(r):
			if start >= 0 {
				emit(strings.ToLower(strings.Trim(text[start:i], joiners)))
				start = -1
			}
			terms = append(terms, string(r))
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || (start >= 0 && strings.ContainsRune(joiners, r)):
			if start < 0 {
				start = i
			}
		default:
			if start >= 0 {
				emit(strings.ToLower(strings.Trim(text[start:i], joiners)))
				start = -1
			}
		}
	}
	if start >= 0 {
		emit(strings.ToLower(strings.Trim(text[start:], joiners)))
	}
	return terms
}

// joiners may sit inside an identifier: electron-vite, db_2, v1.2, a/b is not one.
const joiners = "-_.'’"

func splitCompound(tok string) []string {
	if tok == "" {
		return nil
	}
	parts := strings.FieldsFunc(tok, func(r rune) bool { return strings.ContainsRune(joiners, r) })
	// Possessives and contractions ("agent's", "don't") are one word, not a compound.
	if len(parts) == 2 && (parts[1] == "s" || parts[1] == "t" || parts[1] == "ll" || parts[1] == "re" || parts[1] == "ve" || parts[1] == "d" || parts[1] == "m") && strings.ContainsAny(tok, "'’") {
		return []string{parts[0]}
	}
	return parts
}

func isIdeograph(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r))
}

// stemCache remembers stems: a palace has a small vocabulary compared with
// its word count, and the Snowball stemmer is the costliest step of indexing.
var stemCache sync.Map

func stem(w string) string {
	if v, ok := stemCache.Load(w); ok {
		return v.(string)
	}
	s := w
	// Only stem words of plain letters; numbers, mixed tokens and very long
	// strings stay as written.
	if utf8.RuneCountInString(w) > 2 && len(w) < 40 && isLettersOnly(w) {
		s = english.Stem(w, false)
	}
	stemCache.Store(w, s)
	return s
}

func isLettersOnly(w string) bool {
	for _, r := range w {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

func isStopword(w string) bool {
	_, ok := stopwords[w]
	return ok
}

// stopwords is a short English list: words too common to tell notes apart.
var stopwords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
	before being below between both but by can could did do does doing down during each few for from further had has
	have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself
	no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that
	the their theirs them themselves then there these they this those through to too under until up very was we were
	what when where which while who whom why will with would you your yours yourself yourselves`) {
		m[w] = struct{}{}
	}
	return m
}()
