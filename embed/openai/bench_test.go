package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkEmbed measures the client's cost of one batch over loopback:
// encoding 128 texts and decoding 128 vectors of 1536 dimensions (the size
// of text-embedding-3-small), against a server that answers precomputed JSON.
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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req embedRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Write(answer)
	}))
	defer srv.Close()
	e, err := New(Options{Model: "text-embedding-3-small", BaseURL: srv.URL + "/v1", APIKey: testKey, BatchSize: batch})
	if err != nil {
		b.Fatal(err)
	}
	in := texts(batch)
	b.SetBytes(int64(len(answer)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Embed(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*batch), "µs/text")
}
