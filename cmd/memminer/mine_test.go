package main

import (
	"path/filepath"
	"strings"

	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

func TestElapsedText(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{300 * time.Microsecond, "<1ms"},
		{600 * time.Microsecond, "1ms"},
		{42*time.Millisecond + 400*time.Microsecond, "42ms"},
		{1500 * time.Millisecond, "1.5s"},
	}
	for _, tt := range tests {
		if got := elapsedText(tt.d); got != tt.want {
			t.Errorf("elapsedText(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

// TestMineNamesOnlyWingsWithNotes: a mine of agents whose files are all
// skipped but one names only the wing it mined.
func TestMineNamesOnlyWingsWithNotes(t *testing.T) {
	c := newCLI(t)
	dir := filepath.Join(t.TempDir(), "bad")
	testutil.WriteFile(t, filepath.Join(dir, "agents", "ok", "memory.md"), "- A good note.\n")
	testutil.WriteFile(t, filepath.Join(dir, "agents", "bin", "memory.md"), "- a\x00binary\n")
	testutil.WriteFile(t, filepath.Join(dir, "agents", "utf", "memory.md"), "- bad \xff\xfe utf\n")
	out, stderr, code := c.run("mine", dir)
	if code != 0 || !strings.HasPrefix(out, "mined wing ok:") {
		t.Fatalf("mine: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
}
