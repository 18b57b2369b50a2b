package backoff

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestBackoffBounds(t *testing.T) {
	const initial, limit = 100 * time.Millisecond, time.Second
	want := []time.Duration{100, 200, 400, 800, 1000, 1000, 1000}
	for range 200 {
		b := New(initial, limit)
		for i, w := range want {
			w *= time.Millisecond
			if d := b.Next(); d < w/2 || d > w {
				t.Fatalf("wait %d = %s, want within [%s, %s]", i, d, w/2, w)
			}
		}
		b.Reset()
		if d := b.Next(); d < initial/2 || d > initial {
			t.Fatalf("after Reset: %s, want within [%s, %s]", d, initial/2, initial)
		}
	}
}

func TestBackoffJitters(t *testing.T) {
	seen := map[time.Duration]bool{}
	for range 50 {
		seen[Delay(time.Second, time.Minute, 3)] = true
	}
	if len(seen) < 2 {
		t.Fatalf("50 waits were all %v: no jitter", seen)
	}
}

func TestDelay(t *testing.T) {
	tests := []struct {
		n      int
		lo, hi time.Duration
	}{
		{0, 50 * time.Millisecond, 100 * time.Millisecond},
		{1, 100 * time.Millisecond, 200 * time.Millisecond},
		{3, 400 * time.Millisecond, 800 * time.Millisecond},
		{4, 500 * time.Millisecond, time.Second},
		{1 << 20, 500 * time.Millisecond, time.Second},
	}
	for _, tt := range tests {
		for range 50 {
			if d := Delay(100*time.Millisecond, time.Second, tt.n); d < tt.lo || d > tt.hi {
				t.Fatalf("Delay(n=%d) = %s, want within [%s, %s]", tt.n, d, tt.lo, tt.hi)
			}
		}
	}
	if d := Delay(0, time.Second, 3); d != 0 {
		t.Errorf("Delay with no initial wait = %s", d)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{name: "absent", want: 0},
		{name: "seconds", header: map[string]string{"Retry-After": "7"}, want: 7 * time.Second},
		{name: "spaces", header: map[string]string{"Retry-After": " 3 "}, want: 3 * time.Second},
		{name: "zero", header: map[string]string{"Retry-After": "0"}, want: 0},
		{name: "negative", header: map[string]string{"Retry-After": "-3"}, want: 0},
		{name: "huge", header: map[string]string{"Retry-After": "99999999999"}, want: MaxRetryAfter},
		{name: "date", header: map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, want: 90 * time.Second},
		{name: "far date", header: map[string]string{"Retry-After": now.Add(1000 * time.Hour).Format(http.TimeFormat)}, want: MaxRetryAfter},
		{name: "past date", header: map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, want: 0},
		{name: "garbage", header: map[string]string{"Retry-After": "soon"}, want: 0},
		{name: "milliseconds", header: map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, want: 250 * time.Millisecond},
		{name: "bad milliseconds", header: map[string]string{"Retry-After-Ms": "x", "Retry-After": "1"}, want: time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			if got := RetryAfter(h, now); got != tc.want {
				t.Errorf("RetryAfter(%v) = %v, want %v", tc.header, got, tc.want)
			}
		})
	}
}

func TestRetryable(t *testing.T) {
	for code, want := range map[int]bool{
		200: false, 400: false, 401: false, 403: false, 404: false, 413: false,
		408: true, 425: true, 429: true, 500: true, 502: true, 503: true, 599: true,
	} {
		if got := Retryable(code); got != want {
			t.Errorf("Retryable(%d) = %v, want %v", code, got, want)
		}
	}
}

func TestSleep(t *testing.T) {
	cause := errors.New("stopping")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if err := Sleep(ctx, time.Hour); !errors.Is(err, cause) {
		t.Fatalf("Sleep on a cancelled context = %v, want its cause", err)
	}
	if err := Sleep(context.Background(), time.Nanosecond); err != nil {
		t.Fatal(err)
	}
}
