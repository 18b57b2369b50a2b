package palace

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/embed/embedtest"
)

func TestIdentifierLike(t *testing.T) {
	for _, tt := range []struct {
		tok  string
		want bool
	}{
		{"JIRA-1234", true}, {"db-2", true}, {"0x80070005", true}, {"ERR_SSL_PROTOCOL_ERROR", true},
		{"NullPointerException", true}, {"OOMKilled", true}, {"ECONNRESET", true}, {"SIGSEGV", true},
		{"503", true}, {"v3.14.2", true}, {"iPhone", true},
		{"kubernetes", false}, {"Postgres", false}, {"self-care", false}, {"electron-vite", false},
		{"18th", false}, {"5K", false}, {"10am", false}, {"1990s", false}, {"2023", false}, {"8080", true}, {"1883", false}, {"s3", true},
		{"API", false}, {"LLM", false}, {"PRs", false}, {"URLs", false}, {"HTTP", false}, {"12", false}, {"_", false},
	} {
		if got := identifierLike(tt.tok); got != tt.want {
			t.Errorf("identifierLike(%q) = %v, want %v", tt.tok, got, tt.want)
		}
	}
}

func TestQueryTokens(t *testing.T) {
	var got []string
	for _, tok := range queryTokens("How did JIRA-1234 break the kestrel queues, and the kestrel's db-2?") {
		s := tok.term
		if tok.identifier {
			s += "!"
		}
		if tok.embed {
			s += "~"
		}
		got = append(got, s)
	}
	want := []string{"jira-1234!", "break~", "kestrel~", "queue~", "db-2!"}
	if !slices.Equal(got, want) {
		t.Errorf("tokens %q, want %q", got, want)
	}
}

// twoWings is a generated palace of two wings of 40 notes each: a dozen
// about the kestrel queues in one, a dozen about the osprey shards in the
// other, and notes about neither.
func twoWings(t *testing.T, e embed.Embedder) *Palace {
	t.Helper()
	p := openT(t, filepath.Join(t.TempDir(), "p"), e, false)
	filler := []string{"the garden fence was painted green", "lunch orders go to the front desk",
		"the printer on floor three jams on thick paper", "badges are renewed every spring",
		"the coffee machine is descaled on fridays", "parking permits come from facilities",
		"the wiki has the holiday calendar", "new laptops are ordered through procurement"}
	for _, w := range []struct{ id, topic string }{{"kestrel", "the kestrel queue %d drains at night"}, {"osprey", "the osprey shard %d rebalances weekly"}} {
		var notes []Note
		for i := range 40 {
			text := fmt.Sprintf(w.topic, i)
			if i >= 12 {
				text = fmt.Sprintf("%s (%s item %d)", filler[i%len(filler)], w.id[:1], i)
			}
			notes = append(notes, note(fmt.Sprintf("%s-%d", w.id, i), "Ops", text, i+1))
		}
		if _, err := p.ApplySource(context.Background(), w.id, Source{Path: "/hive/agents/" + w.id + "/memory.md", Agent: w.id}, notes); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestMultiTopicQueries: a query whose parts live in different wings
// returns both parts, and a part alone returns its notes as fully
// relevant, with BM25 alone and with vectors.
func TestMultiTopicQueries(t *testing.T) {
	for _, e := range []struct {
		name string
		emb  embed.Embedder
	}{{"lexical", nil}, {"hashing", &embedtest.Hashing{Dim: 4096}}} {
		p := twoWings(t, e.emb)
		for _, tt := range []struct {
			query string
			wings []string // the wings the hits must come from, all of them
			rel   float64  // the least relevance of a hit
		}{
			{"kestrel queue osprey shard", []string{"kestrel", "osprey"}, 1},
			{"osprey shard kestrel queue", []string{"kestrel", "osprey"}, 1},
			{"which kestrel queue drains, and which osprey shard rebalances?", []string{"kestrel", "osprey"}, 1},
			{"kestrel queue", []string{"kestrel"}, 1},
			{"osprey shard", []string{"osprey"}, 1},
			{"kestrel", []string{"kestrel"}, 1},
		} {
			hits, err := p.Search(context.Background(), tt.query, SearchOptions{Results: 10, MinRelevance: DefaultMinRelevance})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, h := range hits {
				seen[h.Wing] = true
				if h.Relevance < tt.rel-1e-9 {
					t.Errorf("%s %q: hit %s relevance %.3f, want at least %v", e.name, tt.query, h.ID, h.Relevance, tt.rel)
				}
				if !strings.Contains(h.Text, h.Wing) {
					t.Errorf("%s %q: hit %q is not about the %s", e.name, tt.query, h.Text, h.Wing)
				}
			}
			for _, w := range tt.wings {
				if !seen[w] {
					t.Errorf("%s %q: no hit from wing %s (hits %q)", e.name, tt.query, w, ids(hits))
				}
			}
			if len(seen) != len(tt.wings) {
				t.Errorf("%s %q: hits from %v, want only %q", e.name, tt.query, seen, tt.wings)
			}
		}
	}
}

// TestAbsentIdentifierReturnsNothing: an identifier no note has leaves
// nothing relevant, even beside words the palace knows; one a note has is
// found; Explain says why.
func TestAbsentIdentifierReturnsNothing(t *testing.T) {
	for _, e := range []embed.Embedder{nil, &embedtest.Hashing{Dim: 4096}} {
		p := twoWings(t, e)
		for _, tt := range []struct {
			query   string
			missing string
		}{
			{"JIRA-1234", "JIRA-1234"},
			{"kestrel queue JIRA-1234", "JIRA-1234"},
			{"ECONNREFUSED on the osprey shard", "ECONNREFUSED"},
			{"KestrelQueueDrainer", "KestrelQueueDrainer"},
		} {
			hits, ex, err := p.Explain(context.Background(), tt.query, SearchOptions{MinRelevance: DefaultMinRelevance})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 0 {
				t.Errorf("%q: hits %q, want none", tt.query, ids(hits))
			}
			if ex.MissingIdentifier != tt.missing {
				t.Errorf("%q: missing identifier %q, want %q", tt.query, ex.MissingIdentifier, tt.missing)
			}
			if e != nil && len(ex.NearMisses) == 0 {
				// With vectors every note is a candidate.
				t.Errorf("%q: no near misses explained", tt.query)
			}
			for _, h := range ex.NearMisses {
				if h.Evidence == nil || h.Evidence.Passed || h.Relevance != 0 || !strings.Contains(h.Evidence.Reason, tt.missing) {
					t.Errorf("%q: near miss %s evidence %+v, want a failure naming %s", tt.query, h.ID, h.Evidence, tt.missing)
				}
			}
		}
		// An identifier the palace has is found.
		hits, err := p.Search(context.Background(), "queue 7", SearchOptions{MinRelevance: DefaultMinRelevance})
		if err != nil || len(hits) == 0 || hits[0].ID != "kestrel-7" {
			t.Errorf("queue 7: hits %q, err %v; want kestrel-7 first", ids(hits), err)
		}
	}
}

// TestExplainMatchesSearch: Explain returns Search's hits, each with the
// evidence its relevance came from, passed.
func TestExplainMatchesSearch(t *testing.T) {
	p := twoWings(t, &embedtest.Hashing{Dim: 4096})
	for _, q := range []string{"kestrel queue osprey shard", "garden fence", "printer jams", "nothing here at all"} {
		opts := SearchOptions{Results: 5, MinRelevance: DefaultMinRelevance}
		want, err := p.Search(context.Background(), q, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, ex, err := p.Explain(context.Background(), q, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), ids(want)) {
			t.Errorf("%q: explained hits %q, searched %q", q, ids(got), ids(want))
		}
		for _, h := range got {
			if e := h.Evidence; e == nil || !e.Passed || e.Relevance != h.Relevance || e.Relevance < opts.MinRelevance {
				t.Errorf("%q: hit %s relevance %v, evidence %+v", q, h.ID, h.Relevance, h.Evidence)
			}
		}
		for _, h := range ex.NearMisses {
			if e := h.Evidence; e == nil || e.Passed || e.Relevance >= opts.MinRelevance {
				t.Errorf("%q: near miss %s evidence %+v", q, h.ID, h.Evidence)
			}
		}
		if h, _ := p.Search(context.Background(), q, opts); len(h) == 0 && len(ex.NearMisses) == 0 {
			t.Errorf("%q: nothing found and no near miss explained", q)
		}
	}
}

// TestSearchEmbedsQueryWordsOnce: a hybrid search embeds the query and,
// in one call marked embed.ForWords, each content word it grounds with
// (not identifiers, numbers or short words); a lexical search embeds
// nothing.
func TestSearchEmbedsQueryWordsOnce(t *testing.T) {
	emb := &embedtest.Hashing{Dim: 4096}
	p := twoWings(t, emb)
	emb.Reset()
	if _, err := p.Search(context.Background(), "does the kestrel queue 7 drain at night on db-2?", SearchOptions{}); err != nil {
		t.Fatal(err)
	}
	// kestrel, queue, drain, night: "7" and "db-2" are not embedded alone.
	if emb.Calls() != 1 || emb.Texts() != 1 || emb.Words() != 4 {
		t.Errorf("embedded %d texts in %d calls and %d words; want the query once and 4 words", emb.Texts(), emb.Calls(), emb.Words())
	}
	emb.Reset()
	if _, err := p.Search(context.Background(), "kestrel queue", SearchOptions{Mode: LexicalOnly}); err != nil {
		t.Fatal(err)
	}
	if emb.Calls() != 0 || emb.Words() != 0 {
		t.Errorf("a lexical search embedded %d texts and %d words", emb.Texts(), emb.Words())
	}
}
