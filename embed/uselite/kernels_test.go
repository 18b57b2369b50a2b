package uselite

import (
	"context"
	"math"
	"strings"
	"testing"
)

// variedTexts returns the reference sentences, every fourth of the 500
// generated texts of testdata/tokens.json (unicode, punctuation, numbers,
// identifiers; a quarter keeps the portable kernel's run short), the
// odd inputs, and notes, code and long texts of the kinds mined.
func variedTexts(t *testing.T) []string {
	t.Helper()
	var texts []string
	for _, c := range readReference(t).Cases {
		texts = append(texts, c.Text)
	}
	cases := readTokenCases(t)
	for i := 0; i < len(cases); i += 4 {
		texts = append(texts, cases[i].Text)
	}
	texts = append(texts, oddTexts()...)
	texts = append(texts,
		"Decision: staging-db runs on grafana which halved the latency (added 2026-08-24).",
		"func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) { return nil, nil }",
		"SELECT id, wing FROM notes WHERE added > '2026-01-01' ORDER BY bm25(notes) LIMIT 5;",
		strings.Repeat("The daemon mines every memory file into the palace after each change. ", 20),
		strings.Repeat("東京 寿司 русский ελληνικά ", 30),
	)
	return texts
}

// TestEmbedKernelsAgree embeds many varied texts with every kernel set the
// CPU has and checks each vector against the portable (scalar) kernel's to
// within 1e-6 of cosine (float32 rounding; the tiles' three bfloat16
// products are as close, bfloat16 alone was 1e-4 off), and the AVX-512
// vectors against the AVX2 ones bit for bit (the same multiply-adds in
// the same order).
func TestEmbedKernelsAgree(t *testing.T) {
	m := loadRealModel(t)
	texts := variedTexts(t)
	vectors := map[string][][]float32{}
	for _, kern := range kernelSets {
		restore, ok := useKernels(kern.avx2, kern.avx512, kern.bf16)
		if !ok {
			continue
		}
		vecs, err := m.Embed(context.Background(), texts)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		checkVectors(t, vecs, len(texts), Dim)
		vectors[kern.name] = vecs
	}
	base := vectors["portable"]
	for name, vecs := range vectors {
		worst := 1.0
		for i, v := range vecs {
			cos := cosine(v, float64s(base[i]))
			worst = min(worst, cos)
			if cos < 1-1e-6 {
				t.Errorf("%s kernel, %q: cosine to the portable kernel 1 - %.1e, want >= 1 - 1e-6", name, texts[i], 1-cos)
			}
		}
		t.Logf("%s: %d texts, minimum cosine to the portable kernel 1 - %.1e", name, len(texts), 1-worst)
	}
	if wide, narrow := vectors["avx512"], vectors["avx2"]; wide != nil && narrow != nil {
		for i := range wide {
			for j := range wide[i] {
				if math.Float32bits(wide[i][j]) != math.Float32bits(narrow[i][j]) {
					t.Fatalf("%q: element %d is %v with AVX-512, %v with AVX2", texts[i], j, wide[i][j], narrow[i][j])
				}
			}
		}
	}
}

func float64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}
