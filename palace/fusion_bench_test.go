package palace

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/embed/embedtest"
)

// benchPalace fills a palace with wings×perWing synthetic notes in sections
// of 25, words drawn from a small vocabulary so queries match many notes.
func benchPalaceWith(b *testing.B, e embed.Embedder, wings, perWing int) *Palace {
	b.Helper()
	words := strings.Fields(`postgres pgbouncer redis api gateway bundle vite release staging db cron payment auth token
	limiter index cache runner dark picker changelog suite flags bucket archive dns certs balancer metrics log backup
	migration queue worker kubernetes nomad terraform ansible systemd docker vault grafana sentry pagerduty wiki runbook
	port region node nightly weekly rota incident review decision team latency cost compliance timeout`)
	p, err := Open(context.Background(), filepath.Join(b.TempDir(), "p"), Options{Embedder: e})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	seed := uint32(1)
	next := func(n int) int {
		seed = seed*1664525 + 1013904223
		return int(seed>>8) % n
	}
	for w := range wings {
		notes := make([]Note, perWing)
		for i := range notes {
			var t []string
			for range 8 + next(8) {
				t = append(t, words[next(len(words))])
			}
			id := fmt.Sprintf("w%d-n%d", w, i)
			notes[i] = note(id, fmt.Sprintf("Section %d", i/25), strings.Join(t, " "), i+1)
		}
		if _, err := p.ApplySource(context.Background(), fmt.Sprintf("w%03d", w), Source{Path: fmt.Sprintf("/w%d.md", w)}, notes); err != nil {
			b.Fatal(err)
		}
	}
	return p
}

// hashVectors is an embedder for benchmarks: 512 dimensions from the text's hash.
type hashVectors struct{}

func (hashVectors) Model() string { return "bench-hash" }

func (hashVectors) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 512)
		h := uint32(2166136261)
		for _, c := range []byte(t) {
			h = (h ^ uint32(c)) * 16777619
		}
		for j := range v {
			h = h*1664525 + 1013904223
			v[j] = float32(int32(h)) / (1 << 31)
		}
		out[i] = v
	}
	return out, nil
}

// BenchmarkSearch times one search over 100 wings of 1,000 notes.
func BenchmarkSearch(b *testing.B) {
	for _, bc := range []struct {
		name string
		mode Mode
		emb  embed.Embedder
	}{{"lexical", LexicalOnly, nil}, {"hybrid", Hybrid, hashVectors{}}} {
		b.Run(bc.name, func(b *testing.B) {
			p := benchPalaceWith(b, bc.emb, 100, 1000)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := p.Search(context.Background(), "pgbouncer release staging timeout", SearchOptions{Results: 10, Mode: bc.mode}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func embedtestHashing() embed.Embedder { return &embedtest.Hashing{} }

// BenchmarkVectorChannel times the similarities of one query to every note
// of 100 wings × 1,000 notes (512-d): the palace's own scan of the vectors
// its collections hold (with the window channel), and chromem-go's
// QueryEmbedding asked for each wing's top 100 and for all of its notes;
// with the process's CPU time per operation (cpu-ms/op).
func BenchmarkVectorChannel(b *testing.B) {
	ctx := context.Background()
	p := benchPalaceWith(b, hashVectors{}, 100, 1000)
	vs, _ := hashVectors{}.Embed(ctx, []string{"pgbouncer release staging timeout"})
	q := vs[0]
	normalize(q)
	var wings []*wing
	for _, w := range p.wings {
		if _, err := viewOf(ctx, w); err != nil {
			b.Fatal(err)
		}
		wings = append(wings, w)
	}
	b.Run("scan", func(b *testing.B) {
		defer reportCPU(b, processCPU())
		for b.Loop() {
			for _, w := range wings {
				v, err := viewOf(ctx, w)
				if err != nil {
					b.Fatal(err)
				}
				(&wingScores{w: w, v: v}).vecChannels(q)
			}
		}
	})
	for _, k := range []int{100, 1000} {
		b.Run(fmt.Sprintf("chromem-top%d", k), func(b *testing.B) {
			defer reportCPU(b, processCPU())
			for b.Loop() {
				for _, w := range wings {
					if _, err := w.vecs.coll.QueryEmbedding(ctx, q, min(k, w.vecs.count()), nil, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
