// Package httpembed is what the HTTP embedding backends (embed/ollama and
// embed/openai) have in common, everything but the wire format: batching,
// POSTing JSON with a timeout per attempt, retrying transient failures (429,
// 5xx, network errors, timeouts) with jittered exponential backoff while
// honouring Retry-After, errors for non-2xx answers carrying a short excerpt
// of the body with the API key blanked out, and checking that every vector
// has the length of the first vector the client ever accepted.
//
// A backend describes its request and answer bodies with a Backend and keeps
// its own Options, server address handling and environment variables.
package httpembed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/memminer/memminer/internal/backoff"
)

// Backend describes one embedding API: its name and defaults, and how a
// batch of texts is asked for and its answer read.
type Backend struct {
	// Name starts error messages ("ollama nomic-embed-text: …") and model
	// specs, and tags log records.
	Name string
	// Example is a model name shown when the model name is missing.
	Example string
	// DefaultBatchSize, DefaultTimeout, DefaultMaxRetries, DefaultBackoff
	// and DefaultMaxBackoff replace the matching Tuning fields when zero.
	DefaultBatchSize  int
	DefaultTimeout    time.Duration
	DefaultMaxRetries int
	DefaultBackoff    time.Duration
	DefaultMaxBackoff time.Duration
	// Request returns the value whose JSON encoding asks for the vectors of
	// texts.
	Request func(model string, texts []string) any
	// Answer returns a new, empty value (a pointer) that a 2xx answer is
	// JSON-decoded into.
	Answer func() Answer
}

// Answer is a decoded 2xx answer. Its methods are called in the order
// ServerError, Len, Vectors, and Vectors only when Len equals the number of
// texts sent.
type Answer interface {
	// ServerError returns the error the server reported inside a 2xx
	// answer, as a body the error excerpt can read (plain text or a JSON
	// error object), or nil when there is none.
	ServerError() []byte
	// Len is how many vectors the answer holds.
	Len() int
	// Vectors returns the vectors in the order of the texts sent. An error
	// describes what is wrong with the answer; it is prefixed with the
	// request.
	Vectors() ([][]float32, error)
}

// Model checks a model name for b and returns it trimmed.
func (b *Backend) Model(name string) (string, error) {
	model := strings.TrimSpace(name)
	if model == "" {
		return "", fmt.Errorf("%s: empty model name (want e.g. %s:%s)", b.Name, b.Name, b.Example)
	}
	return model, nil
}

// Tuning holds the settings a backend's Options carries besides the model
// and the server address. Zero values mean the defaults.
type Tuning struct {
	// APIKey, when set, is sent as "Authorization: Bearer <key>". It is
	// blanked out of every error.
	APIKey string
	// HTTPClient sends the requests; nil means a client with no overall
	// timeout (each attempt is bounded by Timeout instead).
	HTTPClient *http.Client
	// Timeout bounds one HTTP attempt, including reading the response.
	// Zero means Backend.DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a transient failure is retried. Zero
	// means Backend.DefaultMaxRetries; a negative value disables retries.
	MaxRetries int
	// BatchSize is the most texts sent in one request. Zero means
	// Backend.DefaultBatchSize; a negative value is an error.
	BatchSize int
	// Backoff is the wait before the first retry (doubled per retry, with
	// jitter). Zero means Backend.DefaultBackoff.
	Backoff time.Duration
	// MaxBackoff caps the backoff. Zero means Backend.DefaultMaxBackoff.
	MaxBackoff time.Duration
	// Logger receives a warning per retry; nil means slog.Default().
	Logger *slog.Logger
}

// Client embeds texts with one model through one endpoint. It is safe for
// concurrent use.
type Client struct {
	backend  *Backend
	model    string
	endpoint string
	batch    int
	post     retrier
	dim      atomic.Int64 // length of the first vector ever accepted; 0 before
}

// New returns a Client that posts requests for model (already checked with
// Backend.Model) to endpoint. It does not contact the server.
func New(b *Backend, model, endpoint string, t Tuning) (*Client, error) {
	if t.BatchSize < 0 {
		return nil, fmt.Errorf("%s: negative batch size %d", b.Name, t.BatchSize)
	}
	c := &Client{
		backend:  b,
		model:    model,
		endpoint: endpoint,
		batch:    orDefault(t.BatchSize, b.DefaultBatchSize),
		post: retrier{
			backend:    b.Name,
			apiKey:     t.APIKey,
			client:     t.HTTPClient,
			timeout:    orDefault(t.Timeout, b.DefaultTimeout),
			maxRetries: max(orDefault(t.MaxRetries, b.DefaultMaxRetries), 0),
			backoff:    orDefault(t.Backoff, b.DefaultBackoff),
			maxBackoff: orDefault(t.MaxBackoff, b.DefaultMaxBackoff),
			log:        t.Logger,
			sleep:      backoff.Sleep,
		},
	}
	if c.post.client == nil {
		c.post.client = &http.Client{}
	}
	if c.post.log == nil {
		c.post.log = slog.Default()
	}
	return c, nil
}

// Model returns the model name, without the backend's prefix.
func (c *Client) Model() string { return c.model }

// APIKey returns the key sent as bearer token ("" for none). It is for the
// backends' tests; never log it.
func (c *Client) APIKey() string { return c.post.apiKey }

// Dimensions returns the length of the vectors this client returns, or 0
// before its first successful request.
func (c *Client) Dimensions() int { return int(c.dim.Load()) }

// SetSleep replaces how the client waits before a retry: sleep must wait
// for d or until ctx is done, returning an error in the latter case. Tests
// use it to record waits without waiting; it must be called before the
// client is used.
func (c *Client) SetSleep(sleep func(ctx context.Context, d time.Duration) error) {
	c.post.sleep = sleep
}

// Embed returns one vector per text, in order, sending at most BatchSize
// texts per request. An empty texts slice sends nothing.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.batch {
		end := min(start+c.batch, len(texts))
		vecs, err := c.embedBatch(ctx, texts[start:end], start)
		if err != nil {
			if len(texts) > c.batch {
				return nil, fmt.Errorf("%s %s: texts %d-%d of %d: %w", c.backend.Name, c.model, start, end-1, len(texts), err)
			}
			return nil, fmt.Errorf("%s %s: %w", c.backend.Name, c.model, err)
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// embedBatch sends one request; offset is the index of batch[0] in the
// caller's slice, used in error messages.
func (c *Client) embedBatch(ctx context.Context, batch []string, offset int) ([][]float32, error) {
	body, err := json.Marshal(c.backend.Request(c.model, batch))
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	ans := c.backend.Answer()
	if err := c.post.postJSON(ctx, c.endpoint, body, ans); err != nil {
		return nil, err
	}
	if msg := ans.ServerError(); msg != nil {
		return nil, fmt.Errorf("POST %s: server error: %s", c.endpoint, excerpt(msg, c.post.apiKey))
	}
	if n := ans.Len(); n != len(batch) {
		return nil, fmt.Errorf("POST %s: got %d vectors for %d texts", c.endpoint, n, len(batch))
	}
	vecs, err := ans.Vectors()
	if err != nil {
		return nil, fmt.Errorf("POST %s: %w", c.endpoint, err)
	}
	if err := checkDims(&c.dim, vecs, offset); err != nil {
		return nil, fmt.Errorf("POST %s: %w", c.endpoint, err)
	}
	return vecs, nil
}

// checkDims verifies the vectors of one answer all have one length, and
// that it is the length recorded in dim, recording it when dim is still 0.
func checkDims(dim *atomic.Int64, vecs [][]float32, offset int) error {
	if len(vecs) == 0 {
		return nil
	}
	for i, v := range vecs {
		if len(v) == 0 {
			return fmt.Errorf("vector for text %d is empty", offset+i)
		}
		if len(v) != len(vecs[0]) {
			return fmt.Errorf("vector for text %d has %d dimensions, vector for text %d has %d", offset+i, len(v), offset, len(vecs[0]))
		}
	}
	dim.CompareAndSwap(0, int64(len(vecs[0])))
	if want := int(dim.Load()); len(vecs[0]) != want {
		return fmt.Errorf("vectors have %d dimensions, want %d like the first vector of this embedder", len(vecs[0]), want)
	}
	return nil
}

// ShownURL returns s for error messages, with any user:password@ part
// replaced so credentials pasted into a URL are not echoed.
func ShownURL(s string) string {
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		host, _, _ := strings.Cut(rest, "/")
		if i := strings.LastIndex(host, "@"); i >= 0 {
			return scheme + "://…@" + rest[i+1:]
		}
	}
	return s
}

// URLReason drops the URL a *url.Error repeats (credentials included),
// keeping its reason; other errors are returned as they are.
func URLReason(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// orDefault returns v, or def when v is the zero value.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
