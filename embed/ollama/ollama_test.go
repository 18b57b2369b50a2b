package ollama

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/embed/internal/httpembed"
	"github.com/memminer/memminer/embed/internal/httpembed/httpembedtest"
)

// The retry, timeout, redaction and dimension machinery is tested once in
// package httpembed; these tests cover Ollama's wire format and that every
// Options field reaches the shared client.

type (
	step     = httpembedtest.Step[embedRequest]
	testCase = httpembedtest.Case[embedRequest, Options]
)

var (
	status = httpembedtest.Status[embedRequest]
	raw    = httpembedtest.Raw[embedRequest]
	stall  = httpembedtest.Stall[embedRequest]
	texts  = httpembedtest.Texts
)

// ok answers like /api/embed with the fake model's vectors.
func ok(t *testing.T, w http.ResponseWriter, _ *http.Request, req embedRequest) {
	httpembedtest.WriteJSON(t, w, map[string]any{"model": req.Model, "embeddings": httpembedtest.VecsFor(req.Input)})
}

// vectors answers with fixed vectors regardless of the input.
func vectors(vecs ...[]float32) step {
	return httpembedtest.JSON[embedRequest](map[string]any{"embeddings": vecs})
}

// harness runs exchanges with an Embedder for model nomic-embed-text,
// without an API key unless a case gives one.
var harness = &httpembedtest.Harness[embedRequest, Options]{
	Path: "/api/embed",
	Open: func(t *testing.T, opts Options, env httpembedtest.Env) httpembedtest.Embedder {
		opts.Model, opts.BaseURL, opts.APIKey = "nomic-embed-text", env.Root, env.Key
		opts.HTTPClient, opts.Logger = env.HTTPClient, env.Logger
		e, err := New(opts)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		e.client.SetSleep(env.Sleep)
		return e
	},
	CheckRequest: func(t *testing.T, i int, req embedRequest, want []string) {
		if req.Model != "nomic-embed-text" {
			t.Errorf("request %d model = %q", i, req.Model)
		}
		if !reflect.DeepEqual(req.Input, want) {
			t.Errorf("request %d input = %q, want %q", i, req.Input, want)
		}
	},
}

func TestEmbed(t *testing.T) {
	const key = "ollama-secret-key-123"
	harness.Run(t, []testCase{
		{
			Name:  "success",
			Steps: []step{ok},
			In:    texts(3),
		},
		{
			Name:       "batching",
			Opts:       Options{Tuning: httpembed.Tuning{BatchSize: 2}},
			Steps:      []step{ok},
			In:         texts(5),
			WantInputs: [][]string{texts(5)[0:2], texts(5)[2:4], texts(5)[4:5]},
		},
		{
			Name:       "server error retried until attempts run out",
			Opts:       Options{Tuning: httpembed.Tuning{MaxRetries: 2, Backoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}},
			Steps:      []step{status(500, `{"error":"llama runner process has terminated"}`)},
			In:         texts(2),
			WantErr:    []string{"ollama nomic-embed-text", "giving up after 3 attempts", "/api/embed", "500 Internal Server Error", "llama runner process has terminated"},
			WantInputs: [][]string{texts(2), texts(2), texts(2)},
			SleepRange: [2]time.Duration{5 * time.Millisecond, 20 * time.Millisecond},
		},
		{
			Name:       "backoff capped by MaxBackoff",
			Opts:       Options{Tuning: httpembed.Tuning{MaxRetries: 2, Backoff: time.Hour, MaxBackoff: 2 * time.Millisecond}},
			Steps:      []step{status(503, ``), status(502, ``), ok},
			In:         texts(1),
			WantInputs: [][]string{texts(1), texts(1), texts(1)},
			SleepRange: [2]time.Duration{time.Millisecond, 2 * time.Millisecond},
		},
		{
			Name:       "client error not retried",
			Steps:      []step{status(404, `{"error":"model \"nomic-embed-text\" not found, try pulling it first"}`)},
			In:         texts(2),
			WantErr:    []string{"404 Not Found", `model "nomic-embed-text" not found, try pulling it first`},
			WantInputs: [][]string{texts(2)},
		},
		{
			Name:       "timeout retried then reported",
			Opts:       Options{Tuning: httpembed.Tuning{Timeout: time.Second, MaxRetries: 1, Backoff: time.Millisecond}},
			Steps:      []step{stall},
			In:         texts(1),
			WantErr:    []string{"giving up after 2 attempts", "no answer within 1s"},
			WantErrIs:  context.DeadlineExceeded,
			WantInputs: [][]string{texts(1), texts(1)},
		},
		{
			Name:    "count mismatch",
			Steps:   []step{vectors([]float32{1, 2, 3}, []float32{4, 5, 6})},
			In:      texts(3),
			WantErr: []string{"got 2 vectors for 3 texts"},
		},
		{
			Name:    "error field in a 200 answer",
			Steps:   []step{raw(`{"error":"input length exceeds the context length"}`)},
			In:      texts(1),
			WantErr: []string{"server error: input length exceeds the context length"},
		},
		{
			Name:       "key never in errors",
			Opts:       Options{Tuning: httpembed.Tuning{MaxRetries: 1, Backoff: time.Millisecond}},
			Key:        key,
			Steps:      []step{status(500, `{"error":"bad token `+key+`"}`)},
			In:         texts(1),
			WantErr:    []string{"bad token [redacted]"},
			WantInputs: [][]string{texts(1), texts(1)},
		},
	})
}

func TestEmbedDimensionsFixedByFirstVector(t *testing.T) {
	srv := httpembedtest.NewServer(t, "/api/embed", vectors([]float32{1, 2, 3}), vectors([]float32{1, 2, 3, 4}))
	e, err := New(Options{Model: "m", BaseURL: srv.URL})
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
			opts:      Options{Model: "m", BaseURL: "https://gpu.internal", Tuning: httpembed.Tuning{APIKey: "mine"}},
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
			opts:    Options{Model: "m", Tuning: httpembed.Tuning{BatchSize: -1}},
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
			if e.Model() != tc.wantModel || e.BaseURL() != tc.wantBase || e.client.APIKey() != tc.wantKey {
				t.Errorf("got model %q base %q key %q; want %q %q %q",
					e.Model(), e.BaseURL(), e.client.APIKey(), tc.wantModel, tc.wantBase, tc.wantKey)
			}
			if strings.Contains(e.String(), "mine") && tc.wantKey == "mine" {
				t.Errorf("String() = %q shows the API key", e.String())
			}
		})
	}
}
