// Package ollama embeds texts with a model served by a local (or remote)
// Ollama server through its batch endpoint POST /api/embed.
//
// The server address comes from Options.BaseURL or, with FromEnv, from
// OLLAMA_HOST, read the way the ollama CLI reads it: "host", "host:port" or a
// full URL, defaulting to http://127.0.0.1:11434.
//
// Requests are batched, each attempt has its own timeout, and transient
// failures (429, 5xx, network errors, timeouts) are retried with exponential
// backoff and jitter, honouring Retry-After. Every vector is checked to have
// the length of the first vector this embedder ever returned.
package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults used when the matching Options field is zero.
const (
	// DefaultBaseURL is where Ollama listens unless OLLAMA_HOST says otherwise.
	DefaultBaseURL = "http://127.0.0.1:11434"
	// DefaultPort is the port assumed for an OLLAMA_HOST without scheme and port.
	DefaultPort = "11434"
	// DefaultBatchSize is how many texts go into one request. Ollama embeds a
	// batch in one pass; larger batches mostly lengthen each request.
	DefaultBatchSize = 32
	// DefaultTimeout bounds one HTTP attempt. It is generous because the first
	// request after a while makes Ollama load the model from disk.
	DefaultTimeout = 2 * time.Minute
	// DefaultMaxRetries is how many times a failed request is retried.
	DefaultMaxRetries = 4
	// DefaultBackoff is the wait before the first retry; it doubles per retry.
	DefaultBackoff = 500 * time.Millisecond
	// DefaultMaxBackoff caps the exponential backoff.
	DefaultMaxBackoff = 30 * time.Second
)

// EnvHost and EnvAPIKey are the environment variables FromEnv reads.
const (
	EnvHost   = "OLLAMA_HOST"
	EnvAPIKey = "OLLAMA_API_KEY"
)

// Options configures an Embedder. Only Model is required.
type Options struct {
	// Model is the Ollama model name, e.g. "nomic-embed-text".
	Model string
	// BaseURL is the server root, e.g. "http://127.0.0.1:11434"; empty means
	// DefaultBaseURL. The forms OLLAMA_HOST accepts are accepted here too.
	BaseURL string
	// APIKey, when set, is sent as "Authorization: Bearer <key>" (for a
	// server behind an authenticating proxy). It never appears in errors or logs.
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

// Embedder embeds texts with one Ollama model. It is safe for concurrent use.
type Embedder struct {
	model    string
	base     string // normalised server root, no trailing slash
	endpoint string // base + "/api/embed"
	batch    int
	client   retrier
	dim      atomic.Int64 // length of the first vector ever returned; 0 before
}

// New returns an Embedder for opts. It does not contact the server.
func New(opts Options) (*Embedder, error) {
	model := strings.TrimSpace(opts.Model)
	if model == "" {
		return nil, errors.New("ollama: empty model name (want e.g. ollama:nomic-embed-text)")
	}
	base, err := HostURL(opts.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	if opts.BatchSize < 0 {
		return nil, fmt.Errorf("ollama: negative batch size %d", opts.BatchSize)
	}
	e := &Embedder{
		model:    model,
		base:     base,
		endpoint: base + "/api/embed",
		batch:    orDefault(opts.BatchSize, DefaultBatchSize),
	}
	e.client = retrier{
		backend:    "ollama",
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
// environment variables OLLAMA_HOST and OLLAMA_API_KEY read through getenv
// (nil means os.Getenv).
func FromEnv(opts Options, getenv func(string) string) (*Embedder, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if opts.BaseURL == "" {
		opts.BaseURL = getenv(EnvHost)
	}
	if opts.APIKey == "" {
		opts.APIKey = strings.TrimSpace(getenv(EnvAPIKey))
	}
	return New(opts)
}

// HostURL turns an OLLAMA_HOST-style value into a server root URL without a
// trailing slash, the way the ollama CLI interprets it: empty means
// DefaultBaseURL; without a scheme the value is "host[:port]" spoken to over
// http, port DefaultPort unless given; with an http or https scheme a missing
// port is that scheme's default. The unspecified addresses 0.0.0.0 and ::
// (which a server listens on) are dialled as loopback.
func HostURL(s string) (string, error) {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), `"'`))
	if s == "" {
		return DefaultBaseURL, nil
	}
	if !strings.Contains(s, "://") {
		hostport := strings.TrimRight(s, "/")
		host, port, err := net.SplitHostPort(hostport)
		if err != nil {
			// No port: the whole value is the host (maybe a bare IPv6 address).
			host, port = strings.Trim(hostport, "[]"), DefaultPort
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return "", fmt.Errorf("server address %q: bad port %q", shownURL(s), port)
		}
		if host == "" {
			host = "127.0.0.1"
		}
		s = "http://" + net.JoinHostPort(loopbackFor(host), port)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("server address %q: %w", shownURL(s), urlErr(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("server address %q: scheme must be http or https", shownURL(s))
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("server address %q: no host", shownURL(s))
	}
	if u.User != nil {
		return "", fmt.Errorf("server address %q: credentials in the URL are not supported (set %s for a bearer token)", shownURL(s), EnvAPIKey)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("server address %q: bad port %q", shownURL(s), p)
		}
		u.Host = net.JoinHostPort(loopbackFor(u.Hostname()), p)
	} else if h := loopbackFor(u.Hostname()); h != u.Hostname() {
		u.Host = h
		if strings.Contains(h, ":") {
			u.Host = "[" + h + "]"
		}
	}
	u.RawQuery, u.Fragment = "", ""
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

// loopbackFor maps the unspecified addresses to loopback and leaves others alone.
func loopbackFor(host string) string {
	switch host {
	case "0.0.0.0":
		return "127.0.0.1"
	case "::":
		return "::1"
	}
	return host
}

// Model returns "ollama:<model>", the id recorded with every vector.
func (e *Embedder) Model() string { return "ollama:" + e.model }

// BaseURL returns the server root this embedder talks to.
func (e *Embedder) BaseURL() string { return e.base }

// Dimensions returns the length of the vectors this embedder returns, or 0
// before its first successful request.
func (e *Embedder) Dimensions() int { return int(e.dim.Load()) }

// String describes the embedder for logs; it never includes the API key.
func (e *Embedder) String() string { return e.Model() + " at " + e.base }

// embedRequest is the body of POST /api/embed.
type embedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

// embedResponse is the part of /api/embed's answer this package reads.
type embedResponse struct {
	Embeddings [][]float32 `json:"embeddings"`
	Error      string      `json:"error"`
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
				return nil, fmt.Errorf("ollama %s: texts %d-%d of %d: %w", e.model, start, end-1, len(texts), err)
			}
			return nil, fmt.Errorf("ollama %s: %w", e.model, err)
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// embedBatch sends one request; offset is the index of batch[0] in the
// caller's slice, used in error messages.
func (e *Embedder) embedBatch(ctx context.Context, batch []string, offset int) ([][]float32, error) {
	body, err := json.Marshal(embedRequest{Model: e.model, Input: batch})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	var resp embedResponse
	if err := e.client.postJSON(ctx, e.endpoint, body, &resp); err != nil {
		return nil, err
	}
	if resp.Error != "" {
		return nil, fmt.Errorf("POST %s: server error: %s", e.endpoint, excerpt([]byte(resp.Error), e.client.apiKey))
	}
	if len(resp.Embeddings) != len(batch) {
		return nil, fmt.Errorf("POST %s: got %d vectors for %d texts", e.endpoint, len(resp.Embeddings), len(batch))
	}
	if err := checkDims(&e.dim, resp.Embeddings, offset); err != nil {
		return nil, fmt.Errorf("POST %s: %w", e.endpoint, err)
	}
	return resp.Embeddings, nil
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
