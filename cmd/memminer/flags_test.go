package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryCommandTakesTheSameFlags walks the command tree: every command
// that reads or writes the hive or the palace takes --hive, and every
// command whose output a script or an agent reads takes --json. The
// commands that need neither are named here with why, so a new command is
// classed when it is added, and an entry that no longer holds fails. Run
// by a person (no --hook), every command refuses a flag it does not know,
// and a preview is --dry-run: the old --print is hidden.
func TestEveryCommandTakesTheSameFlags(t *testing.T) {
	// noHive touch neither the hive nor the palace.
	noHive := map[string]string{
		"version":        "the binary's version",
		"git":            "a group: it needs a subcommand",
		"model":          "a group: it needs a subcommand",
		"model fetch":    "the model cache",
		"model status":   "the model cache",
		"model verify":   "the model cache",
		"git merge-file": "Git's merge driver: Git names the files",
		"mcp token":      "the HTTP token file",
		"disconnect":     "the client's own files",
		"start":          "the installed service, whose unit names the hive (install --hive)",
		"stop":           "the installed service",
		"restart":        "the installed service",
		"uninstall":      "the installed service",
		"service-status": "the installed service",
	}
	// noJSON print nothing a script parses: a server, a file's text, or an
	// exit status that is the answer.
	noJSON := map[string]string{
		"git":            "a group: it needs a subcommand",
		"model":          "a group: it needs a subcommand",
		"mcp":            "an MCP server on stdio or HTTP",
		"run":            "the daemon",
		"ui":             "a web server",
		"recall":         "the prompt hook's context for the agent (search --json is its JSON)",
		"install":        "writes service files; --dry-run prints them as written",
		"start":          "the exit status (service-status --json tells the state)",
		"stop":           "the exit status (service-status --json tells the state)",
		"restart":        "the exit status (service-status --json tells the state)",
		"uninstall":      "the exit status (service-status --json tells the state)",
		"model fetch":    "the exit status (model status --json tells the state)",
		"mcp token":      "the token alone, as scripts read it",
		"git merge-file": "Git's merge driver, answering with its exit status",
	}
	a := newApp(io.Discard, io.Discard, func(string) string { return "" })
	root := a.rootCmd()
	used := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c == root || !c.Runnable() {
			return
		}
		path := strings.TrimPrefix(c.CommandPath(), "memminer ")
		if path == "help" || strings.HasPrefix(path, "completion") {
			return // cobra's own
		}
		has := func(flag string) bool {
			return c.LocalFlags().Lookup(flag) != nil || c.InheritedFlags().Lookup(flag) != nil
		}
		if c.FParseErrWhitelist.UnknownFlags {
			t.Errorf("memminer %s ignores unknown flags outside hook mode", path)
		}
		if f := c.LocalFlags().Lookup("print"); f != nil && (!f.Hidden || !has("dry-run")) {
			t.Errorf("memminer %s shows --print: a preview is --dry-run", path)
		}
		for _, f := range []struct {
			flag string
			list map[string]string
		}{{"hive", noHive}, {"json", noJSON}} {
			_, exempt := f.list[path]
			switch {
			case exempt && has(f.flag):
				t.Errorf("memminer %s takes --%s: take it out of the list of those without", path, f.flag)
			case !exempt && !has(f.flag):
				t.Errorf("memminer %s has no --%s", path, f.flag)
			}
			used[f.flag+" "+path] = exempt
		}
	}
	walk(root)
	for flag, list := range map[string]map[string]string{"hive": noHive, "json": noJSON} {
		for path := range list {
			if !used[flag+" "+path] {
				t.Errorf("%q, listed as needing no --%s, is no command", path, flag)
			}
		}
	}
}

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

// TestHiveFlagIsTheHive: --hive is the hive of mine without PATH, of the
// names search gives files, of forget's check, and init's DIR, in a hive
// whose agent directories only the agents setting finds.
func TestHiveFlagIsTheHive(t *testing.T) {
	tmp := t.TempDir()
	c := newCLIAt(t, tmp, filepath.Join(tmp, "hive"))
	c.env["MEMMINER_AGENTS"] = "bots/*"
	file := filepath.Join(c.hive, "bots", "robo", "memory.md")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("# Robo\n\n- The staging database is rebuilt every Sunday night.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := c.run("mine"); code != exitUsage || !strings.Contains(stderr, "pass --hive DIR") {
		t.Errorf("mine with no PATH and no hive: exit %d, %s", code, stderr)
	}
	c.ok("mine", "--hive", c.hive)
	source := func(args ...string) string {
		t.Helper()
		var res struct{ Results []struct{ Source string } }
		out := c.ok(append([]string{"search", "staging database rebuilt", "--json"}, args...)...)
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Results) == 0 {
			t.Fatalf("search %v: %v\n%s", args, err, out)
		}
		return res.Results[0].Source
	}
	if got := source("--hive", c.hive); got != "bots/robo/memory.md" {
		t.Errorf("search --hive names the file %q, want it relative to the hive", got)
	}
	if got := source(); got != "$HIVE/bots/robo/memory.md" {
		t.Errorf("search without a hive names the file %q, want its path", got)
	}
	if _, stderr, code := c.run("forget", "--wing", "robo", "--dry-run", "--hive", c.hive); code != exitError || !strings.Contains(stderr, "--force") {
		t.Errorf("forget --hive of a wing whose directory is there: exit %d, %s", code, stderr)
	}
	c.ok("forget", "--wing", "robo", "--dry-run") // no hive: nothing to check

	other := filepath.Join(tmp, "other")
	if _, stderr, code := c.run("init", filepath.Join(tmp, "new"), "--hive", other); code != exitUsage || !strings.Contains(stderr, "give one") {
		t.Errorf("init DIR --hive OTHER: exit %d, %s", code, stderr)
	}
	c.ok("init", "--hive", other)
	if fi, err := os.Stat(filepath.Join(other, "agents")); err != nil || !fi.IsDir() {
		t.Errorf("init --hive made no agents/: %v", err)
	}
}
