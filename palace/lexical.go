package palace

import (
	"slices"
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
// as notes come and go, so a mine never rebuilds it from scratch. Terms and
// notes are numbered and postings are flat slices: opening a palace builds
// every wing's index, and maps of maps made that the slowest step.
type lexIndex struct {
	termIDs  map[string]int32
	postings [][]posting // by term id
	df       []int32     // live notes per term id
	docs     []lexDoc    // by doc number; removed ones stay as tombstones
	byID     map[string]int32
	live     int
	totalLen int
	// words and scratch are add's buffers, kept between calls (the
	// index is changed under the palace's write lock only).
	words   []string
	scratch []int32
}

type posting struct {
	doc int32
	tf  int32
}

type lexDoc struct {
	id     string
	length int
	terms  []int32 // distinct term ids
	dead   bool
}

func newLexIndex() *lexIndex {
	return &lexIndex{termIDs: map[string]int32{}, byID: map[string]int32{}}
}

func (x *lexIndex) add(id, text string) {
	if _, ok := x.byID[id]; ok {
		x.remove(id)
	}
	x.words = appendLexTerms(x.words[:0], text)
	ids := x.scratch[:0]
	for _, w := range x.words {
		t, ok := x.termIDs[w]
		if !ok {
			t = int32(len(x.postings))
			x.termIDs[w] = t
			x.postings = append(x.postings, nil)
			x.df = append(x.df, 0)
		}
		ids = append(ids, t)
	}
	x.scratch = ids
	slices.Sort(ids)
	doc := int32(len(x.docs))
	// The note keeps its distinct terms in a slice of just their number:
	// a large wing has millions of them.
	d := lexDoc{id: id, length: len(ids), terms: make([]int32, 0, distinct(ids))}
	for i := 0; i < len(ids); {
		j := i
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		t := ids[i]
		x.postings[t] = append(x.postings[t], posting{doc, int32(j - i)})
		x.df[t]++
		d.terms = append(d.terms, t)
		i = j
	}
	x.docs = append(x.docs, d)
	x.byID[id] = doc
	x.live++
	x.totalLen += d.length
}

// distinct counts the distinct values of sorted ids.
func distinct(ids []int32) int {
	n := 0
	for i := range ids {
		if i == 0 || ids[i] != ids[i-1] {
			n++
		}
	}
	return n
}

func (x *lexIndex) remove(id string) {
	n, ok := x.byID[id]
	if !ok {
		return
	}
	d := &x.docs[n]
	for _, t := range d.terms {
		x.df[t]--
	}
	d.dead = true
	d.terms = nil
	delete(x.byID, id)
	x.live--
	x.totalLen -= d.length
	// Compact once tombstones outnumber live notes, so a long-running
	// daemon's index does not grow without bound.
	if len(x.docs) > 64 && len(x.docs) > 2*x.live {
		x.compact()
	}
}

func (x *lexIndex) compact() {
	renum := make([]int32, len(x.docs))
	docs := make([]lexDoc, 0, x.live)
	for i, d := range x.docs {
		if d.dead {
			renum[i] = -1
			continue
		}
		renum[i] = int32(len(docs))
		x.byID[d.id] = int32(len(docs))
		docs = append(docs, d)
	}
	// Terms no live note uses any more go too, and the rest are renumbered.
	termNum := make([]int32, len(x.postings))
	var postings [][]posting
	var df []int32
	for t, ps := range x.postings {
		if x.df[t] == 0 {
			termNum[t] = -1
			continue
		}
		kept := ps[:0]
		for _, p := range ps {
			if r := renum[p.doc]; r >= 0 {
				kept = append(kept, posting{r, p.tf})
			}
		}
		termNum[t] = int32(len(postings))
		postings = append(postings, kept)
		df = append(df, x.df[t])
	}
	for w, t := range x.termIDs {
		if termNum[t] < 0 {
			delete(x.termIDs, w)
		} else {
			x.termIDs[w] = termNum[t]
		}
	}
	for i := range docs {
		for j, t := range docs[i].terms {
			docs[i].terms[j] = termNum[t]
		}
	}
	x.postings, x.df, x.docs = postings, df, docs
}

// lexTerms splits text into index terms: lower-cased words, stemmed, without
// stopwords. A compound such as "electron-vite", "db-2" or "ERR_NO_SPACE" is
// kept whole as well as split, so identifiers match exactly and by part.
// Han, kana and hangul characters are one term each (they have no spaces).
func lexTerms(text string) []string { return appendLexTerms(nil, text) }

// appendLexTerms appends the index terms of text to terms.
func appendLexTerms(terms []string, text string) []string {
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
// its word count, and the Snowball stemmer is the costliest step of
// indexing. It is emptied when it grows past maxStemCache words, so queries
// full of new words cannot grow a long-running daemon without bound.
var stemCache = struct {
	sync.RWMutex
	m map[string]string
}{m: map[string]string{}}

const maxStemCache = 1 << 17

func stem(w string) string {
	stemCache.RLock()
	s, ok := stemCache.m[w]
	stemCache.RUnlock()
	if ok {
		return s
	}
	s = w
	// Only stem words of plain letters; numbers, mixed tokens and very long
	// strings stay as written.
	if utf8.RuneCountInString(w) > 2 && len(w) < 40 && isLettersOnly(w) {
		s = english.Stem(w, false)
	}
	stemCache.Lock()
	if len(stemCache.m) >= maxStemCache {
		clear(stemCache.m)
	}
	stemCache.m[w] = s
	stemCache.Unlock()
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
	_, ok := stopwords()[w]
	return ok
}

// stopwords is a short English list: words too common to tell notes apart.
// The set is made on first use, not by every command at start-up.
var stopwords = sync.OnceValue(func() map[string]struct{} {
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
})
