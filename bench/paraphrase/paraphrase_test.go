package paraphrase

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/kljensen/snowball/english"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/palace"
)

// function words a paraphrase may share with its target.
var function = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the of to in on at by for with from and or but is are was were be been do does did
	we i you they it its our their what which who when where why how can could should must may might will would
	there here this that these those some any one each every before after about into than then not no yes
	us me my your his her them all much many more most long`) {
		function[w] = true
	}
}

func contentStems(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if !function[w] {
			out[english.Stem(w, false)] = true
		}
	}
	return out
}

// TestQueriesShareNoContentWord keeps the set honest: a query that shares a
// content word (after stemming) with its target note, heading included, is
// not a paraphrase.
func TestQueriesShareNoContentWord(t *testing.T) {
	ctx := context.Background()
	p, err := palace.Open(ctx, filepath.Join(t.TempDir(), "p"), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := runMine(ctx, p); err != nil {
		t.Fatal(err)
	}
	qs, err := Queries()
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 20 {
		t.Fatalf("%d queries, want at least 20", len(qs))
	}
	var notes []palace.Note
	for _, w := range p.Wings() {
		notes = append(notes, p.Notes(w.ID)...)
	}
	for _, q := range qs {
		var target *palace.Note
		for i := range notes {
			if strings.Contains(notes[i].Text, q.Target) {
				if target != nil {
					t.Fatalf("target %q matches more than one note", q.Target)
				}
				target = &notes[i]
			}
		}
		if target == nil {
			t.Fatalf("target %q matches no note of examples/hive", q.Target)
		}
		noteStems := contentStems(target.EmbedText())
		for s := range contentStems(q.Query) {
			if noteStems[s] {
				t.Errorf("query %q shares %q with its target %q", q.Query, s, q.Target)
			}
		}
	}
}

// TestParaphraseRecall checks the built-in model where lexical search is
// blind: hybrid search must keep every target the vectors find (fusion
// must not lose the paraphrase case) and clearly beat lexical search. The
// issue's 80%-in-top-5 target is reported, not asserted: see BENCHMARKS.md.
func TestParaphraseRecall(t *testing.T) {
	ctx := context.Background()
	e, err := embed.Open(ctx, embed.UseLite, embed.Options{CacheDir: os.Getenv("MEMMINER_MODEL_CACHE")})
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("built-in model unavailable: %v", err)
		}
		t.Fatal(err)
	}
	const k = 5
	results := map[palace.Mode]Result{}
	for _, m := range []palace.Mode{palace.LexicalOnly, palace.VectorOnly, palace.Hybrid} {
		emb := e
		if m == palace.LexicalOnly {
			emb = nil
		}
		r, err := Run(ctx, hiveDir, t.TempDir(), emb, m, k)
		if err != nil {
			t.Fatal(err)
		}
		results[m] = r
		t.Logf("%-8s top-%d: %d/%d (%.0f%%); missed: %q", r.Mode, k, r.Hits, r.Total, 100*float64(r.Hits)/float64(r.Total), r.Misses)
	}
	h, v, l := results[palace.Hybrid], results[palace.VectorOnly], results[palace.LexicalOnly]
	if h.Hits < v.Hits {
		t.Errorf("hybrid found %d targets, fewer than vectors alone (%d): fusion loses paraphrases", h.Hits, v.Hits)
	}
	if h.Hits < l.Hits+h.Total/4 {
		t.Errorf("hybrid (%d) does not clearly beat lexical (%d)", h.Hits, l.Hits)
	}
}
