package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/memminer/memminer/service/api"
)

// TestShow shows a note by hit number, id and FILE:LINE, the same each
// way, with and without the daemon, and through MCP's read_note.
func TestShow(t *testing.T) {
	c := newMinedCLI(t)
	search, _ := c.runRaw("search", "db-2", "--wing", "dwight", "--json")
	var res struct {
		Results []struct {
			ID     string `json:"id"`
			Source string `json:"source"`
			Line   int    `json:"line"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(search), &res); err != nil || len(res.Results) == 0 {
		t.Fatalf("search: %v\n%s", err, search)
	}
	hit := res.Results[0]
	byNumber, _ := c.runRaw("show", "1", "--json")
	for _, ref := range []string{hit.ID, hit.Source + ":" + strconv.Itoa(hit.Line)} {
		if got, _ := c.runRaw("show", ref, "--json"); got != byNumber {
			t.Errorf("show %s:\n%s\nwant (show 1):\n%s", ref, got, byNumber)
		}
	}
	var shown api.ShownNote
	if err := json.Unmarshal([]byte(byNumber), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.ID != hit.ID || shown.Wing != "dwight" || shown.Heading == "" || (shown.Before == nil && shown.After == nil) || shown.History != nil {
		t.Fatalf("show 1: %s", byNumber)
	}
	text, _ := c.runRaw("show", "1")
	golden(t, "show.txt", c.ok("show", "1"))
	if !strings.Contains(text, "[dwight] ") || !strings.Contains(text, "id "+hit.ID) || !strings.Contains(text, "before: ") || !strings.Contains(text, "after: ") {
		t.Fatalf("show 1:\n%s", text)
	}
	cs := connectInMemory(t, newMCPServerFor(t, c, "jim"))
	mres := callTool(t, cs, "read_note", map[string]any{"ref": hit.ID})
	if mres.IsError || resultText(t, mres) != text {
		t.Fatalf("read_note: %s\nwant:\n%s", resultText(t, mres), text)
	}
	if canonicalJSON(t, mres.StructuredContent) != canonicalJSON(t, json.RawMessage(byNumber)) {
		t.Fatalf("read_note JSON differs from show --json")
	}
	startRun(t, c, c.hive)
	if got, _ := c.runRaw("show", hit.ID, "--json"); got != byNumber {
		t.Errorf("with the daemon:\n%s\nwant:\n%s", got, byNumber)
	}
	for _, bad := range [][]string{{"show", "99"}, {"show", "nonsense"}, {"show", "agents/dwight/memory.md:100000"}} {
		if _, stderr, code := c.run(bad...); code == 0 || stderr == "" {
			t.Errorf("%v: exit %d, %q", bad, code, stderr)
		}
	}
}
