// Package backoff is memminer's one way of waiting between retries: a
// jittered exponential wait (github.com/cenkalti/backoff/v5, set up so that
// every caller waits alike), the wait a server asks for in Retry-After, and
// which HTTP answers are worth retrying. The embedding clients, the
// Syncthing watcher, the conflict webhook and the automatic merge of
// conflict copies all use it.
package backoff

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	cb "github.com/cenkalti/backoff/v5"
)

// MaxRetryAfter caps what RetryAfter returns: a server's "come back
// tomorrow" is a day at most.
const MaxRetryAfter = 24 * time.Hour

// Backoff hands out the waits before successive retries: the n-th (from
// 0) is drawn from [d/2, d], d = min(initial·2ⁿ, max). It is not safe for
// concurrent use.
type Backoff struct {
	initial, limit time.Duration
	n              int
	exp            cb.ExponentialBackOff
}

// New returns a Backoff starting at initial and capped at limit (initial
// when limit is not positive; a smaller limit caps initial too). A
// non-positive initial waits nothing.
func New(initial, limit time.Duration) *Backoff {
	if limit <= 0 {
		limit = initial
	}
	initial = min(initial, limit)
	b := &Backoff{initial: initial, limit: limit}
	// The library draws from interval·[1-f, 1+f]; with f = 1/3 and the
	// interval at three quarters of d that is [d/2, d].
	b.exp = cb.ExponentialBackOff{
		InitialInterval:     initial * 3 / 4,
		RandomizationFactor: 1.0 / 3,
		Multiplier:          2,
		MaxInterval:         limit * 3 / 4,
	}
	b.exp.Reset()
	return b
}

// Next returns the wait before the next retry.
func (b *Backoff) Next() time.Duration {
	if b.initial <= 0 {
		return 0
	}
	d := b.ceiling()
	b.n++
	// The library rounds through float64: keep its draw within [d/2, d].
	return min(max(b.exp.NextBackOff(), d/2), d)
}

// ceiling is d for the next wait: initial doubled n times, capped.
func (b *Backoff) ceiling() time.Duration {
	d := b.initial
	for i := 0; i < b.n && d < b.limit; i++ {
		d *= 2
	}
	return min(d, b.limit)
}

// Reset starts the waits again from initial (after a success).
func (b *Backoff) Reset() {
	b.n = 0
	b.exp.Reset()
}

// Delay returns the wait before retry n+1 (n failures so far) of a fresh
// New(initial, limit): for callers that count failures.
func Delay(initial, limit time.Duration, n int) time.Duration {
	b := New(initial, limit)
	for i := 0; i < n; i++ {
		if b.ceiling() >= b.limit {
			break // at the cap every wait is alike
		}
		b.Next()
	}
	return b.Next()
}

// RetryAfter returns how long the server asks to wait before the next
// request: Retry-After in seconds or as an HTTP date, or the
// Retry-After-Ms some OpenAI-compatible servers send (which wins). It
// returns 0 when there is no usable value, and at most MaxRetryAfter.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return min(time.Duration(ms*float64(time.Millisecond)), MaxRetryAfter)
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), MaxRetryAfter)
	}
	return 0
}

// Retryable reports whether an HTTP answer with status code may succeed
// when asked again: 408 Request Timeout, 425 Too Early, 429 Too Many
// Requests and every 5xx.
func Retryable(code int) bool {
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooEarly,
		code == http.StatusTooManyRequests, code >= 500 && code <= 599:
		return true
	}
	return false
}

// Sleep waits for d or until ctx is done, and then returns ctx's cause.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
