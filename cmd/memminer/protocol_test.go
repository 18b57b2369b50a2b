package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProtocol(t *testing.T) {
	c := newCLI(t)
	tests := []struct {
		golden string
		env    map[string]string
		args   []string
	}{
		{"protocol.md", nil, []string{"protocol"}},
		{"protocol-wing.md", map[string]string{"MEMMINER_HIVE": c.hive}, []string{"protocol", "--wing", "Dwight"}},
		{"protocol-glob.md", map[string]string{"MEMMINER_HIVE": c.hive, "MEMMINER_AGENTS": "bots/*", "MEMMINER_WING": "kevin"}, []string{"protocol"}},
	}
	for _, tt := range tests {
		for k, v := range tt.env {
			c.env[k] = v
		}
		if tt.golden == "protocol-glob.md" {
			if err := os.MkdirAll(filepath.Join(c.hive, "bots", "kevin"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		out := c.ok(tt.args...)
		golden(t, tt.golden, out)
		if n := len(strings.Fields(out)); n >= 400 {
			t.Errorf("%s: %d words, want under 400", tt.golden, n)
		}
		// Deterministic: the same output again.
		if again := c.ok(tt.args...); again != out {
			t.Errorf("%s: a second run printed something else", tt.golden)
		}
		for k := range tt.env {
			delete(c.env, k)
		}
	}
	if _, errs, code := c.run("protocol", "--wing", "../x"); code != exitUsage || !strings.Contains(errs, "not valid") {
		t.Errorf("bad wing: exit %d, %q", code, errs)
	}
}
