package openai

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

// testKey is the API key every test client uses unless it says otherwise;
// it must never show up in an error or a log line.
const testKey = "sk-test-0123456789abcdef"

// step answers one request to the fake server; req is the decoded body.
type step func(t *testing.T, w http.ResponseWriter, r *http.Request, req embedRequest)

// fakeServer is an httptest server speaking POST /v1/embeddings. It plays
// its steps in order, repeating the last one.
type fakeServer struct {
	srv   *httptest.Server
	mu    sync.Mutex
	steps []step
	reqs  []embedRequest
	auth  []string
}

func newFake(t *testing.T, steps ...step) *fakeServer {
	t.Helper()
	f := &fakeServer{steps: steps}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			http.NotFound(w, r)
			return
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

// base is the API root of the fake server.
func (f *fakeServer) base() string { return f.srv.URL + "/v1" }

func (f *fakeServer) requests() ([]embedRequest, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]embedRequest(nil), f.reqs...), append([]string(nil), f.auth...)
}

// vecFor is the fake model: a 3-d vector derived from the text.
func vecFor(text string) []float32 {
	return []float32{float32(len(text)), float32(strings.Count(text, "a")), 1}
}

// item is one element of "data" in an answer.
type item struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

func writeJSON(t *testing.T, w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		t.Errorf("write response: %v", err)
	}
}

// answer sends items as a well-formed embeddings answer.
func answer(t *testing.T, w http.ResponseWriter, model string, items []item) {
	writeJSON(t, w, map[string]any{
		"object": "list",
		"data":   items,
		"model":  model,
		"usage":  map[string]int{"prompt_tokens": 1, "total_tokens": 1},
	})
}

// ok answers with the fake model's vectors in input order.
func ok(t *testing.T, w http.ResponseWriter, _ *http.Request, req embedRequest) {
	items := make([]item, len(req.Input))
	for i, s := range req.Input {
		items[i] = item{Object: "embedding", Index: i, Embedding: vecFor(s)}
	}
	answer(t, w, req.Model, items)
}

// reversed answers like ok but lists the data last index first.
func reversed(t *testing.T, w http.ResponseWriter, _ *http.Request, req embedRequest) {
	items := make([]item, 0, len(req.Input))
	for i := len(req.Input) - 1; i >= 0; i-- {
		items = append(items, item{Object: "embedding", Index: i, Embedding: vecFor(req.Input[i])})
	}
	answer(t, w, req.Model, items)
}

// items answers with fixed data regardless of the input.
func items(data ...item) step {
	return func(t *testing.T, w http.ResponseWriter, _ *http.Request, req embedRequest) {
		answer(t, w, req.Model, data)
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
	keyEcho := `{"error":{"message":"Incorrect API key provided: ` + testKey + `.","type":"invalid_request_error","code":"invalid_api_key"}}`
	tests := []struct {
		name       string
		opts       Options // Model, BaseURL and Logger are filled in; APIKey defaults to testKey
		noKey      bool
		steps      []step
		in         []string
		wantErr    []string // substrings of the error; nil: success
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
			name:  "data ordered by index",
			steps: []step{reversed},
			in:    texts(5),
		},
		{
			name:  "no key sends no Authorization header",
			noKey: true,
			steps: []step{ok},
			in:    texts(2),
		},
		{
			name:       "empty input sends nothing",
			steps:      []step{ok},
			in:         []string{},
			wantInputs: [][]string{},
		},
		{
			name:       "batching",
			opts:       Options{BatchSize: 2},
			steps:      []step{reversed},
			in:         texts(5),
			wantInputs: [][]string{texts(5)[0:2], texts(5)[2:4], texts(5)[4:5]},
		},
		{
			name:       "server error retried until attempts run out",
			opts:       Options{MaxRetries: 2, Backoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond},
			steps:      []step{status(500, `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`)},
			in:         texts(2),
			wantErr:    []string{"openai text-embedding-3-small", "giving up after 3 attempts", "/v1/embeddings", "500 Internal Server Error", "The server had an error"},
			wantInputs: [][]string{texts(2), texts(2), texts(2)},
			sleepRange: [2]time.Duration{5 * time.Millisecond, 20 * time.Millisecond},
		},
		{
			name:       "client error not retried",
			steps:      []step{status(400, `{"error":{"message":"'$.input' is invalid.","type":"invalid_request_error"}}`)},
			in:         texts(1),
			wantErr:    []string{"400 Bad Request", "'$.input' is invalid."},
			wantInputs: [][]string{texts(1)},
		},
		{
			name:       "429 with Retry-After then success",
			steps:      []step{status(429, `{"error":{"message":"Rate limit reached"}}`, "Retry-After", "2"), ok},
			in:         texts(2),
			wantInputs: [][]string{texts(2), texts(2)},
			wantSleeps: []time.Duration{2 * time.Second},
		},
		{
			name:       "429 with retry-after-ms then success",
			steps:      []step{status(429, `{"error":{"message":"Rate limit reached"}}`, "Retry-After-Ms", "20"), ok},
			in:         texts(2),
			wantInputs: [][]string{texts(2), texts(2)},
			wantSleeps: []time.Duration{20 * time.Millisecond},
		},
		{
			name:       "network error then success",
			opts:       Options{Backoff: time.Millisecond},
			steps:      []step{hangUp, status(504, "gateway timeout"), ok},
			in:         texts(2),
			wantInputs: [][]string{texts(2), texts(2), texts(2)},
			sleepRange: [2]time.Duration{time.Millisecond / 2, 2 * time.Millisecond},
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
			name:    "wrong dimensions",
			steps:   []step{items(item{Index: 0, Embedding: []float32{1, 2, 3}}, item{Index: 1, Embedding: []float32{1, 2, 3, 4}})},
			in:      texts(2),
			wantErr: []string{"vector for text 1 has 4 dimensions, vector for text 0 has 3"},
		},
		{
			name:    "missing embedding",
			steps:   []step{raw(`{"data":[{"index":0}]}`)},
			in:      texts(1),
			wantErr: []string{"vector for text 0 is empty"},
		},
		{
			name:    "count mismatch",
			steps:   []step{items(item{Index: 0, Embedding: []float32{1, 2, 3}})},
			in:      texts(2),
			wantErr: []string{"got 1 vectors for 2 texts"},
		},
		{
			name:    "duplicate index",
			steps:   []step{items(item{Index: 1, Embedding: []float32{1}}, item{Index: 1, Embedding: []float32{2}})},
			in:      texts(2),
			wantErr: []string{"index 1 appears twice"},
		},
		{
			name:    "index out of range",
			steps:   []step{items(item{Index: 0, Embedding: []float32{1}}, item{Index: 2, Embedding: []float32{2}})},
			in:      texts(2),
			wantErr: []string{"data[1] has index 2, want 0 to 1"},
		},
		{
			name:    "index missing",
			steps:   []step{raw(`{"data":[{"embedding":[1,2]}]}`)},
			in:      texts(1),
			wantErr: []string{"data[0] has no index"},
		},
		{
			name:    "malformed JSON not retried",
			steps:   []step{raw(`{"data":[{"index":0,"embedding":[0.1,`), ok},
			in:      texts(1),
			wantErr: []string{"malformed response"},
		},
		{
			name:    "base64 embeddings are malformed",
			steps:   []step{raw(`{"data":[{"index":0,"embedding":"AACAPw=="}]}`)},
			in:      texts(1),
			wantErr: []string{"malformed response", "cannot unmarshal string"},
		},
		{
			name:    "error object in a 200 answer",
			steps:   []step{raw(`{"error":{"message":"model not loaded"}}`)},
			in:      texts(1),
			wantErr: []string{"server error: model not loaded"},
		},
		{
			name:       "key echoed by a 401 is not leaked",
			steps:      []step{status(401, keyEcho)},
			in:         texts(1),
			wantErr:    []string{"401 Unauthorized", "Incorrect API key provided: [redacted]."},
			wantInputs: [][]string{texts(1)},
		},
		{
			name:       "key echoed by retried 503s is not leaked",
			opts:       Options{MaxRetries: 2, Backoff: time.Millisecond},
			steps:      []step{status(503, "upstream refused key "+testKey)},
			in:         texts(1),
			wantErr:    []string{"giving up after 3 attempts", "503 Service Unavailable", "upstream refused key [redacted]"},
			wantInputs: [][]string{texts(1), texts(1), texts(1)},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.steps...)
			var logs bytes.Buffer
			opts := tc.opts
			opts.Model = "text-embedding-3-small"
			opts.BaseURL = f.base()
			opts.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			if !tc.noKey {
				opts.APIKey = testKey
			}
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
				var want [][]float32
				for _, s := range tc.in {
					want = append(want, vecFor(s))
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
			if strings.Contains(fmt.Sprint(err), testKey) || strings.Contains(logs.String(), testKey) {
				t.Errorf("API key leaked: error %q, logs %q", err, logs.String())
			}

			wantInputs := tc.wantInputs
			if wantInputs == nil {
				wantInputs = [][]string{tc.in}
			}
			reqs, auth := f.requests()
			if len(reqs) != len(wantInputs) {
				t.Fatalf("%d requests, want %d", len(reqs), len(wantInputs))
			}
			wantAuth := "Bearer " + testKey
			if tc.noKey {
				wantAuth = ""
			}
			for i, r := range reqs {
				if r.Model != "text-embedding-3-small" || r.EncodingFormat != "float" {
					t.Errorf("request %d model %q encoding_format %q", i, r.Model, r.EncodingFormat)
				}
				if !reflect.DeepEqual(r.Input, wantInputs[i]) {
					t.Errorf("request %d input = %q, want %q", i, r.Input, wantInputs[i])
				}
				if auth[i] != wantAuth {
					t.Errorf("request %d Authorization = %q, want %q", i, auth[i], wantAuth)
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

func TestEmbedDimensionsFixedByFirstAnswer(t *testing.T) {
	f := newFake(t,
		// A bad first answer must not fix the dimension.
		items(item{Index: 0, Embedding: []float32{1, 2}}, item{Index: 1, Embedding: []float32{1, 2, 3}}),
		items(item{Index: 0, Embedding: []float32{1, 2, 3}}),
		items(item{Index: 0, Embedding: []float32{1, 2}}),
	)
	e, err := New(Options{Model: "m", BaseURL: f.base()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(context.Background(), texts(2)); err == nil {
		t.Fatal("first Embed succeeded despite mixed dimensions")
	}
	if d := e.Dimensions(); d != 0 {
		t.Errorf("Dimensions after a rejected answer = %d, want 0", d)
	}
	if _, err := e.Embed(context.Background(), texts(1)); err != nil {
		t.Fatalf("second Embed: %v", err)
	}
	if d := e.Dimensions(); d != 3 {
		t.Errorf("Dimensions = %d, want 3", d)
	}
	_, err = e.Embed(context.Background(), texts(1))
	if err == nil || !strings.Contains(err.Error(), "vectors have 2 dimensions, want 3") {
		t.Errorf("third Embed error = %v, want dimension mismatch", err)
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
		{name: "during backoff", backoff: time.Hour, step: status(429, "slow down")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			arrived := make(chan struct{}, 10)
			f := newFake(t, func(t *testing.T, w http.ResponseWriter, r *http.Request, req embedRequest) {
				arrived <- struct{}{}
				tc.step(t, w, r, req)
			})
			e, err := New(Options{Model: "m", BaseURL: f.base(), Backoff: tc.backoff, MaxBackoff: tc.backoff})
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
			if reqs, _ := f.requests(); len(reqs) != 1 {
				t.Errorf("%d requests, want 1", len(reqs))
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
		wantErr   []string
	}{
		{
			name:      "OpenAI with key",
			opts:      Options{Model: "text-embedding-3-small"},
			env:       map[string]string{"OPENAI_API_KEY": testKey + "\n"},
			wantModel: "openai:text-embedding-3-small",
			wantBase:  DefaultBaseURL,
			wantKey:   testKey,
		},
		{
			name:    "OpenAI without key",
			opts:    Options{Model: "text-embedding-3-small"},
			wantErr: []string{"no API key", "OPENAI_API_KEY", "OPENAI_BASE_URL"},
		},
		{
			name:      "local server without key",
			opts:      Options{Model: "bge-small"},
			env:       map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1/"},
			wantModel: "openai:bge-small",
			wantBase:  "http://127.0.0.1:8080/v1",
		},
		{
			name:      "options win over env",
			opts:      Options{Model: "m", BaseURL: "https://llm.internal/api", APIKey: "mine"},
			env:       map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_API_KEY": "env"},
			wantModel: "openai:m",
			wantBase:  "https://llm.internal/api",
			wantKey:   "mine",
		},
		{
			name:    "empty model",
			opts:    Options{Model: ""},
			env:     map[string]string{"OPENAI_API_KEY": testKey},
			wantErr: []string{"empty model name"},
		},
		{
			name:    "bad scheme",
			opts:    Options{Model: "m"},
			env:     map[string]string{"OPENAI_BASE_URL": "127.0.0.1:8080/v1"},
			wantErr: []string{"scheme must be http or https"},
		},
		{
			name:    "no host",
			opts:    Options{Model: "m"},
			env:     map[string]string{"OPENAI_BASE_URL": "http:///v1"},
			wantErr: []string{"no host"},
		},
		{
			name:    "credentials in URL",
			opts:    Options{Model: "m"},
			env:     map[string]string{"OPENAI_BASE_URL": "https://user:" + testKey + "@llm.internal/v1"},
			wantErr: []string{"not in the URL"},
		},
		{
			name:    "credentials in an unparsable URL",
			opts:    Options{Model: "m"},
			env:     map[string]string{"OPENAI_BASE_URL": "https://user:" + testKey + "@llm.internal:port/v1"},
			wantErr: []string{`"https://…@llm.internal:port/v1"`, "invalid port"},
		},
		{
			name:    "query in URL",
			opts:    Options{Model: "m"},
			env:     map[string]string{"OPENAI_BASE_URL": "https://llm.internal/v1?api-version=1"},
			wantErr: []string{"query and fragment are not supported"},
		},
		{
			name:    "negative batch size",
			opts:    Options{Model: "m", BatchSize: -5, APIKey: "k"},
			wantErr: []string{"negative batch size"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := FromEnv(tc.opts, func(k string) string { return tc.env[k] })
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("FromEnv succeeded, want error containing %q", tc.wantErr)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("error %q leaks the API key", err)
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
			if tc.wantKey != "" && strings.Contains(fmt.Sprint(e), tc.wantKey) {
				t.Errorf("fmt.Sprint(embedder) = %q shows the API key", fmt.Sprint(e))
			}
		})
	}
}
