package palace

import (
	"context"
	"path/filepath"
	"testing"
)

// TestJoinCompounds: two words of a query that a note spells as one find
// that note ("hand off" the handoff, "roll back" the rollback), and a pair
// whose first word is a stopword never joins ("to day" is not "today").
func TestJoinCompounds(t *testing.T) {
	p := openT(t, filepath.Join(t.TempDir(), "p"), nil, false)
	texts := []string{
		"handoff ho-9a13 to ferris: verify the excise cutters' night signals",
		"Rollbacks of the API use `deploy --previous`; never revert by hand.",
		"Hand tools live in the shed; the workshop opens at 08:00.",
		"Today's standup moved to 10:00.",
		"Each day the backups run at 02:00 UTC.",
		"The database backup runs nightly into the vault.",
		"Data base migrations need a review by the DBA team.",
		"Our login page uses OAuth.",
		"Log in with SSO before running the admin scripts.",
	}
	var notes []Note
	for i, text := range texts {
		notes = append(notes, note(string(rune('a'+i)), "Notes", text, i+1))
	}
	if _, err := p.ApplySource(context.Background(), "ops", Source{Path: "/hive/agents/ops/memory.md", Agent: "ops"}, notes); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		query, first string
		answers      bool
	}{
		{"what did we hand off", "a", true},
		{"how do we roll back the API", "b", true},
		{"where are the hand tools", "c", true},
		// "to day" stays two words: the backups note, not the standup.
		{"backups to day", "e", true},
		// Notes that spell the pair as two words are found first, the
		// joined word's after them (a review found them dropped).
		{"data base", "g", true},
		{"log in", "i", true},
	} {
		hits, _, err := p.Explain(context.Background(), tt.query, SearchOptions{MinRelevance: DefaultMinRelevance})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].ID != tt.first {
			t.Errorf("%q: hits %q, want %s first", tt.query, ids(hits), tt.first)
			continue
		}
		if got := hits[0].Evidence.Answers; got != tt.answers {
			t.Errorf("%q: first hit answers %v, want %v (%s)", tt.query, got, tt.answers, hits[0].Evidence.Reason)
		}
	}
}
