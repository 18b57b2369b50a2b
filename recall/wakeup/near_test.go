package wakeup

import (
	"context"
	"testing"

	"github.com/memminer/memminer/mine"
)

func TestSimilar(t *testing.T) {
	hive := writeHive(t, []hiveFile{{path: "agents/pam/memory.md", content: `# Pam

- Aisle seats preferred on all flights (added 2026-05-17)
- The office printer on floor 2 jams on A3 paper
- Deploys to production need two approvals from the on-call team
- Old fact: lunch is at noon (superseded 2026-06-01)
`}})
	p := minePalace(t, hive+"/agents/pam", nil, mine.Options{})
	tests := []struct {
		text string
		line int // 0: no duplicate
	}{
		{"Aisle seats preferred on all flights", 3},
		{"aisle seats are preferred on all flights (added 2026-12-01)", 3},
		{"Deploys to production need two approvals from the on-call team #ops", 5},
		{"Window seats preferred on trains", 3}, // similar, not the same fact
		{"The printer on floor 3 works fine", 0},
		{"Old fact: lunch is at noon", 0}, // only a superseded note says it
	}
	for _, tt := range tests {
		n, ok := Similar(p, "pam", tt.text, nil)
		switch {
		case tt.line == 0 && ok:
			t.Errorf("Similar(%q) = line %d %q, want none", tt.text, n.Line, n.Text)
		case tt.line != 0 && (!ok || n.Line != tt.line):
			t.Errorf("Similar(%q) = line %d (%v), want line %d", tt.text, n.Line, ok, tt.line)
		}
	}
	if _, ok := Similar(p, "nobody", "Aisle seats preferred on all flights", nil); ok {
		t.Error("a duplicate in a wing that does not exist")
	}
}

// sameVector embeds every text as one vector: a model that finds every
// note of a wing close, as the built-in model does for short notes.
type sameVector struct{}

func (sameVector) Model() string { return "test-same" }

func (sameVector) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range texts {
		out[i] = []float32{1, 0.5, 0.25}
	}
	return out, nil
}

// TestSimilarSharesWords: a note is named as one the new note may replace
// only when the two share some of their rarer words, however close their
// vectors (issue 46: "Never commit .env files" was named similar to "The
// web app uses Vite").
func TestSimilarSharesWords(t *testing.T) {
	hive := writeHive(t, []hiveFile{{path: "agents/pam/memory.md", content: `# Pam

- The web app uses Vite with React 19
- Aisle seats preferred on all flights
- Deploys to production need two approvals from the on-call team
`}})
	p := minePalace(t, hive+"/agents/pam", sameVector{}, mine.Options{})
	vec := []float32{1, 0.5, 0.25}
	for _, tt := range []struct {
		text string
		line int // 0: none
	}{
		{"Never commit .env files; secrets live in the vault", 0},
		{"Window seats preferred on trains", 4},
		{"Deploys to production need three approvals", 5},
	} {
		n, ok := Similar(p, "pam", tt.text, vec)
		switch {
		case tt.line == 0 && ok:
			t.Errorf("Similar(%q) = line %d %q, want none", tt.text, n.Line, n.Text)
		case tt.line != 0 && (!ok || n.Line != tt.line):
			t.Errorf("Similar(%q) = line %d (%v), want line %d", tt.text, n.Line, ok, tt.line)
		}
	}
}
