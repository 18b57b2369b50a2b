package httpembed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memminer/memminer/internal/backoff"
)

// maxRetryAfter is the longest Retry-After this package waits for. A server
// asking for more (an exhausted quota, say) gets a prompt error instead of a
// caller blocked for hours.
const maxRetryAfter = 5 * time.Minute

// excerptLen is how many characters of an error body go into an error.
const excerptLen = 200

// StatusError reports an HTTP answer outside 2xx.
type StatusError struct {
	// URL is the endpoint that answered.
	URL string
	// StatusCode is the HTTP status code.
	StatusCode int
	// Body is a short excerpt of the response body (the server's error
	// message when it sent one), with the API key blanked out.
	Body string
}

// Error implements error.
func (e *StatusError) Error() string {
	msg := fmt.Sprintf("POST %s: %s", e.URL, statusText(e.StatusCode))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// Temporary reports whether the status is worth retrying (see
// backoff.Retryable).
func (e *StatusError) Temporary() bool { return backoff.Retryable(e.StatusCode) }

// statusText formats a status code as "503 Service Unavailable".
func statusText(code int) string {
	return strings.TrimSpace(fmt.Sprintf("%d %s", code, http.StatusText(code)))
}

// retrier posts JSON with per-attempt timeouts and bounded, jittered
// exponential backoff.
type retrier struct {
	backend    string // Backend.Name, for log records
	apiKey     string
	client     *http.Client
	timeout    time.Duration
	maxRetries int
	backoff    time.Duration
	maxBackoff time.Duration
	log        *slog.Logger
	// sleep waits for d or until ctx is done; tests replace it.
	sleep func(ctx context.Context, d time.Duration) error
}

// postJSON posts body to url and decodes a 2xx answer into out, retrying
// transient failures. The caller's ctx cancels everything, including waits.
func (r *retrier) postJSON(ctx context.Context, url string, body []byte, out any) error {
	attempts := r.maxRetries + 1
	for attempt := 1; ; attempt++ {
		retryAfter, retry, err := r.try(ctx, url, body, out)
		if err == nil {
			return nil
		}
		if !retry {
			return err
		}
		if attempt == attempts {
			if attempts == 1 {
				return err
			}
			return fmt.Errorf("giving up after %d attempts: %w", attempts, err)
		}
		if retryAfter > maxRetryAfter {
			return fmt.Errorf("server asks to retry after %s, more than the %s this client waits: %w", retryAfter, maxRetryAfter, err)
		}
		wait := retryAfter // the server knows best when it says
		if wait == 0 {
			wait = r.backoffFor(attempt)
		}
		r.log.LogAttrs(ctx, slog.LevelWarn, "embedding request failed, retrying",
			slog.String("backend", r.backend), slog.String("url", url),
			slog.Int("attempt", attempt), slog.Int("max_attempts", attempts),
			slog.Duration("wait", wait), slog.String("error", err.Error()))
		if err := r.sleep(ctx, wait); err != nil {
			return fmt.Errorf("waiting to retry POST %s: %w", url, err)
		}
	}
}

// backoffFor returns the jittered wait before retry number attempt
// (1-based): the project's backoff from r.backoff, capped at r.maxBackoff.
func (r *retrier) backoffFor(attempt int) time.Duration {
	return backoff.Delay(r.backoff, r.maxBackoff, attempt-1)
}

// try makes one attempt. It returns whether a failure is worth retrying and
// how long the server asked to wait (0 when it did not say).
func (r *retrier) try(ctx context.Context, url string, body []byte, out any) (retryAfter time.Duration, retry bool, err error) {
	actx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, false, fmt.Errorf("build request for %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if r.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.apiKey)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, ctx.Err() == nil, r.transportError(ctx, actx, url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		serr := &StatusError{URL: url, StatusCode: resp.StatusCode, Body: excerpt(raw, r.apiKey)}
		return backoff.RetryAfter(resp.Header, time.Now()), serr.Temporary(), serr
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		var syntaxErr *json.SyntaxError
		var typeErr *json.UnmarshalTypeError
		switch {
		case actx.Err() != nil:
			// Cut off while reading the body: a timeout or the caller's cancel.
			return 0, ctx.Err() == nil, r.transportError(ctx, actx, url, err)
		case errors.As(err, &syntaxErr), errors.As(err, &typeErr),
			errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return 0, false, fmt.Errorf("POST %s: malformed response: %w", url, err)
		}
		return 0, true, fmt.Errorf("POST %s: read response: %w", url, err)
	}
	return 0, false, nil
}

// transportError explains a failed exchange: the caller's cancellation, the
// per-attempt timeout, or a network error.
func (r *retrier) transportError(ctx, actx context.Context, url string, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("POST %s: %w", url, context.Cause(ctx))
	case errors.Is(actx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("POST %s: no answer within %s: %w", url, r.timeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("POST %s: %w", url, URLReason(err))
}

// excerpt returns a short one-line version of an error body: the message of
// a JSON error ({"error":"…"}, {"error":{"message":"…"}}, {"message":"…"} or
// {"detail":"…"}) when there is one, else the raw text; apiKey is blanked out.
func excerpt(raw []byte, apiKey string) string {
	s := string(raw)
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(raw, &v) == nil {
		var str string
		var obj struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(v.Error, &str) == nil && str != "":
			s = str
		case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			s = obj.Message
		case v.Message != "":
			s = v.Message
		case json.Unmarshal(v.Detail, &str) == nil && str != "":
			s = str
		}
	}
	if apiKey != "" {
		s = strings.ReplaceAll(s, apiKey, "[redacted]")
	}
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if utf8.RuneCountInString(s) > excerptLen {
		s = string([]rune(s)[:excerptLen]) + "…"
	}
	return s
}
