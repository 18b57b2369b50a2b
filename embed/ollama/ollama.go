// Package ollama embeds texts with a model served by a local (or remote)
// Ollama server through its batch endpoint POST /api/embed.
//
// The server address comes from Options.BaseURL or, with FromEnv, from
// OLLAMA_HOST, read the way the ollama CLI reads it: "host", "host:port" or a
// full URL, defaulting to http://127.0.0.1:11434.
//
// Requests are batched, each attempt has its own timeout, and transient
// failures (408, 425, 429, 5xx, network errors, timeouts) are retried
// with exponential backoff and jitter, honouring Retry-After
// (internal/backoff). Every vector is checked to have
// the length of the first vector this embedder ever returned. That machinery
// is shared with the other HTTP backends; this package holds Ollama's wire
// format and address rules.
package ollama

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/memminer/memminer/embed/internal/httpembed"
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
	// Tuning holds the API key (for an Ollama behind an authenticating
	// proxy, sent as "Authorization: Bearer <key>"; never in errors or
	// logs), the HTTP client, timeouts, retries, backoff, batch size and
	// logger; zero values mean this package's defaults.
	httpembed.Tuning
}

// StatusError reports an HTTP answer outside 2xx: the endpoint (URL), the
// StatusCode and an excerpt of the server's message (Body) with the API key
// blanked out. Its Temporary method tells whether the status is worth
// retrying (408, 425, 429 or 5xx). Embed wraps it into the errors it returns.
type StatusError = httpembed.StatusError

// backend is Ollama's wire format for the shared HTTP client.
var backend = &httpembed.Backend{
	Name:              "ollama",
	Example:           "nomic-embed-text",
	DefaultBatchSize:  DefaultBatchSize,
	DefaultTimeout:    DefaultTimeout,
	DefaultMaxRetries: DefaultMaxRetries,
	DefaultBackoff:    DefaultBackoff,
	DefaultMaxBackoff: DefaultMaxBackoff,
	Request: func(model string, texts []string) any {
		return embedRequest{Model: model, Input: texts}
	},
	Answer: func() httpembed.Answer { return new(embedResponse) },
}

// Embedder embeds texts with one Ollama model. It is safe for concurrent use.
type Embedder struct {
	base   string // normalised server root, no trailing slash
	client *httpembed.Client
}

// New returns an Embedder for opts. It does not contact the server.
func New(opts Options) (*Embedder, error) {
	model, err := backend.Model(opts.Model)
	if err != nil {
		return nil, err
	}
	base, err := HostURL(opts.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("ollama: %w", err)
	}
	c, err := httpembed.New(backend, model, base+"/api/embed", opts.Tuning)
	if err != nil {
		return nil, err
	}
	return &Embedder{base: base, client: c}, nil
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
			return "", fmt.Errorf("server address %q: bad port %q", httpembed.ShownURL(s), port)
		}
		if host == "" {
			host = "127.0.0.1"
		}
		s = "http://" + net.JoinHostPort(loopbackFor(host), port)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("server address %q: %w", httpembed.ShownURL(s), httpembed.URLReason(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("server address %q: scheme must be http or https", httpembed.ShownURL(s))
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("server address %q: no host", httpembed.ShownURL(s))
	}
	if u.User != nil {
		return "", fmt.Errorf("server address %q: credentials in the URL are not supported (set %s for a bearer token)", httpembed.ShownURL(s), EnvAPIKey)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("server address %q: bad port %q", httpembed.ShownURL(s), p)
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
func (e *Embedder) Model() string { return "ollama:" + e.client.Model() }

// BaseURL returns the server root this embedder talks to.
func (e *Embedder) BaseURL() string { return e.base }

// Dimensions returns the length of the vectors this embedder returns, or 0
// before its first successful request.
func (e *Embedder) Dimensions() int { return e.client.Dimensions() }

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

// ServerError returns the error Ollama reported in a 200 answer, or nil.
func (r *embedResponse) ServerError() []byte {
	if r.Error == "" {
		return nil
	}
	return []byte(r.Error)
}

// Len is how many vectors the answer holds.
func (r *embedResponse) Len() int { return len(r.Embeddings) }

// Vectors returns the vectors, which Ollama lists in input order.
func (r *embedResponse) Vectors() ([][]float32, error) { return r.Embeddings, nil }

// Embed returns one vector per text, in order, sending at most BatchSize
// texts per request. An empty texts slice sends nothing.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.client.Embed(ctx, texts)
}
