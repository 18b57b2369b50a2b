package remember

import (
	"errors"
	"strings"
	"testing"

	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace"
)

// TestRememberRoutesToInbox: a hypothesis or a high-risk note goes to the
// agent's inbox, is mined as unapproved and stays out of search unless
// asked; a verified low-risk note goes to memory as before, and a TTL
// gives it a review date.
func TestRememberRoutesToInbox(t *testing.T) {
	tests := []struct {
		name, confidence, risk string
		pending                bool
	}{
		{"default", "", "", false},
		{"verified low", "verified", "low", false},
		{"hypothesis", "hypothesis", "", true},
		{"high risk", "", "high", true},
		{"hypothesis high", "Hypothesis", "HIGH", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			res, err := f.remember(t, Request{Wing: "pam", Text: "the printer on floor two jams on cardstock", Confidence: tt.confidence, Risk: tt.risk})
			if err != nil {
				t.Fatal(err)
			}
			file := "agents/pam/memory.laptop.md"
			if tt.pending {
				file = "agents/pam/inbox.md"
			}
			if res.File != file || res.Pending != tt.pending || !res.Added {
				t.Fatalf("result = %+v, want file %s pending %v", res, file, tt.pending)
			}
			got := f.read(t, file)
			if tt.pending && got != "# pam's inbox (waiting for approval)\n\n- the printer on floor two jams on cardstock"+govern.InboxMarker(strings.ToLower(orDefault(tt.confidence, "verified")), strings.ToLower(orDefault(tt.risk, "low")))+" (added 2026-12-01)\n" {
				t.Errorf("inbox.md = %q", got)
			}
			hits := f.search(t, "printer jams cardstock")
			if found := len(hits) > 0 && hits[0].ID == res.ID; found == tt.pending {
				t.Errorf("found in a default search = %v, want %v", found, !tt.pending)
			}
			all, err := f.p.Search(t.Context(), "printer jams cardstock", palace.SearchOptions{Results: 5, Filters: palace.Filters{IncludeInbox: true}})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) == 0 || all[0].ID != res.ID {
				t.Fatalf("--include-inbox search: %+v", all)
			}
			if want := tt.pending; (all[0].Governance.Status == govern.Unapproved) != want {
				t.Errorf("status %q, unapproved want %v", all[0].Governance.Status, want)
			}
		})
	}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func TestRememberInboxRefusals(t *testing.T) {
	f := newFixture(t, map[string]string{"agents/pam/memory.laptop.md": "# pam\n\n- old fact (added 2026-11-01)\n"})
	for _, req := range []Request{
		{Wing: "pam", Text: "x", Confidence: "maybe"},
		{Wing: "pam", Text: "x", Risk: "medium"},
		{Wing: "pam", Text: "x", Confidence: "hypothesis", TTL: "30d"},
		{Wing: "pam", Text: "x", TTL: "soon"},
		{Wing: "pam", Text: "x", Risk: "high", Supersedes: []string{"memory.laptop.md:3"}},
	} {
		if _, err := f.remember(t, req); !errors.Is(err, ErrBadRequest) {
			t.Errorf("%+v: err = %v, want a bad request", req, err)
		}
	}
	if got := f.read(t, "agents/pam/memory.laptop.md"); got != "# pam\n\n- old fact (added 2026-11-01)\n" {
		t.Errorf("memory.md changed: %q", got)
	}
}

// TestRememberTTL: a verified low-risk note with a TTL is due for review
// TTL after the day it is written, and stale from then.
func TestRememberTTL(t *testing.T) {
	f := newFixture(t, nil)
	res, err := f.remember(t, Request{Wing: "pam", Text: "the office wifi password is on the fridge", TTL: "30d"})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.read(t, res.File); !strings.Contains(got, "- the office wifi password is on the fridge (review: 2026-12-31) (added 2026-12-01)\n") {
		t.Errorf("memory.md = %q", got)
	}
	for _, n := range f.p.Notes("pam") {
		if n.ID == res.ID {
			if stale, why := n.Governance.Staleness(day, day.AddDate(0, 0, 31), 0); !stale || why != "review due 2026-12-31" {
				t.Errorf("a month later: stale %v %q", stale, why)
			}
			return
		}
	}
	t.Fatal("note not mined")
}

// TestRememberNotDuplicateOfInbox: a fact written into memory is not a
// duplicate of the same fact waiting in the inbox (approving it is that
// write), while a second identical hypothesis is.
func TestRememberNotDuplicateOfInbox(t *testing.T) {
	f := newFixture(t, nil)
	h, err := f.remember(t, Request{Wing: "pam", Text: "the vending machine takes only coins", Confidence: "hypothesis"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := f.remember(t, Request{Wing: "pam", Text: "the vending machine takes only coins", Confidence: "hypothesis"})
	if err != nil || again.Added || again.DuplicateOf == nil || again.DuplicateOf.ID != h.ID {
		t.Errorf("second hypothesis: %+v, %v; want a duplicate of %s", again, err, h.ID)
	}
	m, err := f.remember(t, Request{Wing: "pam", Text: "the vending machine takes only coins"})
	if err != nil || !m.Added || m.File != "agents/pam/memory.laptop.md" {
		t.Errorf("into memory: %+v, %v", m, err)
	}
}
