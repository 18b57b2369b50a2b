package openai

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/embed/internal/httpembed"
	"github.com/memminer/memminer/embed/internal/httpembed/httpembedtest"
)

// The retry, timeout, redaction and dimension machinery is tested once in
// package httpembed; these tests cover the OpenAI wire format and that every
// Options field reaches the shared client.

// testKey is the API key every test client uses unless it says otherwise;
// it must never show up in an error or a log line.
const testKey = "sk-test-0123456789abcdef"

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

// item is one element of "data" in an answer.
type item struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

// answer sends items as a well-formed embeddings answer.
func answer(t *testing.T, w http.ResponseWriter, model string, items []item) {
	httpembedtest.WriteJSON(t, w, map[string]any{
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
		items[i] = item{Object: "embedding", Index: i, Embedding: httpembedtest.VecFor(s)}
	}
	answer(t, w, req.Model, items)
}

// reversed answers like ok but lists the data last index first.
func reversed(t *testing.T, w http.ResponseWriter, _ *http.Request, req embedRequest) {
	items := make([]item, 0, len(req.Input))
	for i := len(req.Input) - 1; i >= 0; i-- {
		items = append(items, item{Object: "embedding", Index: i, Embedding: httpembedtest.VecFor(req.Input[i])})
	}
	answer(t, w, req.Model, items)
}

// items answers with fixed data regardless of the input.
func items(data ...item) step {
	return func(t *testing.T, w http.ResponseWriter, _ *http.Request, req embedRequest) {
		answer(t, w, req.Model, data)
	}
}

// harness runs exchanges with an Embedder for model text-embedding-3-small
// on a server whose API root is /v1, with testKey unless a case says otherwise.
var harness = &httpembedtest.Harness[embedRequest, Options]{
	Path: "/v1/embeddings",
	Key:  testKey,
	Open: func(t *testing.T, opts Options, env httpembedtest.Env) httpembedtest.Embedder {
		opts.Model, opts.BaseURL, opts.APIKey = "text-embedding-3-small", env.Root+"/v1", env.Key
		opts.HTTPClient, opts.Logger = env.HTTPClient, env.Logger
		e, err := New(opts)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		e.client.SetSleep(env.Sleep)
		return e
	},
	CheckRequest: func(t *testing.T, i int, req embedRequest, want []string) {
		if req.Model != "text-embedding-3-small" || req.EncodingFormat != "float" {
			t.Errorf("request %d model %q encoding_format %q", i, req.Model, req.EncodingFormat)
		}
		if !reflect.DeepEqual(req.Input, want) {
			t.Errorf("request %d input = %q, want %q", i, req.Input, want)
		}
	},
}

func TestEmbed(t *testing.T) {
	keyEcho := `{"error":{"message":"Incorrect API key provided: ` + testKey + `.","type":"invalid_request_error","code":"invalid_api_key"}}`
	harness.Run(t, []testCase{
		{
			Name:  "success",
			Steps: []step{ok},
			In:    texts(3),
		},
		{
			Name:  "data ordered by index",
			Steps: []step{reversed},
			In:    texts(5),
		},
		{
			Name:  "no key sends no Authorization header",
			NoKey: true,
			Steps: []step{ok},
			In:    texts(2),
		},
		{
			Name:       "batching",
			Opts:       Options{Tuning: httpembed.Tuning{BatchSize: 2}},
			Steps:      []step{reversed},
			In:         texts(5),
			WantInputs: [][]string{texts(5)[0:2], texts(5)[2:4], texts(5)[4:5]},
		},
		{
			Name:       "server error retried until attempts run out",
			Opts:       Options{Tuning: httpembed.Tuning{MaxRetries: 2, Backoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}},
			Steps:      []step{status(500, `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`)},
			In:         texts(2),
			WantErr:    []string{"openai text-embedding-3-small", "giving up after 3 attempts", "/v1/embeddings", "500 Internal Server Error", "The server had an error"},
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
			Steps:      []step{status(400, `{"error":{"message":"'$.input' is invalid.","type":"invalid_request_error"}}`)},
			In:         texts(1),
			WantErr:    []string{"400 Bad Request", "'$.input' is invalid."},
			WantInputs: [][]string{texts(1)},
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
			Name:    "wrong dimensions",
			Steps:   []step{items(item{Index: 0, Embedding: []float32{1, 2, 3}}, item{Index: 1, Embedding: []float32{1, 2, 3, 4}})},
			In:      texts(2),
			WantErr: []string{"vector for text 1 has 4 dimensions, vector for text 0 has 3"},
		},
		{
			Name:    "missing embedding",
			Steps:   []step{raw(`{"data":[{"index":0}]}`)},
			In:      texts(1),
			WantErr: []string{"vector for text 0 is empty"},
		},
		{
			Name:    "count mismatch",
			Steps:   []step{items(item{Index: 0, Embedding: []float32{1, 2, 3}})},
			In:      texts(2),
			WantErr: []string{"got 1 vectors for 2 texts"},
		},
		{
			Name:    "duplicate index",
			Steps:   []step{items(item{Index: 1, Embedding: []float32{1}}, item{Index: 1, Embedding: []float32{2}})},
			In:      texts(2),
			WantErr: []string{"/v1/embeddings: index 1 appears twice"},
		},
		{
			Name:    "index out of range",
			Steps:   []step{items(item{Index: 0, Embedding: []float32{1}}, item{Index: 2, Embedding: []float32{2}})},
			In:      texts(2),
			WantErr: []string{"data[1] has index 2, want 0 to 1"},
		},
		{
			Name:    "index missing",
			Steps:   []step{raw(`{"data":[{"embedding":[1,2]}]}`)},
			In:      texts(1),
			WantErr: []string{"data[0] has no index"},
		},
		{
			Name:    "base64 embeddings are malformed",
			Steps:   []step{raw(`{"data":[{"index":0,"embedding":"AACAPw=="}]}`)},
			In:      texts(1),
			WantErr: []string{"malformed response", "cannot unmarshal string"},
		},
		{
			Name:    "error object in a 200 answer",
			Steps:   []step{raw(`{"error":{"message":"model not loaded"}}`)},
			In:      texts(1),
			WantErr: []string{"server error: model not loaded"},
		},
		{
			Name:    "error string in a 200 answer",
			Steps:   []step{raw(`{"error":"model not loaded"}`)},
			In:      texts(1),
			WantErr: []string{"server error: model not loaded"},
		},
		{
			Name:  "null error in a 200 answer is no error",
			Steps: []step{raw(`{"error":null,"data":[{"index":0,"embedding":[1,0,1]}]}`)},
			In:    []string{"x"},
		},
		{
			Name:  "empty error in a 200 answer is no error",
			Steps: []step{raw(`{"error":"","data":[{"index":0,"embedding":[1,0,1]}]}`)},
			In:    []string{"x"},
		},
		{
			Name:       "key echoed by a 401 is not leaked",
			Steps:      []step{status(401, keyEcho)},
			In:         texts(1),
			WantErr:    []string{"401 Unauthorized", "Incorrect API key provided: [redacted]."},
			WantInputs: [][]string{texts(1)},
		},
	})
}

func TestEmbedDimensionsFixedByFirstAnswer(t *testing.T) {
	srv := httpembedtest.NewServer(t, "/v1/embeddings",
		// A bad first answer must not fix the dimension.
		items(item{Index: 0, Embedding: []float32{1, 2}}, item{Index: 1, Embedding: []float32{1, 2, 3}}),
		items(item{Index: 0, Embedding: []float32{1, 2, 3}}),
		items(item{Index: 0, Embedding: []float32{1, 2}}),
	)
	e, err := New(Options{Model: "m", BaseURL: srv.URL + "/v1"})
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
			opts:      Options{Model: "m", BaseURL: "https://llm.internal/api", Tuning: httpembed.Tuning{APIKey: "mine"}},
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
			opts:    Options{Model: "m", Tuning: httpembed.Tuning{BatchSize: -5, APIKey: "k"}},
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
			if e.Model() != tc.wantModel || e.BaseURL() != tc.wantBase || e.client.APIKey() != tc.wantKey {
				t.Errorf("got model %q base %q key %q; want %q %q %q",
					e.Model(), e.BaseURL(), e.client.APIKey(), tc.wantModel, tc.wantBase, tc.wantKey)
			}
			if tc.wantKey != "" && strings.Contains(fmt.Sprint(e), tc.wantKey) {
				t.Errorf("fmt.Sprint(embedder) = %q shows the API key", fmt.Sprint(e))
			}
		})
	}
}
