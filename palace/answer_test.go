package palace

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/embed/embedtest"
)

// steered embeds like embedtest.Hashing, except that a text equal to one
// of its keys, or containing one of over 12 bytes, gets that key's vector: a test decides which notes the
// "model" finds close to the query, as the built-in model does for notes
// that only resemble it. Words listed in rare are rare in English.
type steered struct {
	embedtest.Hashing
	vecs map[string][]float32
	rare map[string]bool
}

func (s *steered) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, err := s.Hashing.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i, t := range texts {
		if v, ok := s.vecs[t]; ok {
			out[i] = append([]float32(nil), v...)
			continue
		}
		for key, v := range s.vecs {
			if len(key) > 12 && strings.Contains(t, key) {
				out[i] = append([]float32(nil), v...)
			}
		}
	}
	return out, nil
}

func (s *steered) WordLogProb(word string) float64 {
	if s.rare[strings.ToLower(word)] {
		return 2 * rareWordLogProb
	}
	return rareWordLogProb / 2
}

var _ embed.WordFrequency = (*steered)(nil)

// unit is a vector of dim dimensions pointing along axis a, with a little
// of axis b.
func unit(dim, a, b int, of float32) []float32 {
	v := make([]float32, dim)
	v[a], v[b] = 1, of
	return v
}

// smallHive is the hive: a dozen notes of two wings, "run" in many
// of them, the Postgres note the only one holding "postgres" with "runs".
func smallHive(t *testing.T, e embed.Embedder) *Palace {
	t.Helper()
	p := openT(t, filepath.Join(t.TempDir(), "p"), e, false)
	wings := map[string][]string{
		"ops": {
			"Postgres 17 runs on db-4 since the 2026-12-06 upgrade; db-3 is a replica.",
			"CI runs on GitHub Actions; the nightly job builds the images.",
			"Backups run nightly at 02:00 UTC into the vault bucket.",
			"Never restart the queue workers during business hours.",
			"The load balancer is HAProxy on lb-1.",
			"Incident on build-04's disk: the cache filled it; capped at 400 GB.",
		},
		"dev": {
			"The web app uses Vite with React 19; run `npm run dev` for the dev server.",
			"Storybook runs on port 6006.",
			"Never commit .env files; secrets live in the vault.",
			"Colour tokens live in src/theme/tokens.ts.",
			"Source maps are uploaded on every release.",
			"The user prefers short commit messages in the imperative.",
		},
	}
	for wing, texts := range wings {
		var notes []Note
		for i, text := range texts {
			notes = append(notes, note(wing+"-"+string(rune('a'+i)), "Notes", text, i+1))
		}
		if _, err := p.ApplySource(context.Background(), wing, Source{Path: "/hive/agents/" + wing + "/memory.md", Agent: wing}, notes); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestAnswerRanksFirst: the note holding the query's words ranks first,
// even when the model finds another note, sharing one common word, much
// closer (issue 46: "which host runs postgres" gave the Vite note).
func TestAnswerRanksFirst(t *testing.T) {
	const dim = 64
	e := &steered{Hashing: embedtest.Hashing{Dim: dim}, vecs: map[string][]float32{
		"which host runs postgres": unit(dim, 1, 2, 0.1),
		"The web app uses Vite":    unit(dim, 1, 3, 0.2), // close to the query
		"Postgres 17 runs on db-4": unit(dim, 5, 6, 0.1), // far from it
	}}
	for _, tt := range []struct {
		name string
		emb  embed.Embedder
	}{{"lexical", nil}, {"vectors", e}} {
		p := smallHive(t, tt.emb)
		hits, err := p.Search(context.Background(), "which host runs postgres", SearchOptions{MinRelevance: DefaultMinRelevance})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].ID != "ops-a" {
			t.Errorf("%s: hits %q, want ops-a (the Postgres note) first", tt.name, ids(hits))
		}
	}
}

// TestPromptGivesOnlyAnswers: the prompt hook's question gives the notes
// whose own words cover the prompt, at most PromptResults, and nothing for
// a prompt memory does not bear on, however close the model finds a note.
func TestPromptGivesOnlyAnswers(t *testing.T) {
	const dim = 64
	e := &steered{Hashing: embedtest.Hashing{Dim: dim}, vecs: map[string][]float32{
		"sort the imports in this file": unit(dim, 1, 2, 0.1),
		"Colour tokens live":            unit(dim, 1, 3, 0.1), // the model's pick for it
		"sort":                          unit(dim, 1, 3, 0.1),
		"imports":                       unit(dim, 1, 3, 0.1),
	}}
	for _, tt := range []struct {
		name string
		emb  embed.Embedder
	}{{"lexical", nil}, {"vectors", e}} {
		p := smallHive(t, tt.emb)
		ask := func(prompt string, opts SearchOptions) ([]Hit, *Explanation) {
			t.Helper()
			hits, ex, err := p.Explain(context.Background(), prompt, opts)
			if err != nil {
				t.Fatal(err)
			}
			return hits, ex
		}
		hits, ex := ask("sort the imports in this file", SearchOptions{Prompt: true, MinRelevance: DefaultMinRelevance})
		if len(hits) != 0 {
			t.Errorf("%s: unrelated prompt given %q", tt.name, ids(hits))
		}
		if !ex.Prompt {
			t.Errorf("%s: the explanation does not say it decided for the prompt hook", tt.name)
		}
		if tt.emb != nil {
			// Search itself still answers with what the model finds.
			if hits, _ := ask("sort the imports in this file", SearchOptions{MinRelevance: DefaultMinRelevance}); len(hits) == 0 {
				t.Errorf("%s: search found nothing; the test's model steers nothing", tt.name)
			}
		}
		hits, _ = ask("which host runs postgres", SearchOptions{Prompt: true, MinRelevance: DefaultMinRelevance})
		if len(hits) == 0 || hits[0].ID != "ops-a" || len(hits) > PromptResults {
			t.Errorf("%s: postgres prompt given %q, want ops-a first, at most %d", tt.name, ids(hits), PromptResults)
		}
		for _, h := range hits {
			if h.Evidence == nil || !h.Evidence.Answers {
				t.Errorf("%s: %s given without answering: %+v", tt.name, h.ID, h.Evidence)
			}
		}
		hits, _ = ask("never commit", SearchOptions{Prompt: true, Results: 10, MinRelevance: DefaultMinRelevance})
		if len(hits) > PromptResults {
			t.Errorf("%s: %d notes given, want at most %d", tt.name, len(hits), PromptResults)
		}
	}
}

// TestForeignQueryFindsNothing: a query a third made of words no note has
// and English rarely uses gets nothing from the cosine, however close the
// model puts a note; the same query in everyday words does.
func TestForeignQueryFindsNothing(t *testing.T) {
	const dim = 64
	e := &steered{Hashing: embedtest.Hashing{Dim: dim},
		vecs: map[string][]float32{
			"zorblax flavour profile": unit(dim, 1, 2, 0.1),
			"tasty flavour profile":   unit(dim, 1, 2, 0.1),
			"Colour tokens live":      unit(dim, 1, 2, 0.1), // the query's twin
			// The words alone, which ground the query.
			"flavour": unit(dim, 1, 2, 0.1),
			"profile": unit(dim, 1, 2, 0.1),
			"tasty":   unit(dim, 1, 2, 0.1),
			"zorblax": unit(dim, 1, 2, 0.1),
		},
		rare: map[string]bool{"zorblax": true}}
	p := smallHive(t, e)
	hits, ex, err := p.Explain(context.Background(), "zorblax flavour profile", SearchOptions{MinRelevance: DefaultMinRelevance})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 0 || !ex.Foreign {
		t.Errorf("foreign query: hits %q, foreign %v; want none, foreign", ids(hits), ex.Foreign)
	}
	hits, ex, err = p.Explain(context.Background(), "tasty flavour profile", SearchOptions{MinRelevance: DefaultMinRelevance})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || ex.Foreign {
		t.Errorf("everyday query: hits %q, foreign %v; want the twin note, not foreign", ids(hits), ex.Foreign)
	}
}

// TestPossessiveIsTheWord: "build-04's" is build-04, in notes and queries.
func TestPossessiveIsTheWord(t *testing.T) {
	p := smallHive(t, nil)
	for _, q := range []string{"what happened to build-04?", "build-04's disk"} {
		hits, err := p.Search(context.Background(), q, SearchOptions{MinRelevance: DefaultMinRelevance})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].ID != "ops-f" {
			t.Errorf("%q: hits %q, want ops-f first", q, ids(hits))
		}
	}
}

// TestKnownIdentifierOutweighsAMissingOne: a query naming an identifier a
// note has is about it, whatever else a pasted log line names; a query
// whose identifiers no note has finds nothing.
func TestKnownIdentifierOutweighsAMissingOne(t *testing.T) {
	p := smallHive(t, nil)
	for _, tt := range []struct {
		query string
		want  string // "" for nothing
	}{
		{"disk full on build-04 and web-17", "ops-f"},
		{"db-4 replica lag from host web-17", "ops-a"},
		{"disk full on web-17", ""},
		{"JIRA-1234 db replica", ""},
	} {
		hits, err := p.Search(context.Background(), tt.query, SearchOptions{MinRelevance: DefaultMinRelevance})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tt.want == "" && len(hits) > 0:
			t.Errorf("%q: hits %q, want none", tt.query, ids(hits))
		case tt.want != "" && (len(hits) == 0 || hits[0].ID != tt.want):
			t.Errorf("%q: hits %q, want %s first", tt.query, ids(hits), tt.want)
		}
	}
}

// TestSubjectRanksFirst: of two notes holding what the query names, the
// one about it (naming it first) ranks above the one naming it in passing.
func TestSubjectRanksFirst(t *testing.T) {
	p := openT(t, filepath.Join(t.TempDir(), "p"), nil, false)
	notes := []Note{
		note("a", "Notes", "Unreal Insights traces for the boss fight hitch are in `nas-02/traces/LF-3307`.", 1),
		note("b", "Notes", "LF-3307: hitch of ~300 ms when the boss enters phase two on PS5; fix targeted for patch 1.0.3.", 2),
		note("c", "Notes", "The boss fight music is by Anna Vale.", 3),
	}
	if _, err := p.ApplySource(context.Background(), "ops", Source{Path: "/hive/agents/ops/memory.md", Agent: "ops"}, notes); err != nil {
		t.Fatal(err)
	}
	hits, err := p.Search(context.Background(), "what's LF-3307", SearchOptions{MinRelevance: DefaultMinRelevance})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].ID != "b" {
		t.Errorf("hits %q, want b (the note about LF-3307) first", ids(hits))
	}
}
