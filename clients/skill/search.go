package skill

import (
	"cmp"
	"path/filepath"
	"slices"

	"github.com/memminer/memminer/internal/words"
	"github.com/memminer/memminer/memory/secrets"
)

// Match is a published skill a search found, and how well.
type Match struct {
	Skill
	// Source is its SKILL.md relative to the hive, as a hit's source is.
	Source string `json:"source"`
	// Relevance is the share of the query's terms the skill's name and
	// description hold, in [0, 1].
	Relevance float64 `json:"relevance"`
}

// Search finds the published skills whose name and description (what a
// client shows the model to decide when to load it) hold at least
// minRelevance of query's terms, cut into terms as the palace cuts a
// note's (words.AppendTerms); best first, at most limit. A skill is on a
// shelf of its own, never a wing's note; proposed and deprecated skills
// are never offered.
func Search(hiveDir, query string, minRelevance float64, limit int) ([]Match, error) {
	want := uniqueTerms(query)
	if len(want) == 0 || limit < 1 {
		return nil, nil
	}
	published, err := PublishedSkills(hiveDir)
	if err != nil {
		return nil, err
	}
	var out []Match
	for _, s := range published {
		has := uniqueTerms(s.Name + "\n" + s.Description)
		n := 0
		for t := range want {
			if has[t] {
				n++
			}
		}
		if r := float64(n) / float64(len(want)); n > 0 && r >= minRelevance {
			// What is shown is masked, as search masks notes: a skill
			// published before skills were checked may hold a secret.
			s.Description, _ = secrets.Hide(s.Description)
			out = append(out, Match{Skill: s, Source: filepath.Join(rel(Published, s.Name), FileName), Relevance: r})
		}
	}
	slices.SortStableFunc(out, func(a, b Match) int { return cmp.Compare(b.Relevance, a.Relevance) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// uniqueTerms is the set of text's search terms.
func uniqueTerms(text string) map[string]bool {
	set := map[string]bool{}
	for _, t := range words.AppendTerms(nil, text) {
		set[t] = true
	}
	return set
}
