package openai

import (
	"encoding/json"
	"testing"

	"github.com/memminer/memminer/embed/internal/httpembed"
	"github.com/memminer/memminer/embed/internal/httpembed/httpembedtest"
)

// BenchmarkEmbed measures the client's cost of one batch over loopback:
// encoding 128 texts and decoding 128 vectors of 1536 dimensions (the size
// of text-embedding-3-small), listed last index first, against a server that
// answers precomputed JSON.
func BenchmarkEmbed(b *testing.B) {
	const batch, dim = 128, 1536
	data := make([]item, batch)
	for i := range data {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(i*dim+j) / (batch * dim)
		}
		data[batch-1-i] = item{Object: "embedding", Index: i, Embedding: v}
	}
	answer, err := json.Marshal(map[string]any{"object": "list", "data": data})
	if err != nil {
		b.Fatal(err)
	}
	httpembedtest.Bench[embedRequest](b, answer, batch, func(root string) (httpembedtest.Embedder, error) {
		return New(Options{Model: "text-embedding-3-small", BaseURL: root + "/v1", Tuning: httpembed.Tuning{APIKey: testKey, BatchSize: batch}})
	})
}
