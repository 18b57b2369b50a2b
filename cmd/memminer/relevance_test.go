package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/service/api"
)

// TestNothingRelevant: a query about what the hive does not hold (an
// identifier no note has, nonsense words) finds nothing relevant the same
// way directly, through the daemon's socket and over MCP: exit 1 and
// "no matching notes", `"results": []` in JSON, and an answer (not a tool
// error) over MCP; a query the hive holds still finds its note.
func TestNothingRelevant(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	c.ok("mine", c.hive)
	queries := []string{"JIRA-1234", "ECONNREFUSED from the API gateway", "xyzzyplugh frobnicate"}
	check := func(how string) {
		t.Helper()
		for _, q := range queries {
			out, stderr, code := c.run("search", q)
			if code != exitError || out != "no matching notes\n" || stderr != "" {
				t.Errorf("%s: search %q: exit %d, %q %q; want exit %d, no matching notes", how, q, code, out, stderr, exitError)
			}
			out, stderr, code = c.run("search", q, "--json")
			var res api.SearchResult
			if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitError || stderr != "" || res.Results == nil || len(res.Results) != 0 || !strings.Contains(out, `"results": []`) {
				t.Errorf("%s: search %q --json: exit %d, %q %q (%v)", how, q, code, out, stderr, err)
			}
		}
		if out := c.ok("search", "pgbouncer max_client_conn", "-n", "1"); !strings.Contains(out, "ECONNRESET") {
			t.Errorf("%s: the note the hive holds is not found:\n%s", how, out)
		}
	}
	check("directly")
	cs := connectInMemory(t, newMCPServerFor(t, c, "jim"))
	checkMCP := func(how string) {
		t.Helper()
		for _, q := range queries {
			res := callTool(t, cs, "search", map[string]any{"query": q})
			got, _ := json.Marshal(res.StructuredContent)
			if res.IsError || !strings.Contains(string(got), `"results":[]`) || resultText(t, res) != "no matching notes\n" {
				t.Errorf("%s: MCP search %q: error %v, %s, text %q", how, q, res.IsError, got, resultText(t, res))
			}
		}
	}
	checkMCP("over MCP")
	emptyHive := filepath.Join(filepath.Dir(c.palace), "empty-hive", "agents")
	if err := os.MkdirAll(emptyHive, 0o755); err != nil {
		t.Fatal(err)
	}
	startRun(t, c, filepath.Dir(emptyHive))
	check("through the daemon")
	checkMCP("over MCP through the daemon")
}
