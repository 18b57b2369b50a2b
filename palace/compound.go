package palace

import (
	"slices"
	"strings"

	"github.com/memminer/memminer/internal/words"
)

// joinCompounds reads two adjacent words of the query as the one word the
// searched wings spell them as: "hand off" asks for the notes holding
// "handoff", "roll back" for "rollback", "set up" for "setup" (issue 46's
// morphology). Without it the pair's first word, alone in no note or in
// unrelated ones, counts against the note that answers. A pair joins only
// when its first word is a content word (so "to day" never becomes
// "today"), the joined word is no stopword, and a searched wing holds it;
// the joined word then joins the query, and a word of the pair that no
// searched note holds leaves it. The caller holds the palace's read lock.
func (r *searchRun) joinCompounds(query string, wings []string) {
	var raw []string
	words.Each(query, func(w string) { raw = append(raw, w) })
	held := func(term string) bool {
		for _, id := range wings {
			if w := r.p.wings[id]; w != nil && w.lex != nil {
				if _, df, _ := w.lex.idf(term); df > 0 {
					return true
				}
			}
		}
		return false
	}
	uses := map[string]int{}
	for _, w := range raw {
		uses[words.Term(strings.ToLower(w))]++
	}
	for i := 0; i+1 < len(raw); i++ {
		a, b := strings.ToLower(raw[i]), strings.ToLower(raw[i+1])
		if !words.IsLetters(a) || !words.IsLetters(b) || words.IsStopword(a) {
			continue
		}
		joined := a + b
		term := words.Term(joined)
		if words.IsStopword(joined) || !held(term) {
			continue
		}
		for _, part := range []string{a, b} {
			// A part no note holds only counts against the notes that
			// spell the pair as one word; a part some note holds stays,
			// for the notes that spell the pair as two ("data base").
			if t := words.Term(part); uses[t] == 1 && !held(t) {
				r.dropTerm(t)
			}
		}
		r.toks = append(r.toks, queryToken{raw: joined, term: term})
		if r.wordVecs != nil {
			r.wordVecs = append(r.wordVecs, nil)
		}
		r.terms = append(r.terms, term)
		i++
	}
}

// dropTerm removes term from the query's tokens and index terms.
func (r *searchRun) dropTerm(term string) {
	for i := 0; i < len(r.toks); i++ {
		if r.toks[i].term == term {
			r.toks = slices.Delete(r.toks, i, i+1)
			if r.wordVecs != nil {
				r.wordVecs = slices.Delete(r.wordVecs, i, i+1)
			}
			i--
		}
	}
	r.terms = slices.DeleteFunc(r.terms, func(t string) bool { return t == term })
}
