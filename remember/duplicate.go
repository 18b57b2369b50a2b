package remember

import (
	"slices"
	"strconv"
	"strings"

	"github.com/memminer/memminer/govern"
	"github.com/memminer/memminer/internal/words"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/wakeup"
)

// SameFact reports whether two notes' texts state the same fact, by
// remember's duplicate rule (docs/remember.md, "Duplicates"): once case,
// punctuation, markdown, word endings, function words, #tags and the
// "(added DATE)" marker are set aside, they have the same words, every
// number and identifier ("db-2", "8080", "max_client_conn") among them,
// and as many negations ("not", "never", "don't", …). Resemblance alone,
// of wording or of vectors, never makes two notes the same fact: "Do NOT
// deploy with make deploy" is news after "Deploy with make deploy", and
// "db-3 is the primary" after "db-2 is the primary".
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
	for _, field := range strings.Fields(text) {
		if t, ok := strings.CutPrefix(field, "#"); ok && slices.Contains(tags, strings.ToLower(strings.TrimRight(t, ".,;:!?)]}"))) {
			continue
		}
		for _, w := range words.Split(field) {
			if isNegation(w) {
				negations++
				continue
			}
			t, seen := k[w]
			if !seen {
				if !words.IsStopword(w) {
					t = words.Term(w)
				}
				k[w] = t
			}
			if t != "" {
				terms = append(terms, t)
			}
		}
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	return strconv.Itoa(negations) + "|" + strings.Join(terms, " ")
}

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
