package wakeup

import (
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
