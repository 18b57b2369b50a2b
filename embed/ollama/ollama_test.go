package ollama

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// step answers one request to the fake server; req is the decoded body.
type step func(t *testing.T, w http.ResponseWriter, r *http.Request, req embedRequest)

// fakeOllama is an httptest server speaking /api/embed. It plays its steps
// in order, repeating the last one.
type fakeOllama struct {
	srv   *httptest.Server
	mu    sync.Mutex
	steps []step
	reqs  []embedRequest
	auth  []string
}

func newFake(t *testing.T, steps ...step) *fakeOllama {
	t.Helper()
	f := &fakeOllama{steps: steps}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/embed" {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q, want application/json", ct)
		}
		var req embedRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("decode request: %v", err)
		}
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, req)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		s := f.steps[min(n, len(f.steps)-1)]
		f.mu.Unlock()
		s(t, w, r, req)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeOllama) requests() []embedRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]embedRequest(nil), f.reqs...)
}

// vecFor is the fake model: a 3-d vector derived from the text.
func vecFor(text string) []float32 {
	return []float32{float32(len(text)), float32(strings.Count(text, "a")), 1}
}

func writeJSON(t *testing.T, w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		t.Errorf("write response: %v", err)
	}
}

// ok answers with the fake model's vectors.
func ok(t *testing.T, w http.ResponseWriter, _ *http.Request, req embedRequest) {
	vecs := make([][]float32, len(req.Input))
	for i, s := range req.Input {
		vecs[i] = vecFor(s)
	}
	writeJSON(t, w, map[string]any{"model": req.Model, "embeddings": vecs})
}

// vectors answers with fixed vectors regardless of the input.
func vectors(vecs ...[]float32) step {
	return func(t *testing.T, w http.ResponseWriter, _ *http.Request, _ embedRequest) {
		writeJSON(t, w, map[string]any{"embeddings": vecs})
	}
}

// status answers with code, body and extra headers.
func status(code int, body string, header ...string) step {
	return func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ embedRequest) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

// raw answers 200 with body as is.
func raw(body string) step {
	return func(_ *testing.T, w http.ResponseWriter, _ *http.Request, _ embedRequest) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}
}

// hangUp drops the connection without answering.
func hangUp(t *testing.T, w http.ResponseWriter, _ *http.Request, _ embedRequest) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	conn.Close()
}

// stall never answers; it returns when the client gives up.
func stall(_ *testing.T, _ http.ResponseWriter, r *http.Request, _ embedRequest) {
	<-r.Context().Done()
}

// recordSleeps replaces e's sleep with one that records waits and returns at once.
func recordSleeps(e *Embedder) *[]time.Duration {
	var mu sync.Mutex
	var got []time.Duration
	e.client.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, d)
		return ctx.Err()
	}
	return &got
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.Repeat("a", i+1) + " note"
	}
	return out
}

func TestEmbed(t *testing.T) {
	const key = "ollama-secret-key-123"
	tests := []struct {
		name       string
		opts       Options // Model and BaseURL are filled in
		steps      []step
		in         []string
		want       [][]float32 // nil: the fake model's vectors for in
		wantErr    []string    // substrings of the error; nil: success
		wantErrIs  error
		wantInputs [][]string // inputs per request; nil: one request with in
		wantSleeps []time.Duration
		sleepRange [2]time.Duration // when set, every sleep lies in it
	}{
		{
			name:  "success",
			steps: []step{ok},
			in:    texts(3),
		},
		{
			name:       "empty input sends nothing",
			steps:      []step{ok},
			in:         []string{},
			want:       [][]float32{},
			wantInputs: [][]string{},
		},
		{
			name:       "batching",
			opts:       Options{BatchSize: 2},
			steps:      []step{ok},
			in:         texts(5),
			wantInputs: [][]string{texts(5)[0:2], texts(5)[2:4], texts(5)[4:5]},
		},
		{
			name:       "batch size equal to input",
			opts:       Options{BatchSize: 3},
			steps:      []step{ok},
			in:         texts(3),
			wantInputs: [][]string{texts(3)},
		},
		{
			name:       "server error retried until attempts run out",
			opts:       Options{MaxRetries: 2, Backoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond},
			steps:      []step{status(500, `{"error":"llama runner process has terminated"}`)},
			in:         texts(2),
			wantErr:    []string{"ollama nomic-embed-text", "giving up after 3 attempts", "/api/embed", "500 Internal Server Error", "llama runner process has terminated"},
			wantInputs: [][]string{texts(2), texts(2), texts(2)},
			sleepRange: [2]time.Duration{5 * time.Millisecond, 20 * time.Millisecond},
		},
		{
			name:       "retries disabled",
			opts:       Options{MaxRetries: -1},
			steps:      []step{status(503, `overloaded`)},
			in:         texts(1),
			wantErr:    []string{"503 Service Unavailable", "overloaded"},
			wantInputs: [][]string{texts(1)},
		},
		{
			name:       "client error not retried",
			steps:      []step{status(404, `{"error":"model \"nomic-embed-text\" not found, try pulling it first"}`)},
			in:         texts(2),
			wantErr:    []string{"404 Not Found", `model "nomic-embed-text" not found, try pulling it first`},
			wantInputs: [][]string{texts(2)},
		},
		{
			name:       "429 with Retry-After then success",
			steps:      []step{status(429, `{"error":"busy"}`, "Retry-After", "3"), ok},
			in:         texts(2),
			wantInputs: [][]string{texts(2), texts(2)},
			wantSleeps: []time.Duration{3 * time.Second},
		},
		{
			name:       "Retry-After beyond the limit gives up at once",
			steps:      []step{status(429, `{"error":"quota"}`, "Retry-After", "86400")},
			in:         texts(1),
			wantErr:    []string{"retry after 24h0m0s", "429 Too Many Requests", "quota"},
			wantInputs: [][]string{texts(1)},
		},
		{
			name:       "5xx then success",
			opts:       Options{Backoff: time.Millisecond},
			steps:      []step{status(502, `bad gateway`), status(503, ``), ok},
			in:         texts(4),
			wantInputs: [][]string{texts(4), texts(4), texts(4)},
			sleepRange: [2]time.Duration{time.Millisecond / 2, 2 * time.Millisecond},
		},
		{
			name:       "network error then success",
			opts:       Options{Backoff: time.Millisecond},
			steps:      []step{hangUp, ok},
			in:         texts(2),
			wantInputs: [][]string{texts(2), texts(2)},
		},
		{
			name:       "timeout retried then reported",
			opts:       Options{Timeout: 50 * time.Millisecond, MaxRetries: 1, Backoff: time.Millisecond},
			steps:      []step{stall},
			in:         texts(1),
			wantErr:    []string{"giving up after 2 attempts", "no answer within 50ms"},
			wantErrIs:  context.DeadlineExceeded,
			wantInputs: [][]string{texts(1), texts(1)},
		},
		{
			name:       "timeout then success",
			opts:       Options{Timeout: 50 * time.Millisecond, Backoff: time.Millisecond},
			steps:      []step{stall, ok},
			in:         texts(2),
			wantInputs: [][]string{texts(2), texts(2)},
		},
		{
			name:    "wrong dimensions within a batch",
			steps:   []step{vectors([]float32{1, 2, 3}, []float32{1, 2})},
			in:      texts(2),
			wantErr: []string{"vector for text 1 has 2 dimensions, vector for text 0 has 3"},
		},
		{
			name:    "empty vector",
			steps:   []step{vectors([]float32{})},
			in:      texts(1),
			wantErr: []string{"vector for text 0 is empty"},
		},
		{
			name:    "count mismatch",
			steps:   []step{vectors([]float32{1, 2, 3}, []float32{4, 5, 6})},
			in:      texts(3),
			wantErr: []string{"got 2 vectors for 3 texts"},
		},
		{
			name:       "count mismatch in a later batch names the texts",
			opts:       Options{BatchSize: 2},
			steps:      []step{ok, vectors([]float32{1, 2, 3})},
			in:         texts(4),
			wantErr:    []string{"texts 2-3 of 4", "got 1 vectors for 2 texts"},
			wantInputs: [][]string{texts(4)[:2], texts(4)[2:]},
		},
		{
			name:    "malformed JSON not retried",
			steps:   []step{raw(`{"embeddings": [[1, 2,`), ok},
			in:      texts(1),
			wantErr: []string{"malformed response"},
		},
		{
			name:    "not JSON at all",
			steps:   []step{raw(`<html>proxy login</html>`), ok},
			in:      texts(1),
			wantErr: []string{"malformed response", "invalid character"},
		},
		{
			name:    "error field in a 200 answer",
			steps:   []step{raw(`{"error":"input length exceeds the context length"}`)},
			in:      texts(1),
			wantErr: []string{"server error: input length exceeds the context length"},
		},
		{
			name:       "key never in errors",
			opts:       Options{APIKey: key, MaxRetries: 1, Backoff: time.Millisecond},
			steps:      []step{status(500, `{"error":"bad token `+key+`"}`)},
			in:         texts(1),
			wantErr:    []string{"bad token [redacted]"},
			wantInputs: [][]string{texts(1), texts(1)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.steps...)
			var logs bytes.Buffer
			opts := tc.opts
			opts.Model = "nomic-embed-text"
			opts.BaseURL = f.srv.URL
			opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			e, err := New(opts)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			sleeps := recordSleeps(e)

			got, err := e.Embed(context.Background(), tc.in)

			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Embed: %v", err)
				}
				want := tc.want
				if want == nil {
					for _, s := range tc.in {
						want = append(want, vecFor(s))
					}
				}
				if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
					t.Errorf("vectors = %v, want %v", got, want)
				}
			} else {
				if err == nil {
					t.Fatalf("Embed = %v, want error containing %q", got, tc.wantErr)
				}
				t.Logf("error: %v", err)
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				if tc.wantErrIs != nil && !errors.Is(err, tc.wantErrIs) {
					t.Errorf("error %v is not %v", err, tc.wantErrIs)
				}
			}
			if strings.Contains(fmt.Sprint(err), key) || strings.Contains(logs.String(), key) {
				t.Errorf("API key leaked: error %q, logs %q", err, logs.String())
			}

			wantInputs := tc.wantInputs
			if wantInputs == nil {
				wantInputs = [][]string{tc.in}
			}
			reqs := f.requests()
			if len(reqs) != len(wantInputs) {
				t.Fatalf("%d requests, want %d", len(reqs), len(wantInputs))
			}
			for i, r := range reqs {
				if r.Model != "nomic-embed-text" {
					t.Errorf("request %d model = %q", i, r.Model)
				}
				if !reflect.DeepEqual(r.Input, wantInputs[i]) {
					t.Errorf("request %d input = %q, want %q", i, r.Input, wantInputs[i])
				}
				wantAuth := ""
				if opts.APIKey != "" {
					wantAuth = "Bearer " + opts.APIKey
				}
				if f.auth[i] != wantAuth {
					t.Errorf("request %d Authorization = %q, want %q", i, f.auth[i], wantAuth)
				}
			}
			if tc.wantSleeps != nil && !reflect.DeepEqual(*sleeps, tc.wantSleeps) {
				t.Errorf("sleeps = %v, want %v", *sleeps, tc.wantSleeps)
			}
			if tc.sleepRange[1] > 0 {
				if len(*sleeps) != len(reqs)-1 {
					t.Errorf("%d sleeps for %d requests", len(*sleeps), len(reqs))
				}
				for _, d := range *sleeps {
					if d < tc.sleepRange[0] || d > tc.sleepRange[1] {
						t.Errorf("sleep %v outside [%v, %v]", d, tc.sleepRange[0], tc.sleepRange[1])
					}
				}
			}
		})
	}
}

func TestEmbedDimensionsFixedByFirstVector(t *testing.T) {
	f := newFake(t, vectors([]float32{1, 2, 3}), vectors([]float32{1, 2, 3, 4}))
	e, err := New(Options{Model: "m", BaseURL: f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if d := e.Dimensions(); d != 0 {
		t.Errorf("Dimensions before first call = %d, want 0", d)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatalf("first Embed: %v", err)
	}
	if d := e.Dimensions(); d != 3 {
		t.Errorf("Dimensions = %d, want 3", d)
	}
	_, err = e.Embed(context.Background(), []string{"y"})
	if err == nil || !strings.Contains(err.Error(), "vectors have 4 dimensions, want 3") {
		t.Errorf("second Embed error = %v, want dimension mismatch", err)
	}
}

func TestEmbedCancel(t *testing.T) {
	tests := []struct {
		name    string
		backoff time.Duration
		step    step
	}{
		// The caller cancels while the server is still working.
		{name: "during request", backoff: time.Millisecond, step: stall},
		// The caller cancels while the client waits to retry.
		{name: "during backoff", backoff: time.Hour, step: status(503, "busy")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			arrived := make(chan struct{}, 10)
			f := newFake(t, func(t *testing.T, w http.ResponseWriter, r *http.Request, req embedRequest) {
				arrived <- struct{}{}
				tc.step(t, w, r, req)
			})
			e, err := New(Options{Model: "m", BaseURL: f.srv.URL, Backoff: tc.backoff, MaxBackoff: tc.backoff})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-arrived
				cancel()
			}()
			_, err = e.Embed(ctx, texts(2))
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Embed error = %v, want context.Canceled", err)
			}
			if n := len(f.requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

func TestEmbedCanceledBeforeStart(t *testing.T) {
	f := newFake(t, ok)
	e, err := New(Options{Model: "m", BaseURL: f.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, texts(1)); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed error = %v, want context.Canceled", err)
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests, want 0", n)
	}
}

func TestServerDown(t *testing.T) {
	f := newFake(t, ok)
	url := f.srv.URL
	f.srv.Close()
	e, err := New(Options{Model: "m", BaseURL: url, MaxRetries: 1, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	recordSleeps(e)
	_, err = e.Embed(context.Background(), texts(1))
	if err == nil || !strings.Contains(err.Error(), url+"/api/embed") || !strings.Contains(err.Error(), "giving up after 2 attempts") {
		t.Errorf("Embed error = %v, want one naming %s after 2 attempts", err, url)
	}
}

func TestHostURL(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "", want: "http://127.0.0.1:11434"},
		{in: "  ", want: "http://127.0.0.1:11434"},
		{in: "127.0.0.1:11434", want: "http://127.0.0.1:11434"},
		{in: "example.internal", want: "http://example.internal:11434"},
		{in: "example.internal:8080", want: "http://example.internal:8080"},
		{in: "0.0.0.0", want: "http://127.0.0.1:11434"},
		{in: "0.0.0.0:9999", want: "http://127.0.0.1:9999"},
		{in: ":11435", want: "http://127.0.0.1:11435"},
		{in: "::1", want: "http://[::1]:11434"},
		{in: "[::1]:8000", want: "http://[::1]:8000"},
		{in: "[::]:8000", want: "http://[::1]:8000"},
		{in: `"127.0.0.1:11434"`, want: "http://127.0.0.1:11434"},
		{in: "http://127.0.0.1:11434/", want: "http://127.0.0.1:11434"},
		{in: "http://example.internal", want: "http://example.internal"},
		{in: "https://example.internal/ollama/", want: "https://example.internal/ollama"},
		{in: "http://0.0.0.0:11434", want: "http://127.0.0.1:11434"},
		{in: "http://[::]", want: "http://[::1]"},
		{in: "example.internal:http", wantErr: `bad port "http"`},
		{in: "example.internal:70000", wantErr: `bad port "70000"`},
		{in: "ftp://example.internal", wantErr: "scheme must be http or https"},
		{in: "http://", wantErr: "no host"},
		{in: "http://example.internal:0", wantErr: `bad port "0"`},
		{in: "http://me:s3cret@example.internal", wantErr: `"http://…@example.internal": credentials in the URL are not supported`},
		{in: "http://me:s3cret@example.internal:x/", wantErr: `"http://…@example.internal:x/": invalid port`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := HostURL(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("HostURL(%q) = %q, %v; want error containing %q", tc.in, got, err, tc.wantErr)
				}
				if err != nil && strings.Contains(err.Error(), "s3cret") {
					t.Errorf("HostURL(%q) error %q echoes the password", tc.in, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("HostURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name      string
		opts      Options
		env       map[string]string
		wantModel string
		wantBase  string
		wantKey   string
		wantErr   string
	}{
		{
			name:      "defaults",
			opts:      Options{Model: "nomic-embed-text"},
			wantModel: "ollama:nomic-embed-text",
			wantBase:  DefaultBaseURL,
		},
		{
			name:      "OLLAMA_HOST without scheme",
			opts:      Options{Model: "all-minilm:l6-v2"},
			env:       map[string]string{"OLLAMA_HOST": "10.0.0.5:11500", "OLLAMA_API_KEY": " k "},
			wantModel: "ollama:all-minilm:l6-v2",
			wantBase:  "http://10.0.0.5:11500",
			wantKey:   "k",
		},
		{
			name:      "options win over env",
			opts:      Options{Model: "m", BaseURL: "https://gpu.internal", APIKey: "mine"},
			env:       map[string]string{"OLLAMA_HOST": "10.0.0.5:11500", "OLLAMA_API_KEY": "env"},
			wantModel: "ollama:m",
			wantBase:  "https://gpu.internal",
			wantKey:   "mine",
		},
		{
			name:    "empty model",
			opts:    Options{Model: " "},
			wantErr: "empty model name",
		},
		{
			name:    "bad OLLAMA_HOST",
			opts:    Options{Model: "m"},
			env:     map[string]string{"OLLAMA_HOST": "gopher://x"},
			wantErr: "scheme must be http or https",
		},
		{
			name:    "negative batch size",
			opts:    Options{Model: "m", BatchSize: -1},
			wantErr: "negative batch size",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := FromEnv(tc.opts, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("FromEnv error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromEnv: %v", err)
			}
			if e.Model() != tc.wantModel || e.BaseURL() != tc.wantBase || e.client.apiKey != tc.wantKey {
				t.Errorf("got model %q base %q key %q; want %q %q %q",
					e.Model(), e.BaseURL(), e.client.apiKey, tc.wantModel, tc.wantBase, tc.wantKey)
			}
			if strings.Contains(e.String(), "mine") && tc.wantKey == "mine" {
				t.Errorf("String() = %q shows the API key", e.String())
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{name: "absent", want: 0},
		{name: "seconds", header: map[string]string{"Retry-After": "7"}, want: 7 * time.Second},
		{name: "zero", header: map[string]string{"Retry-After": "0"}, want: 0},
		{name: "negative", header: map[string]string{"Retry-After": "-3"}, want: 0},
		{name: "huge", header: map[string]string{"Retry-After": "99999999999"}, want: 24 * time.Hour},
		{name: "date", header: map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, want: 90 * time.Second},
		{name: "past date", header: map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, want: 0},
		{name: "garbage", header: map[string]string{"Retry-After": "soon"}, want: 0},
		{name: "milliseconds", header: map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, want: 250 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			if got := parseRetryAfter(h, now); got != tc.want {
				t.Errorf("parseRetryAfter(%v) = %v, want %v", tc.header, got, tc.want)
			}
		})
	}
}

func TestExcerpt(t *testing.T) {
	tests := []struct {
		name, raw, key, want string
	}{
		{name: "ollama error", raw: `{"error":"model not found"}`, want: "model not found"},
		{name: "openai error", raw: `{"error":{"message":"Rate limit reached","type":"requests"}}`, want: "Rate limit reached"},
		{name: "message", raw: `{"message":"nope"}`, want: "nope"},
		{name: "detail", raw: `{"detail":"Not authenticated"}`, want: "Not authenticated"},
		{name: "plain text", raw: "upstream\n  connect error\n", want: "upstream connect error"},
		{name: "empty", raw: "", want: ""},
		{name: "long", raw: strings.Repeat("x", 500), want: strings.Repeat("x", excerptLen) + "…"},
		{name: "key redacted", raw: `{"error":"bad key sk-123 given"}`, key: "sk-123", want: "bad key [redacted] given"},
		{name: "key redacted in text", raw: "token=sk-123", key: "sk-123", want: "token=[redacted]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := excerpt([]byte(tc.raw), tc.key); got != tc.want {
				t.Errorf("excerpt(%q) = %q, want %q", tc.raw, got, tc.want)
			}
		})
	}
}
