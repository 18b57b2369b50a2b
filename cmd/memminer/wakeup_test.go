package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

// wakeupGolden compares got with testdata/wakeup/name.
func wakeupGolden(t *testing.T, name, got string) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", "wakeup", name), got, *update)
}

// minedCLI is a CLI whose palace holds the example hive, mined with fixed
// mtimes so that digests do not depend on the day the test runs.
func minedCLI(t *testing.T) *cli {
	t.Helper()
	c := newCLI(t)
	when := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	err := filepath.WalkDir(c.hive, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(path, when, when)
	})
	if err != nil {
		t.Fatal(err)
	}
	c.ok("mine", c.hive)
	c.serve(t)
	return c
}

func TestWakeupGolden(t *testing.T) {
	c := minedCLI(t)
	tests := []struct {
		golden string
		args   []string
	}{
		{"wake-up.md", []string{"wake-up"}},
		{"wake-up-200.md", []string{"wake-up", "--tokens", "200"}},
		{"wake-up-wing.md", []string{"wakeup", "--wing", "Dwight", "--tokens", "300"}},
		{"wake-up.json", []string{"wake-up", "--tokens", "250", "--json"}},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			first := c.ok(tt.args...)
			if again := c.ok(tt.args...); again != first {
				t.Errorf("second run differs:\n%s\n--- first\n%s", again, first)
			}
			wakeupGolden(t, tt.golden, first)
		})
	}
}

func TestWakeupJSONShape(t *testing.T) {
	c := minedCLI(t)
	out := c.ok("wake-up", "--json")
	var d struct {
		Identity []map[string]any `json:"identity"`
		Story    []map[string]any `json:"story"`
		Tokens   *int             `json:"tokens"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("decode: %v\n%s", err, out)
	}
	if len(d.Identity) != 4 || len(d.Story) == 0 || d.Tokens == nil || *d.Tokens <= 0 || *d.Tokens > 800 {
		t.Fatalf("identity %d lines, story %d items, tokens %v:\n%s", len(d.Identity), len(d.Story), d.Tokens, out)
	}
	for _, id := range d.Identity {
		for _, k := range []string{"wing", "text"} {
			if s, ok := id[k].(string); !ok || s == "" {
				t.Errorf("identity entry without %q: %v", k, id)
			}
		}
	}
	for _, it := range d.Story {
		for _, k := range []string{"wing", "text", "source"} {
			if s, ok := it[k].(string); !ok || s == "" {
				t.Errorf("story item without %q: %v", k, it)
			}
		}
		for _, k := range []string{"line", "score"} {
			if _, ok := it[k].(float64); !ok {
				t.Errorf("story item without numeric %q: %v", k, it)
			}
		}
		comps, ok := it["components"].(map[string]any)
		if !ok {
			t.Errorf("story item without components: %v", it)
			continue
		}
		for _, k := range []string{"recency", "markers", "centrality", "corroboration", "stale", "redundancy"} {
			if _, ok := comps[k].(float64); !ok {
				t.Errorf("components without %q: %v", k, comps)
			}
		}
	}
}

func TestWakeupErrors(t *testing.T) {
	c := minedCLI(t)
	empty := newCLI(t)
	tests := []struct {
		name   string
		c      *cli
		args   []string
		code   int
		stderr []string
	}{
		{"empty palace", empty, []string{"wake-up"}, exitError, []string{"has no notes yet", "memminer mine"}},
		{"missing palace", empty, []string{"wake-up", "--palace", filepath.Join(empty.hive, "no-such-palace")}, exitError, []string{"has no notes yet", "memminer mine"}},
		{"unknown wing", c, []string{"wake-up", "--wing", "michael"}, exitUsage, []string{`unknown wing "michael"`, "known wings: angela, dwight, jim, pam"}},
		{"invalid wing", c, []string{"wake-up", "--wing", "../x"}, exitUsage, []string{"--wing"}},
		{"budget too small", c, []string{"wake-up", "--tokens", "5"}, exitUsage, []string{"--tokens must be at least 100"}},
		{"arguments", c, []string{"wake-up", "now"}, exitUsage, []string{"wake-up takes no arguments"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := tt.c.run(tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.code, errs)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(errs, s) {
					t.Errorf("stderr %q does not say %q", errs, s)
				}
			}
		})
	}
}

// TestWakeupThroughDaemon checks that a digest served by the daemon is the
// digest computed directly, byte for byte, errors included.
func TestWakeupThroughDaemon(t *testing.T) {
	c := minedCLI(t)
	// The hive is configured: the daemon below mines another (empty) one,
	// whose hive a command given none would take.
	c.env["MEMMINER_HIVE"] = c.hive
	direct := map[string][3]string{}
	cases := [][]string{
		{"wake-up"},
		{"wake-up", "--tokens", "200", "--wing", "pam"},
		{"wake-up", "--json"},
		{"wake-up", "--wing", "michael"},
	}
	key := func(args []string) string { return strings.Join(args, " ") }
	for _, args := range cases {
		out, errs, code := c.run(args...)
		direct[key(args)] = [3]string{out, errs, string(rune('0' + code))}
	}
	emptyHive := filepath.Join(t.TempDir(), "empty-hive")
	if err := os.MkdirAll(emptyHive, 0o755); err != nil {
		t.Fatal(err)
	}
	startRun(t, c, emptyHive)
	for _, args := range cases {
		out, errs, code := c.run(args...)
		got := [3]string{out, errs, string(rune('0' + code))}
		if want := direct[key(args)]; got != want {
			t.Errorf("memminer %s through the daemon:\n%q\n--- directly:\n%q", key(args), got, want)
		}
		// And --no-daemon still computes it directly while the daemon runs.
		out, _, _ = c.run(append([]string{"--no-daemon"}, args...)...)
		if out != direct[key(args)][0] {
			t.Errorf("memminer --no-daemon %s differs from the direct run", key(args))
		}
	}
}

// The minimum --tokens that wake-up refuses below is in its help.
func TestWakeupTokensMinimumInHelp(t *testing.T) {
	c := newCLI(t)
	help := strings.Join(strings.Fields(c.ok("wake-up", "--help")), " ")
	if !strings.Contains(help, fmt.Sprintf("(at least %d)", minWakeupTokens)) {
		t.Fatalf("wake-up --help does not give the minimum:\n%s", help)
	}
	_, stderr, code := c.run("wake-up", "--tokens", fmt.Sprint(minWakeupTokens-1))
	if code != exitUsage || !strings.Contains(stderr, fmt.Sprintf("at least %d", minWakeupTokens)) {
		t.Fatalf("exit %d, %q", code, stderr)
	}
}
