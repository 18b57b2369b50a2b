package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSameFlagsEverywhere: the commands a script reads take --json, and
// every command that previews a change takes --dry-run (the old flag word
// still works, hidden from the help).
func TestSameFlagsEverywhere(t *testing.T) {
	c := newPackCLI(t)
	packFile := filepath.Join(c.hive, "packs", "x.md")
	tests := []struct {
		name string
		args []string
		code int
		json bool   // stdout is one JSON object
		has  string // in stdout (or stderr for a failure)
	}{
		{name: "protocol --json", args: []string{"protocol", "--wing", "ops", "--json"}, json: true, has: `"text": "# Memory protocol`},
		{name: "service-status --json", args: []string{"service-status", "--user", "--json"}, json: true, has: `"daemon": "not running"`},
		{name: "pack new --dry-run --json", args: []string{"pack", "new", "x", "--use", "wing:ops", "--dry-run", "--json"}, json: true, has: `"written": false`},
		{name: "pack new --print", args: []string{"pack", "new", "x", "--use", "wing:ops", "--print"}, has: "use:\n  - \"wing:ops\""},
		{name: "install --dry-run", args: []string{"install", "--user", "--dry-run"}, has: "memminer"},
		{name: "install --print", args: []string{"install", "--user", "--print"}, has: "memminer"},
		{name: "conflicts merge --dry-run", args: []string{"conflicts", "merge", "--dry-run"}},
		{name: "conflicts merge --dry-run --apply", args: []string{"conflicts", "merge", "--dry-run", "--apply"}, code: exitUsage, has: "give one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := c.run(tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, errs)
			}
			if tt.json && !json.Valid([]byte(out)) {
				t.Errorf("not JSON:\n%s", out)
			}
			if !strings.Contains(out+errs, tt.has) {
				t.Errorf("output lacks %q:\n%s%s", tt.has, out, errs)
			}
		})
	}
	if _, err := os.Stat(packFile); !os.IsNotExist(err) {
		t.Errorf("a preview wrote %s: %v", packFile, err)
	}
	for _, cmd := range [][]string{{"install"}, {"pack", "new"}} {
		help := c.ok(append(cmd, "--help")...)
		if !strings.Contains(help, "--dry-run") || strings.Contains(help, "--print") {
			t.Errorf("memminer %s --help: want --dry-run and no --print:\n%s", strings.Join(cmd, " "), help)
		}
	}
}

// TestSupersedesTakesEveryRef: remember --supersedes takes a hit number of
// the last search and a unique id prefix, read as show reads them.
func TestSupersedesTakesEveryRef(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	c.ok("mine", c.hive)
	hit := func(query string) (id, path string, line int) {
		t.Helper()
		out, _ := c.runRaw("search", query, "--wing", "dwight", "-n", "1", "--json")
		var res struct {
			Results []struct {
				ID, Path string
				Line     int
			}
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Results) == 0 {
			t.Fatalf("search %q: %v %s", query, err, out)
		}
		r := res.Results[0]
		return r.ID, r.Path, r.Line
	}
	superseded := func(path string, line int) bool {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(strings.Split(string(data), "\n")[line-1], "(superseded ")
	}
	for _, tt := range []struct {
		name, query string
		ref         func(id string) string
	}{
		{"hit number", "pgbouncer max_client_conn", func(string) string { return "1" }},
		{"id prefix", "rate limits per token", func(id string) string { return id[:7] }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id, path, line := hit(tt.query)
			c.ok("remember", "--wing", "dwight", "--supersedes", tt.ref(id), "Replaced: "+tt.query+" changed")
			if !superseded(path, line) {
				t.Errorf("--supersedes %s did not mark %s:%d", tt.ref(id), path, line)
			}
		})
	}
}

// TestRecallSaysADateOnce: a recall line whose note says its date
// ("(added 2026-10-02)") does not say it again after the source.
func TestRecallSaysADateOnce(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	c.ok("mine", c.hive)
	out := c.ok("recall", "pgbouncer transaction mode connection pooling")
	found := false
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "(added 2026-10-02)") {
			found = true
			if n := strings.Count(l, "2026-10-02"); n != 1 {
				t.Errorf("recall line says its date %d times: %s", n, l)
			}
		}
	}
	if !found {
		t.Fatalf("recall does not give the pgbouncer decision:\n%s", out)
	}
}
