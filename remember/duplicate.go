package remember

import (
	"slices"
	"strconv"
	"strings"

	"github.com/memminer/memminer/govern"
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
func SameFact(a, b string) bool { return factKey(a) == factKey(b) }

// factKey is the normalised form SameFact compares.
func factKey(text string) string {
	text = govern.WithoutAdded(text)
	tags := govern.Classify(govern.File{}, "", text).Tags
	var terms []string
	negations := 0
	for _, field := range strings.Fields(text) {
		if t, ok := strings.CutPrefix(field, "#"); ok && slices.Contains(tags, strings.ToLower(strings.TrimRight(t, ".,;:!?)]}"))) {
			continue
		}
		for _, w := range wakeup.Words(field) {
			if isNegation(w) {
				negations++
				continue
			}
			if t, ok := wakeup.Term(w); ok {
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
	key := factKey(text)
	for _, n := range p.Notes(wing) {
		if n.Governance.Status == govern.Superseded || slices.Contains(except, n.ID) {
			continue
		}
		if factKey(n.Text) == key {
			return &n, nil
		}
	}
	if n, ok := wakeup.Similar(p, wing, text, vec, except...); ok {
		return nil, &n
	}
	return nil, nil
}
