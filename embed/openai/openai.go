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
// failures (408, 425, 429, 5xx, network errors, timeouts) are retried
// with exponential backoff and jitter, honouring Retry-After
// (internal/backoff). Every vector is checked to have
// the length of the first vector this embedder ever returned. That machinery
// is shared with the other HTTP backends; this package holds the OpenAI wire
// format and base URL rules.
package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/memminer/memminer/embed/internal/httpembed"
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
	// Tuning holds the API key (sent as "Authorization: Bearer <key>";
	// empty sends no Authorization header, fine for local servers; never in
	// errors or logs), the HTTP client, timeouts, retries, backoff, batch
	// size and logger; zero values mean this package's defaults.
	httpembed.Tuning
}

// StatusError reports an HTTP answer outside 2xx: the endpoint (URL), the
// StatusCode and an excerpt of the server's message (Body) with the API key
// blanked out. Its Temporary method tells whether the status is worth
// retrying (408, 425, 429 or 5xx). Embed wraps it into the errors it returns.
type StatusError = httpembed.StatusError

// backend is the OpenAI wire format for the shared HTTP client.
var backend = &httpembed.Backend{
	Name:              "openai",
	Example:           "text-embedding-3-small",
	DefaultBatchSize:  DefaultBatchSize,
	DefaultTimeout:    DefaultTimeout,
	DefaultMaxRetries: DefaultMaxRetries,
	DefaultBackoff:    DefaultBackoff,
	DefaultMaxBackoff: DefaultMaxBackoff,
	Request: func(model string, texts []string) any {
		return embedRequest{Model: model, Input: texts, EncodingFormat: "float"}
	},
	Answer: func() httpembed.Answer { return new(embedResponse) },
}

// Embedder embeds texts with one model of an OpenAI-compatible server. It is
// safe for concurrent use.
type Embedder struct {
	base   string // normalised API root, no trailing slash
	client *httpembed.Client
}

// New returns an Embedder for opts. It does not contact the server.
func New(opts Options) (*Embedder, error) {
	model, err := backend.Model(opts.Model)
	if err != nil {
		return nil, err
	}
	base, err := normaliseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	if opts.APIKey == "" && base == DefaultBaseURL {
		return nil, fmt.Errorf("openai: no API key for %s: set %s (or %s for a server that needs none)", base, EnvAPIKey, EnvBaseURL)
	}
	c, err := httpembed.New(backend, model, base+"/embeddings", opts.Tuning)
	if err != nil {
		return nil, err
	}
	return &Embedder{base: base, client: c}, nil
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
		return "", fmt.Errorf("base URL %q: scheme must be http or https (e.g. http://127.0.0.1:8080/v1)", httpembed.ShownURL(s))
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("base URL %q: %w", httpembed.ShownURL(s), httpembed.URLReason(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("base URL %q: scheme must be http or https", httpembed.ShownURL(s))
	}
	if u.Host == "" {
		return "", fmt.Errorf("base URL %q: no host", httpembed.ShownURL(s))
	}
	if u.User != nil {
		return "", fmt.Errorf("base URL %s: put credentials in %s, not in the URL", u.Redacted(), EnvAPIKey)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("base URL %q: query and fragment are not supported", httpembed.ShownURL(s))
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

// Model returns "openai:<model>", the id recorded with every vector.
func (e *Embedder) Model() string { return "openai:" + e.client.Model() }

// BaseURL returns the API root this embedder talks to.
func (e *Embedder) BaseURL() string { return e.base }

// Dimensions returns the length of the vectors this embedder returns, or 0
// before its first successful request.
func (e *Embedder) Dimensions() int { return e.client.Dimensions() }

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

// ServerError returns the error member of a 200 answer, wrapped as an error
// body, or nil when it is absent, null or "".
func (r *embedResponse) ServerError() []byte {
	if s := string(r.Error); s == "" || s == "null" || s == `""` {
		return nil
	}
	return append(append([]byte(`{"error":`), r.Error...), '}')
}

// Len is how many vectors the answer holds.
func (r *embedResponse) Len() int { return len(r.Data) }

// Vectors returns the vectors ordered by their index, which must name each
// text exactly once.
func (r *embedResponse) Vectors() ([][]float32, error) {
	vecs := make([][]float32, len(r.Data))
	for i, d := range r.Data {
		if d.Index == nil {
			return nil, fmt.Errorf("data[%d] has no index", i)
		}
		idx := *d.Index
		if idx < 0 || idx >= len(vecs) {
			return nil, fmt.Errorf("data[%d] has index %d, want 0 to %d", i, idx, len(vecs)-1)
		}
		if vecs[idx] != nil {
			return nil, fmt.Errorf("index %d appears twice", idx)
		}
		if d.Embedding == nil {
			d.Embedding = []float32{} // the length check reports it as empty
		}
		vecs[idx] = d.Embedding
	}
	return vecs, nil
}

// Embed returns one vector per text, in order, sending at most BatchSize
// texts per request. An empty texts slice sends nothing.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.client.Embed(ctx, texts)
}
