package testutil

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestWaitDeadline(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name     string
		deadline time.Duration // after start; 0 means none
		want     time.Duration // after start
	}{
		{"go test's default 10m", 10 * time.Minute, 10*time.Minute - maxMargin},
		{"a long -timeout keeps the same margin", 30 * time.Minute, 30*time.Minute - maxMargin},
		{"a short -timeout keeps a tenth", 20 * time.Second, 18 * time.Second},
		{"no -timeout", 0, noDeadline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := waitDeadline(start, start.Add(tt.deadline), tt.deadline != 0)
			if want := start.Add(tt.want); !got.Equal(want) {
				t.Errorf("waitDeadline = start+%s, want start+%s", got.Sub(start), tt.want)
			}
		})
	}
}

func TestWaitDeadlineFollowsTheTest(t *testing.T) {
	d, ok := t.Deadline()
	got := WaitDeadline(t)
	switch {
	case ok && (!got.Before(d) || got.Before(d.Add(-maxMargin))):
		t.Errorf("WaitDeadline = %s, want within %s before the test's deadline %s", got, maxMargin, d)
	case ok && !Deadline(t).Equal(d):
		t.Errorf("Deadline = %s, want the test's %s", Deadline(t), d)
	case !ok && !got.Equal(processStart.Add(noDeadline)):
		t.Errorf("without a deadline WaitDeadline = %s, want %s after the start", got, noDeadline)
	}
}

func TestEventually(t *testing.T) {
	calls := 0
	Eventually(t, "the third call", func(ctx context.Context) (bool, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("cond's context has no deadline")
		}
		calls++
		return calls == 3, nil
	})
	if calls != 3 {
		t.Errorf("cond called %d times, want 3", calls)
	}
	WaitFor(t, "a true condition", func() bool { return true })
}

// pastDeadline is a test whose deadline has passed; Fatal records the
// message and ends the goroutine, as testing.T's does.
type pastDeadline struct {
	testing.TB
	fatal string
}

func (p *pastDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Second), true }
func (p *pastDeadline) Helper()                     {}
func (p *pastDeadline) Fatal(args ...any) {
	p.fatal = fmt.Sprint(args...)
	runtime.Goexit()
}

func TestEventuallyFailsAtTheDeadline(t *testing.T) {
	p := &pastDeadline{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Eventually(p, "the impossible", func(context.Context) (bool, error) {
			return false, errors.New("connection refused")
		})
	}()
	<-done
	for _, want := range []string{"waiting for the impossible", "last error: connection refused", "deadline"} {
		if !strings.Contains(p.fatal, want) {
			t.Errorf("failure %q does not say %q", p.fatal, want)
		}
	}
}
