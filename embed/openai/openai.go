// Package openai embeds texts through any server speaking the OpenAI
// embeddings API: POST {base}/embeddings with {"model","input":[...]},
// answered by {"data":[{"index","embedding"}]}. That covers OpenAI itself
// and the many compatible servers (vLLM, llama.cpp, LM Studio, LocalAI, …).
//
// The base URL comes from Options.BaseURL or, with FromEnv, from
// OPENAI_BASE_URL; the key from Options.APIKey or OPENAI_API_KEY. The key is
// sent as a bearer token and never appears in errors or logs.
//
// Requests are batched, each attempt has its own timeout, and transient
// failures (429, 5xx, network errors, timeouts) are retried with exponential
// backoff and jitter, honouring Retry-After. Every vector is checked to have
// the length of the first vector this embedder ever returned.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults used when the matching Options field is zero.
const (
	// DefaultBaseURL is OpenAI's public API.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultBatchSize is how many texts go into one request (OpenAI accepts
	// up to 2048 inputs; smaller batches keep each request short).
	DefaultBatchSize = 128
	// DefaultTimeout bounds one HTTP attempt.
	DefaultTimeout = time.Minute
	// DefaultMaxRetries is how many times a failed request is retried.
	DefaultMaxRetries = 4
	// DefaultBackoff is the wait before the first retry; it doubles per retry.
	DefaultBackoff = 500 * time.Millisecond
	// DefaultMaxBackoff caps the exponential backoff.
	DefaultMaxBackoff = 30 * time.Second
)

// EnvBaseURL and EnvAPIKey are the environment variables FromEnv reads.
const (
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvAPIKey  = "OPENAI_API_KEY"
)

// Options configures an Embedder. Model is required, and so is APIKey when
// BaseURL is OpenAI's own.
type Options struct {
	// Model is the embedding model, e.g. "text-embedding-3-small".
	Model string
	// BaseURL is the API root that "/embeddings" is appended to, e.g.
	// "http://127.0.0.1:8000/v1"; empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>"; empty sends no
	// Authorization header (fine for local servers). It never appears in
	// errors or logs.
	APIKey string
	// HTTPClient sends the requests; nil means a client with no overall
	// timeout (each attempt is bounded by Timeout instead).
	HTTPClient *http.Client
	// Timeout bounds one HTTP attempt, including reading the response.
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a transient failure is retried. Zero means
	// DefaultMaxRetries; a negative value disables retries.
	MaxRetries int
	// BatchSize is the most texts sent in one request. Zero means DefaultBatchSize.
	BatchSize int
	// Backoff is the wait before the first retry (doubled per retry, with
	// jitter). Zero means DefaultBackoff.
	Backoff time.Duration
	// MaxBackoff caps the backoff. Zero means DefaultMaxBackoff.
	MaxBackoff time.Duration
	// Logger receives a warning per retry; nil means slog.Default().
	Logger *slog.Logger
}

// Embedder embeds texts with one model of an OpenAI-compatible server. It is
// safe for concurrent use.
type Embedder struct {
	model    string
	base     string // normalised API root, no trailing slash
	endpoint string // base + "/embeddings"
	batch    int
	client   retrier
	dim      atomic.Int64 // length of the first vector ever returned; 0 before
}

// New returns an Embedder for opts. It does not contact the server.
func New(opts Options) (*Embedder, error) {
	model := strings.TrimSpace(opts.Model)
	if model == "" {
		return nil, errors.New("openai: empty model name (want e.g. openai:text-embedding-3-small)")
	}
	base, err := normaliseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	if opts.APIKey == "" && base == DefaultBaseURL {
		return nil, fmt.Errorf("openai: no API key for %s: set %s (or %s for a server that needs none)", base, EnvAPIKey, EnvBaseURL)
	}
	if opts.BatchSize < 0 {
		return nil, fmt.Errorf("openai: negative batch size %d", opts.BatchSize)
	}
	e := &Embedder{
		model:    model,
		base:     base,
		endpoint: base + "/embeddings",
		batch:    orDefault(opts.BatchSize, DefaultBatchSize),
	}
	e.client = retrier{
		backend:    "openai",
		apiKey:     opts.APIKey,
		client:     opts.HTTPClient,
		timeout:    orDefault(opts.Timeout, DefaultTimeout),
		maxRetries: orDefault(opts.MaxRetries, DefaultMaxRetries),
		backoff:    orDefault(opts.Backoff, DefaultBackoff),
		maxBackoff: orDefault(opts.MaxBackoff, DefaultMaxBackoff),
		log:        opts.Logger,
		sleep:      sleepCtx,
	}
	if e.client.client == nil {
		e.client.client = &http.Client{}
	}
	if e.client.log == nil {
		e.client.log = slog.Default()
	}
	if e.client.maxRetries < 0 {
		e.client.maxRetries = 0
	}
	return e, nil
}

// FromEnv is New with BaseURL and APIKey, when empty in opts, taken from the
// environment variables OPENAI_BASE_URL and OPENAI_API_KEY read through
// getenv (nil means os.Getenv).
func FromEnv(opts Options, getenv func(string) string) (*Embedder, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if opts.BaseURL == "" {
		opts.BaseURL = strings.TrimSpace(getenv(EnvBaseURL))
	}
	if opts.APIKey == "" {
		opts.APIKey = strings.TrimSpace(getenv(EnvAPIKey))
	}
	return New(opts)
}

// normaliseBaseURL checks an API root and strips its trailing slashes.
func normaliseBaseURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultBaseURL, nil
	}
	if !strings.Contains(s, "://") {
		return "", fmt.Errorf("base URL %q: scheme must be http or https (e.g. http://127.0.0.1:8080/v1)", shownURL(s))
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("base URL %q: %w", shownURL(s), urlErr(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("base URL %q: scheme must be http or https", shownURL(s))
	}
	if u.Host == "" {
		return "", fmt.Errorf("base URL %q: no host", shownURL(s))
	}
	if u.User != nil {
		return "", fmt.Errorf("base URL %s: put credentials in %s, not in the URL", u.Redacted(), EnvAPIKey)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("base URL %q: query and fragment are not supported", shownURL(s))
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

// shownURL returns s for error messages, with any user:password@ part
// replaced so credentials pasted into a URL are not echoed.
func shownURL(s string) string {
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		host, _, _ := strings.Cut(rest, "/")
		if i := strings.LastIndex(host, "@"); i >= 0 {
			return scheme + "://…@" + rest[i+1:]
		}
	}
	return s
}

// urlErr drops the URL a *url.Error repeats, keeping its reason.
func urlErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Model returns "openai:<model>", the id recorded with every vector.
func (e *Embedder) Model() string { return "openai:" + e.model }

// BaseURL returns the API root this embedder talks to.
func (e *Embedder) BaseURL() string { return e.base }

// Dimensions returns the length of the vectors this embedder returns, or 0
// before its first successful request.
func (e *Embedder) Dimensions() int { return int(e.dim.Load()) }

// String describes the embedder for logs; it never includes the API key.
func (e *Embedder) String() string { return e.Model() + " at " + e.base }

// embedRequest is the body of POST /embeddings.
type embedRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

// embedResponse is the part of the /embeddings answer this package reads.
type embedResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	// Error is set by some compatible servers that answer 200 with an error.
	Error json.RawMessage `json:"error"`
}

// Embed returns one vector per text, in order, sending at most BatchSize
// texts per request. An empty texts slice sends nothing.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.batch {
		end := min(start+e.batch, len(texts))
		vecs, err := e.embedBatch(ctx, texts[start:end], start)
		if err != nil {
			if len(texts) > e.batch {
				return nil, fmt.Errorf("openai %s: texts %d-%d of %d: %w", e.model, start, end-1, len(texts), err)
			}
			return nil, fmt.Errorf("openai %s: %w", e.model, err)
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// embedBatch sends one request; offset is the index of batch[0] in the
// caller's slice, used in error messages.
func (e *Embedder) embedBatch(ctx context.Context, batch []string, offset int) ([][]float32, error) {
	body, err := json.Marshal(embedRequest{Model: e.model, Input: batch, EncodingFormat: "float"})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	var resp embedResponse
	if err := e.client.postJSON(ctx, e.endpoint, body, &resp); err != nil {
		return nil, err
	}
	if s := string(resp.Error); s != "" && s != "null" && s != `""` {
		return nil, fmt.Errorf("POST %s: server error: %s", e.endpoint, excerpt(body200(resp.Error), e.client.apiKey))
	}
	if len(resp.Data) != len(batch) {
		return nil, fmt.Errorf("POST %s: got %d vectors for %d texts", e.endpoint, len(resp.Data), len(batch))
	}
	vecs := make([][]float32, len(batch))
	for i, d := range resp.Data {
		if d.Index == nil {
			return nil, fmt.Errorf("POST %s: data[%d] has no index", e.endpoint, i)
		}
		idx := *d.Index
		if idx < 0 || idx >= len(batch) {
			return nil, fmt.Errorf("POST %s: data[%d] has index %d, want 0 to %d", e.endpoint, i, idx, len(batch)-1)
		}
		if vecs[idx] != nil {
			return nil, fmt.Errorf("POST %s: index %d appears twice", e.endpoint, idx)
		}
		if d.Embedding == nil {
			d.Embedding = []float32{} // checkDims reports it as empty
		}
		vecs[idx] = d.Embedding
	}
	if err := checkDims(&e.dim, vecs, offset); err != nil {
		return nil, fmt.Errorf("POST %s: %w", e.endpoint, err)
	}
	return vecs, nil
}

// body200 wraps the error member of a 200 answer so excerpt can read it like
// an error body.
func body200(errField json.RawMessage) []byte {
	return append(append([]byte(`{"error":`), errField...), '}')
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

// orDefault returns v, or def when v is the zero value.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
