package palace

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memminer/memminer/memory/govern"
)

// governed returns note n with governance g.
func governed(n Note, g govern.Note) Note {
	n.Governance = g
	return n
}

func ids(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

func TestSearchFilters(t *testing.T) {
	day := func(s string) time.Time {
		d, _ := time.Parse(time.DateOnly, s)
		return d
	}
	now := day("2026-12-01")
	mtime := day("2026-11-30")
	notes := []Note{
		governed(note("old", "", "The cache runs Redis 6.", 1), govern.Note{Status: govern.Superseded, Reason: "marked superseded"}),
		governed(note("new", "", "The cache runs Redis 7.", 2), govern.Note{Status: govern.Approved, Tags: []string{"cache", "ops"}}),
		governed(note("d1", "", "The cache moved on 2026-11-01.", 3), govern.Note{Date: day("2026-11-01"), Tags: []string{"cache"}}),
		governed(note("d2", "", "The cache grew on 2026-11-02.", 4), govern.Note{Date: day("2026-11-02")}),
		governed(note("aged", "", "The cache was tuned in 2026-03.", 5), govern.Note{Date: day("2026-03-01")}),
		governed(note("due", "", "The cache keys rotate, review: 2026-11-15.", 6), govern.Note{Review: day("2026-11-15")}),
		note("plain", "", "The cache is warm.", 7),
	}
	for _, e := range []struct {
		name string
		p    *Palace
	}{{"lexical", openT(t, filepath.Join(t.TempDir(), "p"), nil, false)}, {"hybrid", openT(t, filepath.Join(t.TempDir(), "p"), embedtestHashing(), false)}} {
		if _, err := e.p.ApplySource(context.Background(), "w", Source{Path: "/m.md", Mtime: mtime}, notes); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name string
			f    Filters
			want []string // as a set
		}{
			{"default leaves superseded out", Filters{}, []string{"new", "d1", "d2", "aged", "due", "plain"}},
			{"include superseded", Filters{IncludeSuperseded: true}, []string{"old", "new", "d1", "d2", "aged", "due", "plain"}},
			{"status approved", Filters{Status: govern.Approved}, []string{"new"}},
			{"status superseded", Filters{Status: govern.Superseded}, []string{"old"}},
			{"fresh", Filters{Fresh: true}, []string{"new", "d1", "d2", "plain"}},
			{"fresh, 20 days", Filters{Fresh: true, StaleAfter: 20 * 24 * time.Hour}, []string{"new", "plain"}},
			{"since a day", Filters{Since: day("2026-11-02")}, []string{"new", "d2", "due", "plain"}},
			{"until the end of a day", Filters{Until: day("2026-11-02").Add(24*time.Hour - 1)}, []string{"d1", "d2", "aged"}},
			{"until the start of a day", Filters{Until: day("2026-11-02")}, []string{"d1", "d2", "aged"}},
			{"until just before", Filters{Until: day("2026-11-02").Add(-1)}, []string{"d1", "aged"}},
			{"one day", Filters{Since: day("2026-11-02"), Until: day("2026-11-02")}, []string{"d2"}},
			{"tag", Filters{Tags: []string{"cache"}}, []string{"new", "d1"}},
			{"all tags", Filters{Tags: []string{"cache", "ops"}}, []string{"new"}},
			{"no such tag", Filters{Tags: []string{"nope"}}, nil},
		}
		for _, tt := range tests {
			tt.f.Now = now
			hits, err := e.p.Search(context.Background(), "cache", SearchOptions{Results: 20, Filters: tt.f})
			if err != nil {
				t.Fatalf("%s %s: %v", e.name, tt.name, err)
			}
			got := ids(hits)
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: hits %q, want %q", e.name, tt.name, got, want)
			}
		}
	}
}

func TestSearchMarksStale(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	p := openT(t, filepath.Join(t.TempDir(), "p"), nil, false)
	if _, err := p.ApplySource(context.Background(), "w", Source{Path: "/m.md", Mtime: now.Add(-100 * 24 * time.Hour)}, []Note{
		note("undated", "", "The cache is warm.", 1),
		governed(note("due", "", "The cache keys rotate.", 2), govern.Note{Review: now, Date: now}),
		governed(note("done", "", "[x] The cache was moved.", 3), govern.Note{Status: govern.Stale, Reason: "marked done", Date: now}),
	}); err != nil {
		t.Fatal(err)
	}
	hits, err := p.Search(context.Background(), "cache", SearchOptions{Results: 5, Filters: Filters{Now: now}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"undated": "not updated since 2026-08-23", "due": "review due 2026-12-01", "done": "marked done"}
	for _, h := range hits {
		if !h.Stale || h.StaleReason != want[h.ID] {
			t.Errorf("%s: stale %v %q, want %q", h.ID, h.Stale, h.StaleReason, want[h.ID])
		}
		delete(want, h.ID)
	}
	if len(want) > 0 {
		t.Errorf("missing hits %v", want)
	}
}

// TestApprovedRanksFirst: of two notes stating the same fact, the approved
// one comes first whichever order they are in, lexically and with vectors;
// an approved note unrelated to the query does not jump a good match.
func TestApprovedRanksFirst(t *testing.T) {
	fact := "Deploys go out from the release branch with make deploy."
	for _, approvedFirst := range []bool{true, false} {
		for _, e := range []struct {
			name string
			p    *Palace
		}{{"lexical", openT(t, filepath.Join(t.TempDir(), "p"), nil, false)}, {"hybrid", openT(t, filepath.Join(t.TempDir(), "p"), embedtestHashing(), false)}} {
			approved := governed(note("approved", "Deploys", fact, 1), govern.Note{Status: govern.Approved})
			plain := note("plain", "Deploys", fact+" ", 3)
			plain.Text = "deploys go out from the release branch with make deploy"
			other := governed(note("other", "Web", "The web bundle is built with vite.", 5), govern.Note{Status: govern.Approved})
			notes := []Note{plain, other, approved}
			if approvedFirst {
				notes = []Note{approved, other, plain}
			}
			for i := range notes {
				notes[i].Line = 2*i + 1
			}
			if _, err := e.p.ApplySource(context.Background(), "w", Source{Path: "/m.md"}, notes); err != nil {
				t.Fatal(err)
			}
			hits, err := e.p.Search(context.Background(), "how do deploys go out from the release branch", SearchOptions{Results: 3})
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(hits); len(got) < 2 || got[0] != "approved" || got[1] != "plain" {
				t.Errorf("%s, approved first in the file %v: hits %q, want approved, plain", e.name, approvedFirst, got)
			}
		}
	}
}

// TestRelevanceFloor: relevance is absolute, so a query matching nothing
// well is left with no hits, while a partial match keeps its hit; a note
// whose neighbour holds the query gets half the credit.
func TestRelevanceFloor(t *testing.T) {
	p := openT(t, filepath.Join(t.TempDir(), "p"), nil, false)
	if _, err := p.ApplySource(context.Background(), "w", Source{Path: "/m.md"}, []Note{
		note("a", "Infra", "Production Postgres runs on db-2.", 1),
		note("b", "Staging", "The staging database is wiped every Sunday.", 2),
		note("c", "Staging", "Keep no fixtures there.", 3),
	}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		query string
		floor float64
		want  []string
		rel   float64 // of the first hit
	}{
		{"postgres db-2", DefaultMinRelevance, []string{"a"}, 1},
		{"xyzzyplugh", DefaultMinRelevance, nil, 0},
		{"postgres xyzzy plugh frob nitz", DefaultMinRelevance, nil, 0},
		{"postgres xyzzy plugh frob nitz", 0, []string{"a"}, -1},
		{"staging wiped", 0.99, []string{"b"}, 1},
		{"sunday fixtures", 0.5, []string{"c", "b"}, 0.75}, // the shorter note first
	} {
		hits, err := p.Search(context.Background(), tt.query, SearchOptions{Results: 5, MinRelevance: tt.floor})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(hits); !slices.Equal(got, tt.want) {
			t.Errorf("%q at %v: hits %q, want %q", tt.query, tt.floor, got, tt.want)
			continue
		}
		for _, h := range hits {
			if h.Relevance < tt.floor || h.Relevance < 0 || h.Relevance > 1 {
				t.Errorf("%q: relevance %v outside [%v, 1]", tt.query, h.Relevance, tt.floor)
			}
		}
		if len(hits) > 0 && tt.rel >= 0 && math.Abs(hits[0].Relevance-tt.rel) > 1e-9 {
			t.Errorf("%q: relevance %v, want %v", tt.query, hits[0].Relevance, tt.rel)
		}
	}
}

// TestLeftOutNeighbourLendsNothing: a note beside a superseded one is not
// relevant for what the superseded note says.
func TestLeftOutNeighbourLendsNothing(t *testing.T) {
	p := openT(t, filepath.Join(t.TempDir(), "p"), nil, false)
	if _, err := p.ApplySource(context.Background(), "w", Source{Path: "/m.md"}, []Note{
		note("a", "Conventions", "Summaries go into docs/research.", 1),
		governed(note("b", "Conventions", "We no longer use the Notion board.", 2), govern.Note{Status: govern.Superseded}),
	}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		f    Filters
		want []string
	}{{Filters{}, nil}, {Filters{IncludeSuperseded: true}, []string{"b", "a"}}} {
		hits, err := p.Search(context.Background(), "notion board", SearchOptions{Results: 5, MinRelevance: DefaultMinRelevance, Filters: tt.f})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(hits); !slices.Equal(got, tt.want) {
			t.Errorf("%+v: hits %q, want %q", tt.f, got, tt.want)
		}
	}
}
