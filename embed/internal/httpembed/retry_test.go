package httpembed

import (
	"strings"
	"testing"
	"time"
)

func TestExcerpt(t *testing.T) {
	tests := []struct {
		name, raw, key, want string
	}{
		{name: "ollama error", raw: `{"error":"model not found"}`, want: "model not found"},
		{name: "openai error", raw: `{"error":{"message":"Rate limit reached","type":"requests"}}`, want: "Rate limit reached"},
		{name: "message", raw: `{"message":"nope"}`, want: "nope"},
		{name: "detail", raw: `{"detail":"Not authenticated"}`, want: "Not authenticated"},
		{name: "plain text", raw: "upstream\n  connect error\n", want: "upstream connect error"},
		{name: "empty", raw: "", want: ""},
		{name: "long", raw: strings.Repeat("x", 500), want: strings.Repeat("x", excerptLen) + "…"},
		{name: "key redacted", raw: `{"error":"bad key sk-123 given"}`, key: "sk-123", want: "bad key [redacted] given"},
		{name: "key redacted in text", raw: "token=sk-123", key: "sk-123", want: "token=[redacted]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := excerpt([]byte(tc.raw), tc.key); got != tc.want {
				t.Errorf("excerpt(%q) = %q, want %q", tc.raw, got, tc.want)
			}
		})
	}
}

func TestBackoffFor(t *testing.T) {
	tests := []struct {
		name                string
		backoff, maxBackoff time.Duration
		// want[i] is the undithered wait before retry i+1; the jittered
		// wait lies in [want/2, want].
		want []time.Duration
	}{
		{
			name:    "doubles up to the cap",
			backoff: 100 * time.Millisecond, maxBackoff: time.Second,
			want: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second},
		},
		{
			name:    "backoff above the cap",
			backoff: time.Minute, maxBackoff: time.Second,
			want: []time.Duration{time.Second, time.Second},
		},
		{
			name:    "zero",
			backoff: 0, maxBackoff: time.Second,
			want: []time.Duration{0, 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := retrier{backoff: tc.backoff, maxBackoff: tc.maxBackoff}
			for i, want := range tc.want {
				seen := map[time.Duration]bool{}
				for range 50 { // the jitter is random: sample it
					got := r.backoffFor(i + 1)
					if got < want/2 || got > want {
						t.Fatalf("backoffFor(%d) = %v, want within [%v, %v]", i+1, got, want/2, want)
					}
					seen[got] = true
				}
				// 50 draws from a range of want/2 ns all alike: no jitter.
				if want > 0 && len(seen) == 1 {
					t.Errorf("backoffFor(%d) is always %v: no jitter", i+1, want)
				}
			}
		})
	}
}

func TestStatusError(t *testing.T) {
	tests := []struct {
		err           StatusError
		want          string
		wantTemporary bool
	}{
		{StatusError{URL: "http://h/e", StatusCode: 503, Body: "busy"}, "POST http://h/e: 503 Service Unavailable: busy", true},
		{StatusError{URL: "http://h/e", StatusCode: 500}, "POST http://h/e: 500 Internal Server Error", true},
		{StatusError{URL: "http://h/e", StatusCode: 429, Body: "slow"}, "POST http://h/e: 429 Too Many Requests: slow", true},
		{StatusError{URL: "http://h/e", StatusCode: 404, Body: "no"}, "POST http://h/e: 404 Not Found: no", false},
		{StatusError{URL: "http://h/e", StatusCode: 299}, "POST http://h/e: 299", false},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if got := tc.err.Temporary(); got != tc.wantTemporary {
			t.Errorf("%d: Temporary() = %v, want %v", tc.err.StatusCode, got, tc.wantTemporary)
		}
	}
}
