package httpembed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/embed/internal/httpembed/httpembedtest"
	"github.com/memminer/memminer/internal/backoff"
)

// testKey is the API key of the test clients; it must never show up in an
// error or a log line.
const testKey = "sk-test-0123456789abcdef"

// testRequest is the request body of the test wire format.
type testRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

// testAnswer is the answer of the test wire format. Reject makes Vectors
// fail, standing for an answer the backend finds wrong.
type testAnswer struct {
	Vecs   [][]float32 `json:"vectors"`
	Error  string      `json:"error"`
	Reject string      `json:"reject"`
}

func (a *testAnswer) ServerError() []byte {
	if a.Error == "" {
		return nil
	}
	return []byte(a.Error)
}

func (a *testAnswer) Len() int { return len(a.Vecs) }

func (a *testAnswer) Vectors() ([][]float32, error) {
	if a.Reject != "" {
		return nil, fmt.Errorf("answer rejected: %s", a.Reject)
	}
	return a.Vecs, nil
}

var testBackend = &Backend{
	Name:              "test",
	Example:           "some-model",
	DefaultBatchSize:  8,
	DefaultTimeout:    time.Minute,
	DefaultMaxRetries: 4,
	DefaultBackoff:    500 * time.Millisecond,
	DefaultMaxBackoff: 30 * time.Second,
	Request: func(model string, texts []string) any {
		return testRequest{Model: model, Input: texts}
	},
	Answer: func() Answer { return new(testAnswer) },
}

type (
	step     = httpembedtest.Step[testRequest]
	testCase = httpembedtest.Case[testRequest, Tuning]
)

var (
	status = httpembedtest.Status[testRequest]
	raw    = httpembedtest.Raw[testRequest]
	hangUp = httpembedtest.HangUp[testRequest]
	stall  = httpembedtest.Stall[testRequest]
	texts  = httpembedtest.Texts
)

// ok answers with the fake model's vectors.
func ok(t *testing.T, w http.ResponseWriter, _ *http.Request, req testRequest) {
	httpembedtest.WriteJSON(t, w, map[string]any{"vectors": httpembedtest.VecsFor(req.Input)})
}

// vectors answers with fixed vectors regardless of the input.
func vectors(vecs ...[]float32) step {
	return httpembedtest.JSON[testRequest](map[string]any{"vectors": vecs})
}

// newTestClient returns a client of the test backend for the server at root.
func newTestClient(t *testing.T, root string, tn Tuning) *Client {
	t.Helper()
	c, err := New(testBackend, "some-model", root+"/embed", tn)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

var harness = &httpembedtest.Harness[testRequest, Tuning]{
	Path: "/embed",
	Key:  testKey,
	Open: func(t *testing.T, tn Tuning, env httpembedtest.Env) httpembedtest.Embedder {
		tn.APIKey, tn.HTTPClient, tn.Logger = env.Key, env.HTTPClient, env.Logger
		c := newTestClient(t, env.Root, tn)
		c.SetSleep(env.Sleep)
		return c
	},
	CheckRequest: func(t *testing.T, i int, req testRequest, want []string) {
		if req.Model != "some-model" {
			t.Errorf("request %d model = %q", i, req.Model)
		}
		if !reflect.DeepEqual(req.Input, want) {
			t.Errorf("request %d input = %q, want %q", i, req.Input, want)
		}
	},
}

func TestEmbed(t *testing.T) {
	harness.Run(t, []testCase{
		{
			Name:  "success",
			Steps: []step{ok},
			In:    texts(3),
		},
		{
			Name:  "no key sends no Authorization header",
			NoKey: true,
			Steps: []step{ok},
			In:    texts(2),
		},
		{
			Name:       "empty input sends nothing",
			Steps:      []step{ok},
			In:         []string{},
			WantInputs: [][]string{},
		},
		{
			Name:       "batching",
			Opts:       Tuning{BatchSize: 2},
			Steps:      []step{ok},
			In:         texts(5),
			WantInputs: [][]string{texts(5)[0:2], texts(5)[2:4], texts(5)[4:5]},
		},
		{
			Name:       "batch size equal to input",
			Opts:       Tuning{BatchSize: 3},
			Steps:      []step{ok},
			In:         texts(3),
			WantInputs: [][]string{texts(3)},
		},
		{
			Name:       "default batch size",
			Steps:      []step{ok},
			In:         texts(10),
			WantInputs: [][]string{texts(10)[:8], texts(10)[8:]},
		},
		{
			Name:       "server error retried until attempts run out",
			Opts:       Tuning{MaxRetries: 2, Backoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond},
			Steps:      []step{status(500, `{"error":"runner process has terminated"}`)},
			In:         texts(2),
			WantErr:    []string{"test some-model", "giving up after 3 attempts", "/embed", "500 Internal Server Error", "runner process has terminated"},
			WantInputs: [][]string{texts(2), texts(2), texts(2)},
			SleepRange: [2]time.Duration{5 * time.Millisecond, 20 * time.Millisecond},
		},
		{
			Name:       "retries disabled",
			Opts:       Tuning{MaxRetries: -1},
			Steps:      []step{status(503, `overloaded`)},
			In:         texts(1),
			WantErr:    []string{"503 Service Unavailable", "overloaded"},
			WantInputs: [][]string{texts(1)},
		},
		{
			Name:       "client error not retried",
			Steps:      []step{status(404, `{"error":"model \"some-model\" not found, try pulling it first"}`)},
			In:         texts(2),
			WantErr:    []string{"404 Not Found", `model "some-model" not found, try pulling it first`},
			WantInputs: [][]string{texts(2)},
		},
		{
			Name:       "client error with an error object not retried",
			Steps:      []step{status(400, `{"error":{"message":"'$.input' is invalid.","type":"invalid_request_error"}}`)},
			In:         texts(1),
			WantErr:    []string{"400 Bad Request", "'$.input' is invalid."},
			WantInputs: [][]string{texts(1)},
		},
		{
			Name:       "429 with Retry-After then success",
			Steps:      []step{status(429, `{"error":"busy"}`, "Retry-After", "3"), ok},
			In:         texts(2),
			WantInputs: [][]string{texts(2), texts(2)},
			WantSleeps: []time.Duration{3 * time.Second},
		},
		{
			Name:       "429 with retry-after-ms then success",
			Steps:      []step{status(429, `{"error":{"message":"Rate limit reached"}}`, "Retry-After-Ms", "20"), ok},
			In:         texts(2),
			WantInputs: [][]string{texts(2), texts(2)},
			WantSleeps: []time.Duration{20 * time.Millisecond},
		},
		{
			Name:       "Retry-After beyond the limit gives up at once",
			Steps:      []step{status(429, `{"error":"quota"}`, "Retry-After", "86400")},
			In:         texts(1),
			WantErr:    []string{"retry after 24h0m0s", "429 Too Many Requests", "quota"},
			WantInputs: [][]string{texts(1)},
		},
		{
			Name:       "5xx then success",
			Opts:       Tuning{Backoff: time.Millisecond},
			Steps:      []step{status(502, `bad gateway`), status(503, ``), ok},
			In:         texts(4),
			WantInputs: [][]string{texts(4), texts(4), texts(4)},
			SleepRange: [2]time.Duration{time.Millisecond / 2, 2 * time.Millisecond},
		},
		{
			Name:       "network error then success",
			Opts:       Tuning{Backoff: time.Millisecond},
			Steps:      []step{hangUp, ok},
			In:         texts(2),
			WantInputs: [][]string{texts(2), texts(2)},
		},
		{
			Name:       "network error and gateway timeout then success",
			Opts:       Tuning{Backoff: time.Millisecond},
			Steps:      []step{hangUp, status(504, "gateway timeout"), ok},
			In:         texts(2),
			WantInputs: [][]string{texts(2), texts(2), texts(2)},
			SleepRange: [2]time.Duration{time.Millisecond / 2, 2 * time.Millisecond},
		},
		{
			Name:       "timeout retried then reported",
			Opts:       Tuning{Timeout: time.Second, MaxRetries: 1, Backoff: time.Millisecond},
			Steps:      []step{stall},
			In:         texts(1),
			WantErr:    []string{"giving up after 2 attempts", "no answer within 1s"},
			WantErrIs:  context.DeadlineExceeded,
			WantInputs: [][]string{texts(1), texts(1)},
		},
		{
			Name:       "timeout then success",
			Opts:       Tuning{Timeout: time.Second, Backoff: time.Millisecond},
			Steps:      []step{stall, ok},
			In:         texts(2),
			WantInputs: [][]string{texts(2), texts(2)},
		},
		{
			Name:    "wrong dimensions within a batch",
			Steps:   []step{vectors([]float32{1, 2, 3}, []float32{1, 2})},
			In:      texts(2),
			WantErr: []string{"vector for text 1 has 2 dimensions, vector for text 0 has 3"},
		},
		{
			Name:    "empty vector",
			Steps:   []step{vectors([]float32{})},
			In:      texts(1),
			WantErr: []string{"vector for text 0 is empty"},
		},
		{
			Name:    "count mismatch",
			Steps:   []step{vectors([]float32{1, 2, 3}, []float32{4, 5, 6})},
			In:      texts(3),
			WantErr: []string{"got 2 vectors for 3 texts"},
		},
		{
			Name:       "count mismatch in a later batch names the texts",
			Opts:       Tuning{BatchSize: 2},
			Steps:      []step{ok, vectors([]float32{1, 2, 3})},
			In:         texts(4),
			WantErr:    []string{"test some-model: texts 2-3 of 4", "got 1 vectors for 2 texts"},
			WantInputs: [][]string{texts(4)[:2], texts(4)[2:]},
		},
		{
			Name:    "answer rejected by the backend",
			Steps:   []step{raw(`{"vectors":[[1]],"reject":"out of order"}`)},
			In:      texts(1),
			WantErr: []string{"/embed: answer rejected: out of order"},
		},
		{
			Name:    "malformed JSON not retried",
			Steps:   []step{raw(`{"vectors": [[1, 2,`), ok},
			In:      texts(1),
			WantErr: []string{"malformed response"},
		},
		{
			Name:    "not JSON at all",
			Steps:   []step{raw(`<html>proxy login</html>`), ok},
			In:      texts(1),
			WantErr: []string{"malformed response", "invalid character"},
		},
		{
			Name:    "wrong JSON type is malformed",
			Steps:   []step{raw(`{"vectors":"AACAPw=="}`), ok},
			In:      texts(1),
			WantErr: []string{"malformed response", "cannot unmarshal string"},
		},
		{
			Name:    "error field in a 200 answer",
			Steps:   []step{raw(`{"error":"input length exceeds the context length"}`)},
			In:      texts(1),
			WantErr: []string{"server error: input length exceeds the context length"},
		},
		{
			Name:       "key in a retried error body is redacted",
			Opts:       Tuning{MaxRetries: 1, Backoff: time.Millisecond},
			Steps:      []step{status(500, `{"error":"bad token `+testKey+`"}`)},
			In:         texts(1),
			WantErr:    []string{"bad token [redacted]"},
			WantInputs: [][]string{texts(1), texts(1)},
		},
		{
			Name:       "key echoed by a 401 is redacted",
			Steps:      []step{status(401, `{"error":{"message":"Incorrect API key provided: `+testKey+`.","type":"invalid_request_error"}}`)},
			In:         texts(1),
			WantErr:    []string{"401 Unauthorized", "Incorrect API key provided: [redacted]."},
			WantInputs: [][]string{texts(1)},
		},
		{
			Name:       "key echoed by retried 503s is redacted",
			Opts:       Tuning{MaxRetries: 2, Backoff: time.Millisecond},
			Steps:      []step{status(503, "upstream refused key "+testKey)},
			In:         texts(1),
			WantErr:    []string{"giving up after 3 attempts", "503 Service Unavailable", "upstream refused key [redacted]"},
			WantInputs: [][]string{texts(1), texts(1), texts(1)},
		},
		{
			Name:    "key in a 200 error field is redacted",
			Steps:   []step{raw(`{"error":"key ` + testKey + ` has no access"}`)},
			In:      texts(1),
			WantErr: []string{"server error: key [redacted] has no access"},
		},
	})
}

// TestDimensionsFixedByFirstAcceptedAnswer checks that the first answer
// that passes the checks fixes the dimension and that a rejected one does not.
func TestDimensionsFixedByFirstAcceptedAnswer(t *testing.T) {
	srv := httpembedtest.NewServer(t, "/embed",
		vectors([]float32{1, 2}, []float32{1, 2, 3}),
		vectors([]float32{1, 2, 3}),
		vectors([]float32{1, 2, 3, 4}),
	)
	c := newTestClient(t, srv.URL, Tuning{})
	if d := c.Dimensions(); d != 0 {
		t.Errorf("Dimensions before first call = %d, want 0", d)
	}
	if _, err := c.Embed(context.Background(), texts(2)); err == nil {
		t.Fatal("first Embed succeeded despite mixed dimensions")
	}
	if d := c.Dimensions(); d != 0 {
		t.Errorf("Dimensions after a rejected answer = %d, want 0", d)
	}
	if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatalf("second Embed: %v", err)
	}
	if d := c.Dimensions(); d != 3 {
		t.Errorf("Dimensions = %d, want 3", d)
	}
	_, err := c.Embed(context.Background(), []string{"y"})
	if err == nil || !strings.Contains(err.Error(), "vectors have 4 dimensions, want 3") {
		t.Errorf("third Embed error = %v, want dimension mismatch", err)
	}
	if d := c.Dimensions(); d != 3 {
		t.Errorf("Dimensions after a mismatch = %d, want 3", d)
	}
}

func TestEmbedCancel(t *testing.T) {
	tests := []struct {
		name    string
		backoff time.Duration
		step    step
		// inWait cancels once the client waits to retry; otherwise the
		// cancel comes as soon as the request reaches the server.
		inWait bool
	}{
		// The caller cancels while the server is still working.
		{name: "during request", backoff: time.Millisecond, step: stall},
		// The caller cancels while the client waits to retry.
		{name: "during backoff after 503", backoff: time.Hour, step: status(503, "busy"), inWait: true},
		{name: "during backoff after 429", backoff: time.Hour, step: status(429, "slow down"), inWait: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			arrived := make(chan struct{}, 10)
			waiting := make(chan struct{}, 10)
			srv := httpembedtest.NewServer(t, "/embed", func(t *testing.T, w http.ResponseWriter, r *http.Request, req testRequest) {
				arrived <- struct{}{}
				tc.step(t, w, r, req)
			})
			c := newTestClient(t, srv.URL, Tuning{Backoff: tc.backoff, MaxBackoff: tc.backoff})
			c.SetSleep(func(ctx context.Context, d time.Duration) error {
				waiting <- struct{}{}
				return backoff.Sleep(ctx, d)
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				if tc.inWait {
					<-waiting
				} else {
					<-arrived
				}
				cancel()
			}()
			_, err := c.Embed(ctx, texts(2))
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Embed error = %v, want context.Canceled", err)
			}
			if tc.inWait && !strings.Contains(fmt.Sprint(err), "waiting to retry") {
				t.Errorf("Embed error = %v, want one about the wait", err)
			}
			if reqs, _ := srv.Requests(); len(reqs) != 1 {
				t.Errorf("%d requests, want 1", len(reqs))
			}
		})
	}
}

func TestEmbedCanceledBeforeStart(t *testing.T) {
	srv := httpembedtest.NewServer(t, "/embed", ok)
	c := newTestClient(t, srv.URL, Tuning{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Embed(ctx, texts(1)); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed error = %v, want context.Canceled", err)
	}
	if reqs, _ := srv.Requests(); len(reqs) != 0 {
		t.Errorf("%d requests, want 0", len(reqs))
	}
}

func TestServerDown(t *testing.T) {
	srv := httpembedtest.NewServer(t, "/embed", ok)
	srv.Close()
	c := newTestClient(t, srv.URL, Tuning{MaxRetries: 1, Backoff: time.Millisecond})
	var sleeps httpembedtest.Sleeps
	c.SetSleep(sleeps.Sleep)
	_, err := c.Embed(context.Background(), texts(1))
	if err == nil || !strings.Contains(err.Error(), srv.URL+"/embed") || !strings.Contains(err.Error(), "giving up after 2 attempts") {
		t.Errorf("Embed error = %v, want one naming %s after 2 attempts", err, srv.URL)
	}
	if n := strings.Count(err.Error(), srv.URL); n != 1 {
		t.Errorf("Embed error = %v names %s %d times, want once", err, srv.URL, n)
	}
	if n := len(sleeps.Got()); n != 1 {
		t.Errorf("%d waits, want 1", n)
	}
}

func TestNew(t *testing.T) {
	custom := &http.Client{}
	logger := slog.New(slog.DiscardHandler)
	tests := []struct {
		name    string
		tuning  Tuning
		want    retrier // sleep and backend are not compared
		batch   int
		wantErr string
	}{
		{
			name:  "defaults",
			want:  retrier{timeout: time.Minute, maxRetries: 4, backoff: 500 * time.Millisecond, maxBackoff: 30 * time.Second, log: slog.Default()},
			batch: 8,
		},
		{
			name: "set",
			tuning: Tuning{APIKey: "k", HTTPClient: custom, Timeout: time.Second, MaxRetries: 2, BatchSize: 3,
				Backoff: time.Millisecond, MaxBackoff: time.Second, Logger: logger},
			want:  retrier{apiKey: "k", client: custom, timeout: time.Second, maxRetries: 2, backoff: time.Millisecond, maxBackoff: time.Second, log: logger},
			batch: 3,
		},
		{
			name:   "negative retries mean none",
			tuning: Tuning{MaxRetries: -1},
			want:   retrier{timeout: time.Minute, maxRetries: 0, backoff: 500 * time.Millisecond, maxBackoff: 30 * time.Second, log: slog.Default()},
			batch:  8,
		},
		{
			name:    "negative batch size",
			tuning:  Tuning{BatchSize: -1},
			wantErr: "test: negative batch size -1",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(testBackend, "m", "http://127.0.0.1:1/embed", tc.tuning)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("New error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			got := c.post
			if got.client == nil {
				t.Error("no HTTP client")
			}
			if tc.want.client == nil {
				got.client = nil
			}
			if got.sleep == nil {
				t.Error("no sleep function")
			}
			if got.backend != "test" {
				t.Errorf("backend = %q, want test", got.backend)
			}
			got.sleep, got.backend = nil, ""
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("retrier = %+v, want %+v", got, tc.want)
			}
			if c.batch != tc.batch {
				t.Errorf("batch = %d, want %d", c.batch, tc.batch)
			}
			if c.Model() != "m" || c.APIKey() != tc.tuning.APIKey {
				t.Errorf("Model, APIKey = %q, %q", c.Model(), c.APIKey())
			}
		})
	}
}

func TestBackendModel(t *testing.T) {
	tests := []struct{ in, want, wantErr string }{
		{in: "some-model", want: "some-model"},
		{in: "  all-minilm:l6-v2\n", want: "all-minilm:l6-v2"},
		{in: "", wantErr: "test: empty model name (want e.g. test:some-model)"},
		{in: " \t", wantErr: "test: empty model name (want e.g. test:some-model)"},
	}
	for _, tc := range tests {
		got, err := testBackend.Model(tc.in)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("Model(%q) = %q, %v; want error %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Model(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestShownURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{in: "http://127.0.0.1:8080/v1", want: "http://127.0.0.1:8080/v1"},
		{in: "https://me:s3cret@example.internal/v1", want: "https://…@example.internal/v1"},
		{in: "https://me:p@ss@example.internal:x/", want: "https://…@example.internal:x/"},
		{in: "http://example.internal/a@b", want: "http://example.internal/a@b"},
	}
	for _, tc := range tests {
		if got := ShownURL(tc.in); got != tc.want {
			t.Errorf("ShownURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestURLReason(t *testing.T) {
	//lint:ignore SA1007 the test needs the error of a URL with a bad port
	_, parseErr := url.Parse("https://me:s3cret@example.internal:x/")
	if parseErr == nil {
		t.Fatal("url.Parse accepted a bad port")
	}
	got := URLReason(parseErr)
	if strings.Contains(got.Error(), "s3cret") || !strings.Contains(got.Error(), "invalid port") {
		t.Errorf("URLReason(%v) = %v, want the reason without the URL", parseErr, got)
	}
	other := errors.New("other")
	if got := URLReason(other); got != other {
		t.Errorf("URLReason(other) = %v, want it unchanged", got)
	}
}
