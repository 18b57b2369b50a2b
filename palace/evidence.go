package palace

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memminer/memminer/embed"

	"github.com/memminer/memminer/internal/words"
)

// How Search decides that a hit is relevant (docs/search.md has the rule
// in short; BENCHMARKS.md, "Relevance", the measurements).
//
// One cosine cannot decide it: the built-in model gives queries about
// other things cosines (up to 0.42) above those of true paraphrases (down
// to 0.23). So the decision takes evidence the cosine alone lacks:
//
//   - identifiers: a token that looks like one (letters with digits, an
//     underscore, CamelCase, five or more capitals, three or more digits:
//     JIRA-1234, ERR_SSL, OOMKilled, ECONNRESET, 503) names one thing. When no searched note has
//     any of the query's identifiers, the palace does not hold what the
//     query asks, whatever the cosine says: no hit is relevant (a query
//     naming one it has and one it lacks, as a pasted log line does, is
//     about the one it has);
//   - lexical coverage, each term weighted by its idf over all the searched
//     notes (not one wing's), of the whole query or of one of its coherent
//     parts: query terms that occur together in some note, at least two of
//     them, carrying at least a third of the query's weight. A note that
//     holds one part of "kestrel queue osprey shard" answers that part;
//   - grounding: each content word of the query is embedded alone and
//     compared with every searched note's vector; the query's grounding
//     is the sum of its two best words' cosines. A query about what the
//     palace never saw has no word near any note, whatever its sentence
//     vector happens to lie nearest. (Words compared with the palace's
//     words, as single-word vectors, did not separate: the built-in model
//     puts any two single words at a cosine near 0.6.)
//
// A hit's semantic evidence is its cosine, scaled by how grounded the
// query is (semantic); its relevance is the larger of that and its lexical
// coverage, zero when the query names an identifier no note has. Shown by
// Explain, not part of the decision: how far the hit's cosine stands out
// from the query's cosines over the searched notes, and how many channels
// rank it a standard deviation above their mean; measured, neither told
// unrelated queries from paraphrases.

// minPartShare is the least share of the query's weight a coherent part
// must carry to count on its own.
const minPartShare = 1.0 / 3

// agreeZ is the z-score at which a channel counts as agreeing on a hit.
const agreeZ = 1.0

// The grounding at which semantic starts to credit the cosine, and at
// which it credits it in full; fitted with the built-in model on the
// committed sets of bench/ (BENCHMARKS.md, "Relevance"), rounded. Another
// model's cosines run on another scale.
const (
	groundLow  = 0.52
	groundHigh = 0.60
)

// rareWordLogProb is the word log probability (embed.WordFrequency) below
// which a query word that no searched note has is foreign to the palace:
// "origami" (-25), "villanelle" (-33), "zorblax" (-35), where everyday
// words score above -12 ("host" -9, "teeth" -10, "purchase" -10). Words of
// a trade the vocabulary's text seldom used score near -21 ("palette",
// "payloads", "traces"): a paraphrase may use them, so they are not.
const rareWordLogProb = -22

// foreignShare is the share of a query's words that, foreign, make it a
// question about something else. Lower, it catches more such questions and
// loses paraphrases that use one rare word (BENCHMARKS.md, "Recall on
// small hives").
const foreignShare = 1.0 / 3

// answerCoverage is the lexical coverage from which a note holds the
// words of what it is asked (Evidence.Answers): the only evidence on which
// the prompt hook gives a note to an agent (SearchOptions.Prompt). It is
// fullCoverage: more than a stray shared word. The built-in model's cosine
// cannot tell: on bench/recall's dev set the best notes of unrelated
// prompts reach cosines of 0.62, those of paraphrases that answer 0.53;
// their lexical coverage stays under 0.28, and the answers of direct
// questions average 0.93.
const answerCoverage = fullCoverage

// A note that answers (Evidence.Answers) ranks above every note that does
// not, and the answering notes rank by how much of the query they hold:
// answerLead is added to its fused score, in standard deviations (the
// fused score of a small wing's notes spans about ten). The built-in
// model's cosines, standardised over a handful of notes, otherwise rank a
// note sharing "runs" with "which host runs postgres" above the one
// holding both words (BENCHMARKS.md, "Recall on small hives").
const (
	answerBase  = 20
	answerSlope = 30
)

// answerLead is what an answering note of lexical coverage c gains.
func answerLead(c float64) float64 { return answerBase + answerSlope*c }

// Among the notes that answer, one whose subject (its first subjectTerms
// index terms) the query names ranks above one naming it in passing: it
// gains up to subjectLead more. On bench/recall's dev set a lead of 2 to
// 10 over the first 2 or 3 terms ranks one more direct question's answer
// first and one more task's; none ranks lower (BENCHMARKS.md).
const (
	subjectLead  = 5
	subjectTerms = 3
)

// fullCoverage is the lexical coverage that counts whatever the query's
// grounding: a note holding half of what the query weighs shares more
// than a stray word with it.
const fullCoverage = 0.5

// QueryWord is one content word of a query, as relevance saw it.
type QueryWord struct {
	// Word is as the query spells it; Term is the index term.
	Word string `json:"word"`
	Term string `json:"term"`
	// InPalace tells that some searched note has the term.
	InPalace bool `json:"in_palace"`
	// Foreign tells that no searched note has the word and that it is
	// rare in English (rareWordLogProb): when at least a third of a
	// query's words are, the cosine is no evidence (Explanation.Foreign).
	Foreign bool `json:"foreign,omitempty"`
	// Identifier tells that the word looks like an identifier.
	Identifier bool `json:"identifier,omitempty"`
	// Cosine is the word's best cosine, embedded alone, to one of the
	// groundPool searched notes nearest the query (0 without vectors, and
	// for identifiers, numbers and words of fewer than three letters,
	// which are not embedded alone).
	Cosine float64 `json:"cosine"`
}

// Evidence is what relevance decided a hit from.
type Evidence struct {
	// Coverage is the hit's lexical coverage: of the whole query, or of
	// Part, a coherent part of it, whichever is larger.
	Coverage float64  `json:"coverage"`
	Part     []string `json:"part,omitempty"`
	part     int      // Part's number, -1 for none
	// Cosine is the hit's cosine to the query.
	Cosine float64 `json:"cosine"`
	// Semantic is Cosine scaled by the query's grounding (semantic).
	Semantic float64 `json:"semantic"`
	// Standout is how many standard deviations Cosine lies above the
	// query's mean cosine over the searched notes, Channels how many
	// channels rank the hit a standard deviation above their mean. Shown,
	// not decisive.
	Standout float64 `json:"standout"`
	Channels int     `json:"channels"`
	// Relevance is the larger of Coverage and Semantic, 0 when vetoed.
	Relevance float64 `json:"relevance"`
	// Answers tells that the note itself, not its neighbours, holds the
	// words of the query (its coverage at least answerCoverage): the only
	// notes the prompt hook gives.
	Answers bool `json:"answers"`
	// Passed tells whether the hit reached the floor; Reason says why
	// or why not.
	Passed bool   `json:"passed"`
	Reason string `json:"reason"`
}

// Explanation is why a search returned what it did.
type Explanation struct {
	// Words are the query's content words; Grounding is the sum of the
	// two best words' Cosine.
	Words     []QueryWord `json:"words"`
	Grounding float64     `json:"grounding"`
	// Vectors tells that the search used vectors; without them there is
	// no grounding, and relevance is lexical coverage alone.
	Vectors bool `json:"vectors"`
	// MissingIdentifier is an identifier of the query no searched note
	// has: the search then returns nothing.
	MissingIdentifier string `json:"missing_identifier,omitempty"`
	// Foreign tells that at least a third of the query's words are
	// foreign to the palace (QueryWord.Foreign): a question about another domain,
	// which only lexical coverage can answer.
	Foreign bool `json:"foreign,omitempty"`
	// Prompt tells that the search decided for the prompt hook: only
	// notes that answer (Evidence.Answers) are given, at most
	// PromptResults.
	Prompt bool `json:"prompt,omitempty"`
	// Parts are the query's coherent parts that count on their own, as
	// the query spells their words.
	Parts [][]string `json:"parts,omitempty"`
	// MinRelevance is the floor the hits were held to.
	MinRelevance float64 `json:"min_relevance"`
	// NearMisses are the best candidates the floor dropped (at most
	// nearMisses), with their evidence.
	NearMisses []Hit `json:"near_misses,omitempty"`
}

// nearMisses is how many dropped candidates an explanation shows.
const nearMisses = 3

// queryToken is one content token of a query, with its index term.
type queryToken struct {
	raw, term  string
	identifier bool
	// embed tells that the word is embedded alone for grounding.
	embed bool
}

// queryTokens splits query into its content tokens (its words, package
// words): an identifier whole, any other word by its parts, stopwords left
// out, each term once.
func queryTokens(query string) []queryToken {
	var out []queryToken
	seen := map[string]bool{}
	add := func(t queryToken) {
		if t.term != "" && !seen[t.term] {
			seen[t.term] = true
			out = append(out, t)
		}
	}
	words.Each(query, func(raw string) {
		parts := words.Parts(strings.ToLower(raw))
		if identifierLike(raw) {
			// As the index has it: a compound whole, one word by its stem.
			term := strings.ToLower(raw)
			if len(parts) == 1 {
				term = words.Term(parts[0])
			}
			add(queryToken{raw: raw, term: term, identifier: true})
			return
		}
		for _, w := range parts {
			if !words.IsStopword(w) {
				add(queryToken{raw: w, term: words.Term(w), embed: utf8.RuneCountInString(w) >= 3 && words.IsLetters(w)})
			}
		}
	})
	return out
}

// identifierLike tells whether a token as written names one thing rather
// than being a word: letters with digits (JIRA-1234, db-2, 0x80070005), an
// underscore (ERR_SSL), CamelCase (NullPointerException, OOMKilled), five
// or more capitals (ECONNRESET, SIGSEGV) or a number of three or more
// digits (a status code, a port, a year). Short numbers, hyphenated words
// and short acronyms (API, LLM, PRs: a query may spell out what a
// note abbreviates, or the other way round) are not.
func identifierLike(tok string) bool {
	if n := len(tok); n >= 2 && tok[n-1] == 's' && unicode.IsUpper(rune(tok[n-2])) {
		tok = tok[:n-1] // a plural acronym: PRs, URLs
	}
	if quantity(tok) {
		return false
	}
	var letters, digits, upper int
	camel := false
	var prev, prev2 rune
	for _, r := range tok {
		switch {
		case unicode.IsDigit(r):
			digits++
		case unicode.IsLetter(r):
			letters++
			if unicode.IsUpper(r) {
				upper++
				if unicode.IsLower(prev) {
					camel = true
				}
			} else if unicode.IsUpper(prev) && unicode.IsUpper(prev2) {
				camel = true // OOMKilled, HTTPServer
			}
		case r == '_':
			if letters+digits > 0 {
				return true
			}
		}
		prev2, prev = prev, r
	}
	return letters > 0 && digits > 0 || camel || upper >= 5 && upper == letters || letters == 0 && digits >= 3 && !year(tok)
}

// year tells whether tok is a year (1000 to 2999): a question may name one
// its answer only implies ("in 2021" for "last summer").
func year(tok string) bool {
	return len(tok) == 4 && (tok[0] == '1' || tok[0] == '2') && strings.Trim(tok, "0123456789") == ""
}

// decider decides the relevance of a search's candidates.
type decider struct {
	useLex    bool
	vectors   bool
	words     []QueryWord
	grounding float64
	veto      string
	foreign   bool
	parts     [][]string
	weights   map[*wingScores]*queryWeights
	mean, sd  [numChannels]float64
}

// newDecider gathers the query's evidence over the searched wings. wordVecs
// are the vectors of the query's tokens, nil where a token has none (all
// nil without vectors); emb is the palace's embedder (nil: lexical). The
// caller holds the palace's read lock.
func newDecider(scores []*wingScores, toks []queryToken, wordVecs [][]float32, terms []string, useLex bool, emb embed.Embedder) *decider {
	d := &decider{useLex: useLex, weights: map[*wingScores]*queryWeights{}}
	d.mean, d.sd = channelStats(scores)
	df := func(term string) (n float64) {
		for _, ws := range scores {
			_, f, _ := ws.w.lex.idf(term)
			n += f
		}
		return n
	}
	d.vectors = wordVecs != nil
	if wordVecs == nil {
		wordVecs = make([][]float32, len(toks))
	}
	cosines := wordCosines(groundingPool(scores), wordVecs)
	freq, _ := emb.(embed.WordFrequency)
	foreign := 0
	known := false // the query names an identifier some note has
	for i, tok := range toks {
		w := QueryWord{Word: tok.raw, Term: tok.term, InPalace: df(tok.term) > 0, Identifier: tok.identifier, Cosine: cosines[i]}
		if tok.identifier && !w.InPalace && d.veto == "" {
			d.veto = tok.raw
		}
		if tok.identifier && w.InPalace {
			known = true
		}
		if freq != nil && tok.embed && !w.InPalace && freq.WordLogProb(tok.raw) < rareWordLogProb {
			w.Foreign = true
			foreign++
		}
		d.words = append(d.words, w)
	}
	if known {
		// A query naming one thing the palace holds is about it, whatever
		// else a pasted log line names ("ERR_CONN_RESET from web-17").
		d.veto = ""
	}
	best := slices.Sorted(slices.Values(cosines))
	slices.Reverse(best)
	for _, c := range best[:min(2, len(best))] {
		d.grounding += c
	}
	// A query a third made of words the palace lacks and English rarely
	// uses is about something else: the built-in model still finds some
	// note at a cosine of 0.3-0.5 ("zorblax quintessence flavour profile"),
	// so the vectors' evidence does not count.
	if foreign > 0 && float64(foreign) >= foreignShare*float64(len(toks)) {
		d.foreign, d.grounding = true, 0
	}

	// Weights over every searched note: a term one wing lacks is not the
	// rarest there is when another wing holds it.
	var live float64
	for _, ws := range scores {
		live += float64(ws.w.lex.live)
	}
	idf := map[string]float64{}
	var inPalace []string
	var total float64
	for _, term := range terms {
		if _, ok := idf[term]; ok {
			continue
		}
		n := df(term)
		idf[term] = math.Log(1 + (live-n+0.5)/(n+0.5))
		total += idf[term]
		if n > 0 {
			inPalace = append(inPalace, term)
		}
	}
	partOf := map[string]int{}
	var partWeights []float64
	for _, part := range coherentParts(scores, inPalace) {
		var w float64
		for _, term := range part {
			w += idf[term]
		}
		if len(part) < 2 || w < minPartShare*total {
			continue
		}
		for _, term := range part {
			partOf[term] = len(partWeights)
		}
		partWeights = append(partWeights, w)
		d.parts = append(d.parts, spelled(part, toks))
	}
	for _, ws := range scores {
		q := &queryWeights{idf: map[int32]float64{}, seen: map[int32]bool{}, total: total, part: map[int32]int{}, parts: partWeights}
		for _, term := range inPalace {
			if t, df, _ := ws.w.lex.idf(term); df > 0 {
				q.idf[t] = idf[term]
				if k, ok := partOf[term]; ok {
					q.part[t] = k
				}
			}
		}
		d.weights[ws] = q
	}
	return d
}

// groundPool is how many notes, those nearest the query's vector,
// grounding compares the query's words with.
const groundPool = 200

// groundingPool returns the vectors of the groundPool notes of the
// searched wings nearest the query. Comparing each word with every note
// cost a search of 100,000 notes five times the time of the rest
// (BENCHMARKS.md); picking the nearest notes is one comparison a note.
func groundingPool(scores []*wingScores) [][]float32 {
	h := &nearHeap{}
	for _, ws := range scores {
		ch := ws.chans[chanVecNote].vals // dense
		if ch == nil {
			continue
		}
		for d, v := range ws.v.vecs {
			if v == nil || !ws.v.note(int32(d)) {
				continue
			}
			if h.Len() < groundPool {
				heap.Push(h, nearNote{ch[d], v})
			} else if ch[d] > (*h)[0].cos {
				(*h)[0] = nearNote{ch[d], v}
				heap.Fix(h, 0)
			}
		}
	}
	out := make([][]float32, h.Len())
	for i, n := range *h {
		out[i] = n.vec
	}
	return out
}

// nearNote is a note's vector and its cosine to the query; nearHeap keeps
// the nearest, the least near on top.
type nearNote struct {
	cos float64
	vec []float32
}

type nearHeap []nearNote

func (h nearHeap) Len() int           { return len(h) }
func (h nearHeap) Less(i, j int) bool { return h[i].cos < h[j].cos }
func (h nearHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *nearHeap) Push(x any)        { *h = append(*h, x.(nearNote)) }
func (h *nearHeap) Pop() any {
	old := *h
	n := old[len(old)-1]
	*h = old[:len(old)-1]
	return n
}

// wordCosines returns, for each of vecs (nil ones 0), its best cosine to
// one of notes.
func wordCosines(notes [][]float32, vecs [][]float32) []float64 {
	out := make([]float64, len(vecs))
	for _, v := range notes {
		for i, w := range vecs {
			if w != nil && len(v) == len(w) {
				out[i] = max(out[i], float64(dot(v, w)))
			}
		}
	}
	return out
}

// coherentParts groups terms (each in some searched note) into the sets
// that occur together: two terms are in one part when a note holds both,
// or holds both with others of the part. Parts keep the query's order.
func coherentParts(scores []*wingScores, terms []string) [][]string {
	parent := make([]int, len(terms))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	for _, ws := range scores {
		byID := map[int32]int{}
		for i, term := range terms {
			if t, df, _ := ws.w.lex.idf(term); df > 0 {
				byID[t] = i
			}
		}
		// The table's rows are the matched notes, in their order.
		for r := range ws.matched {
			first := -1
			for t := range ws.found.inRow(r) {
				i, ok := byID[t]
				if !ok {
					continue
				}
				if first < 0 {
					first = i
				} else {
					parent[find(i)] = find(first)
				}
			}
		}
	}
	groups := map[int][]string{}
	var order []int
	for i, t := range terms {
		r := find(i)
		if groups[r] == nil {
			order = append(order, r)
		}
		groups[r] = append(groups[r], t)
	}
	out := make([][]string, 0, len(order))
	for _, r := range order {
		out = append(out, groups[r])
	}
	return out
}

// semantic is the vectors' evidence that a hit answers the query: its
// cosine, credited in full when the query is grounded in the palace
// (grounding at least groundHigh), not at all when it is not (at most
// groundLow), and in proportion between.
func semantic(cosine, grounding float64) float64 {
	return min(1, max(0, cosine*groundingCredit(grounding)))
}

// groundingCredit is the share of its evidence a query's grounding lets
// count: 0 up to groundLow, 1 from groundHigh, linear between.
func groundingCredit(grounding float64) float64 {
	return min(1, max(0, (grounding-groundLow)/(groundHigh-groundLow)))
}

// judge decides c's relevance at floor.
func (d *decider) judge(c candidate, floor float64) Evidence {
	e := Evidence{part: -1}
	ws := c.ws
	if d.useLex {
		whole, part, k, own := ws.coverages(d.weights[ws], c.d)
		e.Coverage = whole
		if part > whole {
			e.Coverage, e.Part, e.part = part, d.parts[k], k
		}
		e.Answers = own >= answerCoverage
	}
	if ch := ws.chans[chanVecNote]; ch.set() {
		e.Cosine = ch.at(c.d)
		if d.sd[chanVecNote] > 0 {
			e.Standout = (e.Cosine - d.mean[chanVecNote]) / d.sd[chanVecNote]
		}
		e.Semantic = semantic(e.Cosine, d.grounding)
		if e.Coverage < fullCoverage {
			// A stray shared word of a query the palace's notes are
			// nowhere near ("what does lbw mean in cricket?") is no more
			// evidence than the cosine.
			e.Coverage *= groundingCredit(d.grounding)
		}
	}
	for k, ch := range ws.chans {
		if ch.set() && d.sd[k] > 0 && (ch.at(c.d)-d.mean[k])/d.sd[k] >= agreeZ {
			e.Channels++
		}
	}
	e.Relevance = max(e.Coverage, e.Semantic)
	if d.veto != "" {
		e.Relevance, e.Answers = 0, false
	}
	e.Passed = e.Relevance >= floor // a floor of 0 keeps every hit
	switch {
	case d.veto != "":
		e.Reason = fmt.Sprintf("no searched note has the identifier %s", d.veto)
	case !e.Passed:
		e.Reason = fmt.Sprintf("relevance %.2f below the floor %.2f: %s", e.Relevance, floor, d.strongest(e))
	default:
		e.Reason = d.strongest(e)
	}
	return e
}

// strongest says where a hit's relevance comes from.
func (d *decider) strongest(e Evidence) string {
	if e.Coverage >= e.Semantic && e.Coverage > 0 {
		if e.Part != nil {
			return fmt.Sprintf("lexical coverage %.2f of the part %q", e.Coverage, strings.Join(e.Part, " "))
		}
		return fmt.Sprintf("lexical coverage %.2f of the query", e.Coverage)
	}
	if d.grounding < groundHigh {
		return fmt.Sprintf("cosine %.2f, of which the query's grounding %.2f (full credit from %.2f) keeps %.2f", e.Cosine, d.grounding, groundHigh, e.Semantic)
	}
	return fmt.Sprintf("cosine %.2f, the query grounded (%.2f)", e.Cosine, d.grounding)
}

// explanation returns the query's evidence; the caller adds the near misses.
func (d *decider) explanation(floor float64) *Explanation {
	return &Explanation{Words: d.words, Grounding: d.grounding, Vectors: d.vectors, MissingIdentifier: d.veto, Foreign: d.foreign, Parts: d.parts, MinRelevance: floor}
}

// wordVectors embeds alone the query's tokens that ground it; the others
// are nil.
func (p *Palace) wordVectors(ctx context.Context, toks []queryToken) ([][]float32, error) {
	out := make([][]float32, len(toks))
	var texts []string
	var at []int
	for i, t := range toks {
		if t.embed {
			texts, at = append(texts, t.raw), append(at, i)
		}
	}
	vecs, err := p.embedTexts(embed.ForWords(ctx), texts)
	if err != nil {
		return nil, fmt.Errorf("embed query words: %w", err)
	}
	for k, i := range at {
		out[i] = vecs[k]
	}
	return out, nil
}

// quantity tells whether tok is a number with a suffix of one or two
// letters: an ordinal, a unit, a time or a decade (18th, 5K, 10am, 90s).
func quantity(tok string) bool {
	i := strings.IndexFunc(tok, func(r rune) bool { return !unicode.IsDigit(r) })
	if i <= 0 {
		return false
	}
	rest := tok[i:]
	return len(rest) <= 2 && strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
}

// spelled returns terms as the query spells them, where a token has them.
func spelled(terms []string, toks []queryToken) []string {
	out := make([]string, len(terms))
	for i, t := range terms {
		out[i] = t
		for _, tok := range toks {
			if tok.term == t {
				out[i] = tok.raw
				break
			}
		}
	}
	return out
}

// coverParts makes sure the results answer every coherent part of the
// query some relevant candidate answers: when no picked result covers a
// part, its best candidate takes the place of the last result of a part
// that has several (or of none). The vectors may rank every note of one
// part above the other's ("kestrel queue osprey shard" finds a dozen
// kestrel notes first), and a multi-topic query wants both topics.
func coverParts(picked, kept []candidate, ev map[candidate]Evidence, parts int) []candidate {
	if parts < 2 || len(picked) < 2 {
		return picked
	}
	key := func(c candidate) candidate { return candidate{ws: c.ws, d: c.d} }
	partOf := func(c candidate) int { return ev[key(c)].part }
	count := make([]int, parts)
	taken := map[candidate]bool{}
	for _, c := range picked {
		if k := partOf(c); k >= 0 {
			count[k]++
		}
		taken[key(c)] = true
	}
	for k := range parts {
		if count[k] > 0 {
			continue
		}
		best := -1
		for i, c := range kept {
			if partOf(c) == k && !taken[key(c)] && (best < 0 || better(&c, &kept[best])) {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		for j := len(picked) - 1; j > 0; j-- {
			if old := partOf(picked[j]); old < 0 || count[old] > 1 {
				if old >= 0 {
					count[old]--
				}
				delete(taken, key(picked[j]))
				picked[j] = kept[best]
				taken[key(kept[best])] = true
				count[k]++
				break
			}
		}
	}
	sort.SliceStable(picked, func(i, j int) bool { return better(&picked[i], &picked[j]) })
	return picked
}
