package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memminer/memminer/memory/remember"
)

// checkRememberThenFind remembers text through cs (a server for wing jim)
// and finds it with the search tool at once.
func checkRememberThenFind(t *testing.T, cs *mcp.ClientSession, text string) {
	t.Helper()
	res := callTool(t, cs, "remember", map[string]any{"text": text, "tags": []string{"office"}})
	if res.IsError || !strings.HasPrefix(resultText(t, res), "remembered in agents/jim/memory.laptop.md:") {
		t.Fatalf("remember: %s", resultText(t, res))
	}
	found := callTool(t, cs, "search", map[string]any{"query": text, "wing": "jim", "results": 1})
	if found.IsError || !strings.Contains(canonicalJSON(t, found.StructuredContent), "#office") {
		t.Errorf("search right after remember: %s", resultText(t, found))
	}
}

// TestMCPRememberMatchesCLI remembers the same note through MCP in one
// palace and with `memminer remember` in twins: the CLI's JSON in one, its
// text in the other.
func TestMCPRememberMatchesCLI(t *testing.T) {
	viaMCP, viaCLI, viaText := newMinedCLI(t), newMinedCLI(t), newMinedCLI(t)
	cs := connectInMemory(t, newMCPServerFor(t, viaMCP, "jim"))
	steps := []struct {
		args map[string]any
		cli  []string
	}{
		{map[string]any{"text": "The lab printer is on floor 3.", "heading": "Office", "tags": []string{"office"}},
			[]string{"remember", "--wing", "jim", "--heading", "Office", "--tag", "office", "The lab printer is on floor 3."}},
		// A newer fact replacing the first, which is marked superseded.
		{map[string]any{"text": "The lab printer moved to floor 4.", "heading": "Office", "supersedes": []string{"memory.laptop.md:7"}},
			[]string{"remember", "--wing", "jim", "--heading", "Office", "--supersedes", "memory.laptop.md:7", "The lab printer moved to floor 4."}},
	}
	for _, st := range steps {
		res := callTool(t, cs, "remember", st.args)
		if res.IsError {
			t.Fatalf("remember %v: %s", st.args, resultText(t, res))
		}
		wantJSON := viaCLI.stdout(append(st.cli, "--json")...)
		// Each palace has its hive elsewhere: absolute paths are compared
		// as $HIVE/….
		if got, want := viaMCP.scrub(canonicalJSON(t, res.StructuredContent)), viaCLI.scrub(canonicalJSON(t, json.RawMessage(wantJSON))); got != want {
			t.Errorf("remember %v: structured output is not the CLI's --json:\n--- mcp\n%s\n--- cli\n%s", st.args, got, want)
		}
		if got, want := resultText(t, res), viaText.stdout(st.cli...); got != want {
			t.Errorf("remember %v: text %q, want %q", st.args, got, want)
		}
	}
	read := func(c *cli) string {
		data, err := os.ReadFile(filepath.Join(c.hive, "agents", "jim", "memory.laptop.md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	if got, want := read(viaMCP), read(viaCLI); got != want || !strings.Contains(got, "- The lab printer is on floor 3. #office (added ") || !strings.Contains(got, "(superseded ") {
		t.Errorf("jim's memory.md through MCP:\n%s\nthrough the CLI:\n%s", got, want)
	}
}

// TestMCPRememberRefuses: a wing with a conflict copy, a bad note, another
// wing and a server without a wing write nothing, and say why.
func TestMCPRememberRefuses(t *testing.T) {
	c := newMinedCLI(t)
	memory := func(wing string) string {
		data, _ := os.ReadFile(filepath.Join(c.hive, "agents", wing, "memory.md"))
		mine, _ := os.ReadFile(filepath.Join(c.hive, "agents", wing, "memory.laptop.md"))
		return string(data) + string(mine)
	}
	before := map[string]string{"dwight": memory("dwight"), "pam": memory("pam"), "jim": memory("jim")}
	dwight := connectInMemory(t, newMCPServerFor(t, c, "dwight"))
	jim := connectInMemory(t, newMCPServerFor(t, c, "jim"))
	nobody := connectInMemory(t, newMCPServerFor(t, c, ""))
	tests := []struct {
		cs   *mcp.ClientSession
		args map[string]any
		want []string
	}{
		{dwight, map[string]any{"text": "a fact"}, []string{"open conflict", "memory.sync-conflict-20240131-093000-ABCDEFG.md", "nothing written", "conflicts tool"}},
		{jim, map[string]any{"text": "   "}, []string{"nothing written"}},
		{jim, map[string]any{"text": strings.Repeat("long ", remember.DefaultMaxNoteBytes/4)}, []string{"nothing written"}},
		{jim, map[string]any{"text": "a fact", "expect_hash": "sha256:0000"}, []string{"nothing written", "read the file again"}},
		{jim, map[string]any{"text": "a fact", "wing": "pam"}, []string{"wing"}},
		{jim, map[string]any{"text": "a fact", "force": true}, []string{"force"}},
		// Worded without the CLI's flag, which an MCP client does not have.
		{jim, map[string]any{"text": "a fact", "supersedes": []string{"nosuch"}}, []string{`supersedes "nosuch": want a note id (search gives each note's)`, "nothing written"}},
		{nobody, map[string]any{"text": "a fact"}, []string{"needs this server's wing", "--wing ID"}},
	}
	for _, tt := range tests {
		res := callTool(t, tt.cs, "remember", tt.args)
		text := resultText(t, res)
		for _, w := range tt.want {
			if !res.IsError || !strings.Contains(text, w) {
				t.Errorf("remember %v: error %t %q, want an error with %q", tt.args, res.IsError, text, w)
			}
		}
	}
	for wing, was := range before {
		if memory(wing) != was {
			t.Errorf("%s's memory.md changed:\n%s", wing, memory(wing))
		}
	}
}

// TestMCPRememberSupersedesByIDPrefix: over MCP, supersedes takes a unique
// prefix of a note id, as --supersedes does, resolved by resolveRef; a
// number is no hit of the last search there (an MCP client's searches are
// not recorded), and is refused.
func TestMCPRememberSupersedesByIDPrefix(t *testing.T) {
	c := newMinedCLI(t)
	cs := connectInMemory(t, newMCPServerFor(t, c, "jim"))
	c.ok("search", "db-2") // a last search, which MCP must not use
	first := callTool(t, cs, "remember", map[string]any{"text": "The lab printer is on floor 3."})
	var res remember.Result
	if err := json.Unmarshal([]byte(canonicalJSON(t, first.StructuredContent)), &res); err != nil || first.IsError || len(res.ID) < 8 {
		t.Fatalf("remember: %v %s", err, resultText(t, first))
	}
	if r := callTool(t, cs, "remember", map[string]any{"text": "The lab printer moved to floor 5.", "supersedes": []string{"1"}}); !r.IsError || !strings.Contains(resultText(t, r), "nothing written") {
		t.Errorf("supersedes 1 over MCP: error %t, %s", r.IsError, resultText(t, r))
	}
	r := callTool(t, cs, "remember", map[string]any{"text": "The lab printer moved to floor 4.", "supersedes": []string{res.ID[:8]}})
	if r.IsError {
		t.Fatalf("supersedes %s: %s", res.ID[:8], resultText(t, r))
	}
	data, err := os.ReadFile(filepath.Join(c.hive, filepath.FromSlash(res.File)))
	if err != nil || !strings.Contains(string(data), "- The lab printer is on floor 3. (added ") || !strings.Contains(string(data), "(superseded ") {
		t.Errorf("the first note is not marked superseded: %v\n%s", err, data)
	}
	if strings.Contains(string(data), "floor 5") {
		t.Errorf("supersedes 1 wrote:\n%s", data)
	}
}
