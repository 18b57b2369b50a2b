package httpembedtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Bench measures the client's cost of embedding batch texts in one request
// over loopback, against a server that checks each request decodes as Req
// and answers with the precomputed body answer. open returns the client for
// the server's root URL. Besides ns/op, B/op and allocs/op it reports the
// answer's bytes per second and µs/text.
func Bench[Req any](b *testing.B, answer []byte, batch int, open func(root string) (Embedder, error)) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Write(answer)
	}))
	defer srv.Close()
	e, err := open(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	in := Texts(batch)
	b.SetBytes(int64(len(answer)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Embed(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*batch), "µs/text")
}
