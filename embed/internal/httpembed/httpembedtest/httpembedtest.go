// Package httpembedtest holds what the tests of the HTTP embedding backends
// share: a fake server that plays scripted answers and records what it was
// sent, ready-made answers (HTTP errors, raw bodies, hang-ups, stalls), a
// deterministic fake model, a recorder for retry waits, a runner for tables
// of exchanges and a loopback benchmark.
//
// It does not import the backends or package httpembed, so each of them can
// use it from its own tests. Req is always the type a backend's request body
// decodes into.
package httpembedtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Step answers one request to a Server; req is the decoded request body.
type Step[Req any] func(t *testing.T, w http.ResponseWriter, r *http.Request, req Req)

// Server is a loopback HTTP server accepting JSON POSTs to one path. It
// plays its steps in order, one per request, repeating the last.
type Server[Req any] struct {
	// URL is the server root, e.g. "http://127.0.0.1:41234".
	URL   string
	srv   *httptest.Server
	mu    sync.Mutex
	steps []Step[Req]
	reqs  []Req
	auth  []string
}

// NewServer starts a Server for path, closed when the test ends. A request
// other than a JSON POST to path fails the test.
func NewServer[Req any](t *testing.T, path string, steps ...Step[Req]) *Server[Req] {
	t.Helper()
	s := &Server[Req]{steps: steps}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != path {
			t.Errorf("unexpected request %s %s, want POST %s", r.Method, r.URL.Path, path)
			http.NotFound(w, r)
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q, want application/json", ct)
		}
		var req Req
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("decode request: %v", err)
		}
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, req)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		step := s.steps[min(n, len(s.steps)-1)]
		s.mu.Unlock()
		step(t, w, r, req)
	}))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Close stops the server before the test ends.
func (s *Server[Req]) Close() { s.srv.Close() }

// Requests returns the decoded bodies and the Authorization headers of the
// requests received so far.
func (s *Server[Req]) Requests() ([]Req, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Req(nil), s.reqs...), append([]string(nil), s.auth...)
}

// WriteJSON answers 200 with v encoded as JSON.
func WriteJSON(t *testing.T, w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		t.Errorf("write response: %v", err)
	}
}

// JSON answers 200 with v encoded as JSON, whatever the request.
func JSON[Req any](v any) Step[Req] {
	return func(t *testing.T, w http.ResponseWriter, _ *http.Request, _ Req) {
		WriteJSON(t, w, v)
	}
}

// Status answers with code and body; header lists extra header names and
// values, alternating.
func Status[Req any](code int, body string, header ...string) Step[Req] {
	return func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ Req) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

// Raw answers 200 with body as is.
func Raw[Req any](body string) Step[Req] {
	return Status[Req](http.StatusOK, body)
}

// HangUp drops the connection without answering.
func HangUp[Req any](t *testing.T, w http.ResponseWriter, _ *http.Request, _ Req) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	conn.Close()
}

// Stall never answers; it returns when the client gives up.
func Stall[Req any](_ *testing.T, _ http.ResponseWriter, r *http.Request, _ Req) {
	<-r.Context().Done()
}

// VecFor is the fake model: a 3-d vector derived from the text.
func VecFor(text string) []float32 {
	return []float32{float32(len(text)), float32(strings.Count(text, "a")), 1}
}

// VecsFor returns VecFor of each text.
func VecsFor(texts []string) [][]float32 {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = VecFor(s)
	}
	return out
}

// Texts returns n distinct texts.
func Texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Repeat("a", i+1) + " note"
	}
	return out
}

// Sleeps records the waits a client asks for and returns at once. The zero
// value is ready to use.
type Sleeps struct {
	mu  sync.Mutex
	got []time.Duration
}

// Sleep records d and returns ctx.Err(); it has the signature clients expect
// of their sleep function.
func (s *Sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, d)
	return ctx.Err()
}

// Got returns the waits recorded so far.
func (s *Sleeps) Got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.got...)
}

// Embedder is the client under test.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
