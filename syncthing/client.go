package syncthing

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// DefaultURL is where a stock Syncthing serves its GUI and REST API.
const DefaultURL = "http://127.0.0.1:8384"

// DefaultRequestTimeout bounds every request that is not an event long-poll
// when the caller's context has no earlier deadline. Event long-polls get
// their own poll timeout plus this much.
const DefaultRequestTimeout = 10 * time.Second

// DefaultEventTimeout is the long-poll timeout used by [Client.Events] and
// [Client.DiskEvents] when they are given a timeout of zero or less. It is
// Syncthing's own default.
const DefaultEventTimeout = 60 * time.Second

// APIKeyHeader is the HTTP header that carries the API key.
const APIKeyHeader = "X-API-Key"

// maxErrorBody is how much of an error response's body ends up in an error.
const maxErrorBody = 200

// maxResponseBody caps how much of a response this package will read.
const maxResponseBody = 64 << 20

var (
	// ErrUnauthorized reports that Syncthing refused the API key (HTTP 401
	// or 403). Its text is "API key rejected"; the key itself is never
	// included.
	ErrUnauthorized = errors.New("API key rejected")

	// ErrEmptyBody reports an HTTP 200 answer without a body. Syncthing
	// sends the status line of an event long-poll before it blocks, so an
	// empty body usually means it stopped (or restarted) mid-poll.
	ErrEmptyBody = errors.New("empty response body")

	// ErrTimeout reports that Syncthing did not answer within the request
	// timeout. It wraps [context.DeadlineExceeded].
	ErrTimeout = fmt.Errorf("no answer in time: %w", context.DeadlineExceeded)
)

// HTTPError is returned for a response with an unexpected status code
// (other than 401/403, which become [ErrUnauthorized]).
type HTTPError struct {
	// Method and Path identify the request (the path without query).
	Method, Path string
	// StatusCode is the HTTP status code Syncthing answered with.
	StatusCode int
	// Body is the start of the response body, trimmed and with the API
	// key removed should the server have echoed it.
	Body string
}

// Error implements error.
func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Client talks to one Syncthing instance over its REST API. It is safe for
// concurrent use. The zero value is not usable; create one with [NewClient].
type Client struct {
	base           *url.URL
	apiKey         string
	hc             *http.Client
	requestTimeout time.Duration
}

// Option configures a [Client].
type Option func(*Client)

// WithHTTPClient makes the client send its requests through hc, for example
// one whose transport accepts Syncthing's self-signed HTTPS certificate.
// Do not set hc.Timeout: it would cut event long-polls short; the client
// sets per-request deadlines itself.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithRequestTimeout changes [DefaultRequestTimeout] for this client.
// A value of zero or less keeps the default.
func WithRequestTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.requestTimeout = d
		}
	}
}

// NewClient returns a client for the Syncthing REST API at baseURL
// (an empty baseURL means [DefaultURL]) that authenticates with apiKey.
// A baseURL without a scheme, such as "127.0.0.1:8384", is taken as http.
func NewClient(baseURL, apiKey string, opts ...Option) (*Client, error) {
	if baseURL == "" {
		baseURL = DefaultURL
	}
	if !strings.Contains(baseURL, "://") {
		baseURL = "http://" + baseURL
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("syncthing: parse base URL %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("syncthing: base URL %q: scheme must be http or https", baseURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("syncthing: base URL %q has no host", baseURL)
	}
	if u.User != nil {
		return nil, errors.New("syncthing: base URL must not carry user credentials; use the API key")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	c := &Client{
		base:           u,
		apiKey:         apiKey,
		hc:             &http.Client{},
		requestTimeout: DefaultRequestTimeout,
	}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// BaseURL returns the base URL the client talks to.
func (c *Client) BaseURL() string { return c.base.String() }

// String describes the client without revealing the API key.
func (c *Client) String() string {
	return "syncthing.Client(" + c.base.String() + ")"
}

// GoString is like String, so %#v cannot leak the API key either.
func (c *Client) GoString() string { return c.String() }

// LogValue makes slog print the client without its API key.
func (c *Client) LogValue() slog.Value {
	return slog.GroupValue(slog.String("url", c.base.String()))
}

// Ping checks that Syncthing answers and accepts the API key.
func (c *Client) Ping(ctx context.Context) error {
	var res struct {
		Ping string `json:"ping"`
	}
	if err := c.DoJSON(ctx, http.MethodGet, "/rest/system/ping", nil, &res); err != nil {
		return err
	}
	if res.Ping != "pong" {
		return fmt.Errorf("syncthing GET /rest/system/ping: unexpected answer %q", res.Ping)
	}
	return nil
}

// DoJSON sends a request to path (which may carry a query) with in encoded
// as the JSON body (no body when in is nil) and decodes a JSON answer into
// out (ignored when out is nil). It is the building block of the other
// methods and serves endpoints this package does not wrap, such as the
// configuration calls a test harness makes.
func (c *Client) DoJSON(ctx context.Context, method, path string, in, out any) error {
	ctx, cancel := c.withTimeout(ctx, c.requestTimeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		buf, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("syncthing %s %s: encode request: %w", method, trimQuery(path), err)
		}
		body = bytes.NewReader(buf)
	}
	data, err := c.do(ctx, method, path, body)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return c.decode(method, path, data, out)
}

// do performs one request and returns the body of a 2xx answer. All errors
// it returns start with "syncthing METHOD PATH:" and never contain the key.
func (c *Client) do(ctx context.Context, method, path string, body io.Reader) ([]byte, error) {
	p := trimQuery(path)
	fail := func(err error) error {
		return c.redact(fmt.Errorf("syncthing %s %s: %w", method, p, err))
	}
	u := c.base.String() + path
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fail(err)
	}
	if c.apiKey != "" {
		req.Header.Set(APIKeyHeader, c.apiKey)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fail(c.transportError(ctx, err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		return nil, fail(fmt.Errorf("read answer: %w", c.transportError(ctx, err)))
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fail(fmt.Errorf("%w (HTTP %d); check <gui><apikey> in Syncthing's config.xml",
			ErrUnauthorized, resp.StatusCode))
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, fail(&HTTPError{
			Method:     method,
			Path:       p,
			StatusCode: resp.StatusCode,
			Body:       c.snippet(data),
		})
	}
	return data, nil
}

// decode unmarshals a JSON answer, turning an empty body into ErrEmptyBody.
func (c *Client) decode(method, path string, data []byte, out any) error {
	p := trimQuery(path)
	if len(bytes.TrimSpace(data)) == 0 {
		return fmt.Errorf("syncthing %s %s: %w", method, p, ErrEmptyBody)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return c.redact(fmt.Errorf("syncthing %s %s: decode answer %q: %w", method, p, c.snippet(data), err))
	}
	return nil
}

// transportError turns a deadline set by withTimeout into ErrTimeout while
// keeping a cancellation by the caller recognisable as context.Canceled.
func (c *Client) transportError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || isTimeout(err) {
		return ErrTimeout
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// withTimeout adds a deadline of d unless ctx already ends sooner.
func (c *Client) withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// redact removes the API key from an error's text, in case a server or a
// lower layer echoed it. Errors without the key are returned unchanged so
// errors.Is keeps working.
func (c *Client) redact(err error) error {
	if err == nil || c.apiKey == "" || !strings.Contains(err.Error(), c.apiKey) {
		return err
	}
	return &redactedError{msg: strings.ReplaceAll(err.Error(), c.apiKey, "[redacted]"), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }

// Is keeps errors.Is working on the wrapped chain without exposing it
// (an Unwrap method would hand out the unredacted text).
func (e *redactedError) Is(target error) bool { return errors.Is(e.err, target) }

// snippet returns the start of a response body for an error message.
func (c *Client) snippet(data []byte) string {
	s := strings.TrimSpace(string(data))
	if c.apiKey != "" {
		s = strings.ReplaceAll(s, c.apiKey, "[redacted]")
	}
	if len(s) > maxErrorBody {
		cut := maxErrorBody
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func trimQuery(path string) string {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		return path[:i]
	}
	return path
}

// timeoutSeconds renders a long-poll timeout as Syncthing's whole seconds,
// rounding up so that a positive duration never becomes "return at once".
func timeoutSeconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}
