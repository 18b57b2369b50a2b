package remember

import (
	"slices"
	"strconv"
	"strings"

	"github.com/memminer/memminer/internal/words"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/wakeup"
)

// SameFact reports whether two notes' texts state the same fact, by
// remember's duplicate rule (docs/remember.md, "Duplicates"): once case,
// punctuation, markdown, word endings, function words, #tags and the
// "(added DATE)" marker are set aside, they have the same words, every
// number and identifier ("db-2", "8080", "max_client_conn") among them,
// the same symbols (C++, $5, 10%), the function words that change a
// statement (before, after, only, can, should …: factWords) and as many
// negations ("not", "never", "don't", …), each on the same word, all in
// the same order. Resemblance alone, of wording or of vectors, never makes
// two notes the same fact: "Do NOT deploy with make deploy" is news after
// "Deploy with make deploy", "db-3 is the primary" after "db-2 is the
// primary", and "copy staging to prod" after "copy prod to staging".
func SameFact(a, b string) bool {
	k := keyer{}
	return k.key(a, tagsOf(a)) == k.key(b, tagsOf(b))
}

// keyer makes the keys SameFact compares, each word's term looked up once.
type keyer map[string]string

// tagsOf is the #tags governance finds in text.
func tagsOf(text string) []string { return govern.Classify(govern.File{}, "", text).Tags }

// key is the normalised form SameFact compares; tags are text's #tags
// (tagsOf, or a mined note's Governance.Tags).
func (k keyer) key(text string, tags []string) string {
	text = govern.WithoutMarkers(text)
	var terms []string
	negations := 0
	negated := false // the next word is negated
	for _, field := range strings.Fields(text) {
		if t, ok := strings.CutPrefix(field, "#"); ok && slices.Contains(tags, strings.ToLower(strings.TrimRight(t, ".,;:!?)]}"))) {
			continue
		}
		for _, w := range words.Split(field) {
			if isNegation(w) {
				negations++
				negated = true
				continue
			}
			t, seen := k[w]
			if !seen {
				if !words.IsStopword(w) || factWords[w] {
					t = words.Term(w)
				}
				k[w] = t
			}
			if t == "" {
				continue
			}
			if negated {
				// "Use pnpm not npm" is not "Use npm not pnpm".
				t, negated = "!"+t, false
			}
			terms = append(terms, t)
		}
		// Symbols that make one thing another: C++ and C#, $5 and €5,
		// 10% and 10.
		for _, r := range field {
			if strings.ContainsRune(factSymbols, r) {
				terms = append(terms, string(r))
			}
		}
	}
	// Order counts: "copy prod to staging" is not "copy staging to prod".
	return strconv.Itoa(negations) + "|" + strings.Join(terms, " ")
}

// factWords are function words (words.IsStopword) that change what a note
// states, so the same-fact rule keeps them: "run migrations before
// deploy" is not "after deploy", "alerts go to pam only" is not "to pam",
// and "the cache can be flushed" is not "has been flushed".
var factWords = map[string]bool{
	"before": true, "after": true, "above": true, "below": true, "over": true, "under": true,
	"up": true, "down": true, "more": true, "most": true, "few": true, "only": true, "same": true,
	"other": true, "against": true, "between": true, "during": true, "until": true, "while": true,
	"once": true, "again": true, "off": true, "out": true, "all": true, "any": true, "both": true,
	"each": true, "some": true, "too": true, "very": true, "can": true, "could": true,
	"should": true, "would": true, "will": true, "has": true, "had": true, "have": true,
	"did": true, "does": true, "do": true, "from": true, "into": true, "through": true,
}

// factSymbols are the characters besides letters and digits that tell one
// fact from another.
const factSymbols = "%$€£¥+#<>="

// negations are the words that turn a statement around.
var negations = map[string]bool{
	"not": true, "no": true, "never": true, "nor": true, "neither": true, "none": true,
	"nothing": true, "nobody": true, "nowhere": true, "cannot": true, "without": true,
}

func isNegation(w string) bool {
	return negations[w] || strings.HasSuffix(w, "n't") || strings.HasSuffix(w, "n’t")
}

// findSame returns the wing's note that states the same fact as text
// (SameFact), else nil and the first note wake-up's measure calls similar
// (wakeup.Similar, with vec when the wing has vectors of its model).
// Superseded notes, by governance, and those in except are left out:
// restating a superseded fact is news.
func findSame(p *palace.Palace, wing, text string, vec []float32, except []string) (same, similar *palace.Note) {
	k := keyer{}
	key := k.key(text, tagsOf(text))
	for _, n := range p.Notes(wing) {
		if n.Governance.Status == govern.Superseded || slices.Contains(except, n.ID) {
			continue
		}
		if k.key(n.Text, n.Governance.Tags) == key {
			return &n, nil
		}
	}
	if n, ok := wakeup.Similar(p, wing, text, vec, except...); ok {
		return nil, &n
	}
	return nil, nil
}
