package testutil

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// Waits end at the test binary's -timeout deadline less a margin, not
// after a fixed time: a loaded machine stretches what normally takes
// milliseconds, and a fixed bound is arbitrary when something is truly
// broken. The margin lets the failing test's cleanups (stopping daemons
// and Syncthing, printing their logs) run before the binary's timeout
// panics and prints nothing of the kind.
const (
	// maxMargin is the margin with the usual -timeout of minutes.
	maxMargin = 30 * time.Second
	// marginShare is the share of the whole -timeout kept back when that
	// is less than maxMargin, so a short -timeout still leaves waits time.
	marginShare = 10
	// noDeadline bounds waits when the binary runs without -timeout
	// (-timeout 0): go test's default timeout.
	noDeadline = 10 * time.Minute
	// pollInterval is how often Eventually and WaitFor check.
	pollInterval = 10 * time.Millisecond
)

// processStart approximates when the test binary's timeout began.
var processStart = time.Now()

// WaitDeadline returns when a wait in t must give up: [Deadline] less a
// margin for cleanups to report.
func WaitDeadline(t testing.TB) time.Time {
	deadline, ok := testDeadline(t)
	return waitDeadline(processStart, deadline, ok)
}

// Deadline returns the test binary's deadline (t.Deadline), or ten
// minutes after it started when there is none (-timeout 0, or a
// benchmark). Waits in cleanups, which the margin before it is kept for,
// end there.
func Deadline(t testing.TB) time.Time {
	deadline, ok := testDeadline(t)
	if !ok {
		return processStart.Add(noDeadline)
	}
	return deadline
}

func testDeadline(t testing.TB) (time.Time, bool) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		return d.Deadline()
	}
	return time.Time{}, false
}

func waitDeadline(start, deadline time.Time, ok bool) time.Time {
	if !ok {
		return start.Add(noDeadline)
	}
	margin := min(maxMargin, deadline.Sub(start)/marginShare)
	return deadline.Add(-margin)
}

// WaitContext returns a context that ends at [WaitDeadline], for waits on
// channels and for bounding blocking calls.
func WaitContext(t testing.TB) (context.Context, context.CancelFunc) {
	return context.WithDeadline(context.Background(), WaitDeadline(t))
}

// CleanupContext returns a context that ends at [Deadline], for waits in
// cleanups: after a wait of the test has used its time, they still have
// the margin to stop what the test started and say what did not stop.
func CleanupContext(t testing.TB) (context.Context, context.CancelFunc) {
	return context.WithDeadline(context.Background(), Deadline(t))
}

// Eventually calls cond every few milliseconds until it returns true,
// failing the test with what and the last error cond returned when
// [WaitDeadline] passes first. cond gets a context that ends then too.
// Call it from the test's goroutine (it calls t.Fatalf).
func Eventually(t testing.TB, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := WaitContext(t)
	defer cancel()
	start := time.Now()
	var lastErr error
	for {
		ok, err := cond(ctx)
		if ok {
			return
		}
		if err != nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("timed out after %s (the test's deadline is near) waiting for %s",
				time.Since(start).Round(time.Millisecond), what)
			if lastErr != nil {
				msg += fmt.Sprintf(" (last error: %v)", lastErr)
			}
			t.Fatal(msg)
		case <-time.After(pollInterval):
		}
	}
}

// WaitFor is [Eventually] for a condition that cannot fail.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Eventually(t, what, func(context.Context) (bool, error) { return cond(), nil })
}

// Receive waits for a value on ch, failing the test at the wait deadline
// (see [WaitDeadline]).
func Receive[T any](t testing.TB, what string, ch <-chan T) T {
	t.Helper()
	ctx, cancel := WaitContext(t)
	defer cancel()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}
