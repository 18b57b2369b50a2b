package recall

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/memminer/memminer/bench/internal/harness"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/internal/words"
)

// BenchmarkSoftCoverage measures, on the dev set, an approach to the
// hook's paraphrases that was tried and left out (BENCHMARKS.md, issue
// 46): a prompt word counts as held by a note when the built-in model
// puts one of the note's words within cosine tau of it, not only when the
// note holds the word. A note answers at coverage 0.5, as in the hook;
// with minCos > 0 only the note nearest the prompt's vector may answer
// through such soft words, and only when its cosine is at least minCos.
// Notes are the list items of the hive's files. Run with
//
//	go test -run '^$' -bench SoftCoverage -benchtime 1x ./bench/recall
func BenchmarkSoftCoverage(b *testing.B) {
	sets, err := Sets()
	if err != nil {
		b.Fatal(err)
	}
	model := harness.BuiltinModel(b)
	for _, minCos := range []float64{0, 0.45, 0.5} {
		for _, tau := range []float64{0.5, 0.55, 0.6, 0.65, 0.7} {
			b.Run(fmt.Sprintf("minCos=%.2f/tau=%.2f", minCos, tau), func(b *testing.B) {
				for b.Loop() {
					c, err := softCoverage(context.Background(), sets["dev"], model, tau, minCos)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(c.paraphrase), "paraphrases/37")
					b.ReportMetric(float64(c.task), "tasks/48")
					b.ReportMetric(float64(c.noise), "unrelated/69")
				}
			})
		}
	}
}

type softCounts struct{ paraphrase, task, noise int }

// softNote is a note's content words and its vector.
type softNote struct {
	text  string
	words []string
	vec   []float32
}

func softCoverage(ctx context.Context, set Set, e embed.Embedder, tau, minCos float64) (softCounts, error) {
	vecs := map[string][]float32{}
	embedOne := func(text string) ([]float32, error) {
		if v, ok := vecs[text]; ok {
			return v, nil
		}
		v, err := e.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		vecs[text] = v[0]
		return v[0], nil
	}
	contentWords := func(text string) ([]string, error) {
		var out []string
		for _, w := range words.Split(text) {
			if words.IsStopword(w) || len(w) < 2 {
				continue
			}
			if _, err := embedOne(w); err != nil {
				return nil, err
			}
			out = append(out, w)
		}
		return out, nil
	}
	held := func(q string, n softNote, tau float64) bool {
		best := 0.0
		for _, w := range n.words {
			if words.Term(w) == words.Term(q) {
				return true
			}
			best = max(best, cosine(vecs[q], vecs[w]))
		}
		return best >= tau
	}
	covers := func(qs []string, n softNote, tau float64) bool {
		var k int
		for _, q := range qs {
			if held(q, n, tau) {
				k++
			}
		}
		return len(qs) > 0 && 2*k >= len(qs)
	}
	var c softCounts
	for _, h := range set.Hives {
		var notes []softNote
		for _, f := range h.Files {
			for _, line := range strings.Split(f, "\n") {
				line = strings.TrimSpace(line)
				if !strings.HasPrefix(line, "- ") {
					continue
				}
				ws, err := contentWords(line)
				if err != nil {
					return c, err
				}
				v, err := embedOne(strings.TrimPrefix(line, "- "))
				if err != nil {
					return c, err
				}
				notes = append(notes, softNote{text: line, words: ws, vec: v})
			}
		}
		// answers returns the notes that answer prompt.
		answers := func(prompt string) ([]softNote, error) {
			qs, err := contentWords(prompt)
			if err != nil {
				return nil, err
			}
			v, err := embedOne(prompt)
			if err != nil {
				return nil, err
			}
			var out []softNote
			nearest, best := -1, -1.0
			for i, n := range notes {
				if cos := cosine(v, n.vec); cos > best {
					nearest, best = i, cos
				}
				if minCos == 0 && covers(qs, n, tau) || covers(qs, n, math.Inf(1)) {
					out = append(out, n)
				}
			}
			if minCos > 0 && nearest >= 0 && best >= minCos && covers(qs, notes[nearest], tau) {
				out = append(out, notes[nearest])
			}
			return out, nil
		}
		for _, k := range []struct {
			qs []Query
			n  *int
		}{{h.Paraphrase, &c.paraphrase}, {h.Task, &c.task}} {
			for _, q := range k.qs {
				got, err := answers(q.Query)
				if err != nil {
					return c, err
				}
				for _, n := range got {
					if strings.Contains(n.text, q.Answer) {
						*k.n++
						break
					}
				}
			}
		}
		for _, p := range h.Unrelated {
			got, err := answers(p)
			if err != nil {
				return c, err
			}
			if len(got) > 0 {
				c.noise++
			}
		}
	}
	return c, nil
}

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}
