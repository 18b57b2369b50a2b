package ollama

import (
	"encoding/json"
	"testing"

	"github.com/memminer/memminer/embed/internal/httpembed"
	"github.com/memminer/memminer/embed/internal/httpembed/httpembedtest"
)

// BenchmarkEmbed measures the client's cost of one batch over loopback:
// encoding 32 texts and decoding 32 vectors of 768 dimensions (the size of
// nomic-embed-text), against a server that answers precomputed JSON.
func BenchmarkEmbed(b *testing.B) {
	const batch, dim = 32, 768
	vecs := make([][]float32, batch)
	for i := range vecs {
		vecs[i] = make([]float32, dim)
		for j := range vecs[i] {
			vecs[i][j] = float32(i*dim+j) / (batch * dim)
		}
	}
	answer, err := json.Marshal(map[string]any{"embeddings": vecs})
	if err != nil {
		b.Fatal(err)
	}
	httpembedtest.Bench[embedRequest](b, answer, batch, func(root string) (httpembedtest.Embedder, error) {
		return New(Options{Model: "nomic-embed-text", BaseURL: root, Tuning: httpembed.Tuning{BatchSize: batch}})
	})
}
