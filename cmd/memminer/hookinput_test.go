package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestHookInputThatNeverEnds: a client that sends part of its JSON and
// never closes stdin gets nothing and exit 0 once the hook's timeout has
// passed; the prompt (or the session) is not held for ever.
func TestHookInputThatNeverEnds(t *testing.T) {
	c := newCLI(t)
	saved := hookTimeout
	hookTimeout = 100 * time.Millisecond
	t.Cleanup(func() { hookTimeout = saved })
	for _, args := range [][]string{
		{"recall", "--hook", "claude-code"},
		{"wake-up", "--hook", "codex", "--wing", "pam"},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.WriteString(`{"prompt":"deploy"`); err != nil {
			t.Fatal(err)
		}
		old := os.Stdin
		os.Stdin = r
		var out, errb strings.Builder
		code := run(t.Context(), args, &out, &errb, func(k string) string { return c.env[k] })
		os.Stdin = old
		w.Close()
		r.Close()
		if out.String() != "" || code != 0 || !strings.Contains(errb.String(), "did not end within") {
			t.Errorf("%s: stdout %q, stderr %q, exit %d", args[0], out.String(), errb.String(), code)
		}
	}
}
