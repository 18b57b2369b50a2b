package ollama

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req embedRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Write(answer)
	}))
	defer srv.Close()
	e, err := New(Options{Model: "nomic-embed-text", BaseURL: srv.URL, BatchSize: batch})
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
