package main

import (
	"encoding/json"
	"html"
	"net/http"
	"strings"
	"testing"
)

// TestUINote: a note's page shows what show --history says of it: its
// heading path, the notes before and after it in its file, its governance
// and, in a Git work tree, the commits that touched it; outside one it
// says there is no history; a ref that names no note is a 404.
func TestUINote(t *testing.T) {
	idOf := func(t *testing.T, c *cli, ref string) string {
		t.Helper()
		out, _ := c.runRaw("show", ref, "--hive", c.hive, "--json")
		var n struct{ ID string }
		if err := json.Unmarshal([]byte(out), &n); err != nil || n.ID == "" {
			t.Fatalf("show %s --json: %v %s", ref, err, out)
		}
		return n.ID
	}
	t.Run("git", func(t *testing.T) {
		c := gitHives(t, 1)[0]
		c.ok("mine", c.hive)
		id := idOf(t, c, "agents/dwight/memory.md:5")
		code, body := uiGet(t, newUIFor(t, c), "/memory/note?ref="+id)
		for _, want := range []string{
			`<p class="heading-path">Dwight &gt; Facts</p>`,
			`<pre class="text">Beets are the best crop.</pre>`,
			`<p class="muted">the file's first note</p>`,
			`<pre class="text">Bears eat beets.</pre>`,
			`written by <strong>dwight</strong> in wing dwight, agents/dwight/memory.md line 5`,
			`<td>Test</td><td>seed</td>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("GET /memory/note: %d, no %s in:\n%s", code, want, body)
			}
		}
		if code != http.StatusOK || strings.Contains(body, "No Git history") {
			t.Errorf("GET /memory/note: %d\n%s", code, body)
		}
	})
	t.Run("no git, an inbox note", func(t *testing.T) {
		c := newPackCLI(t)
		c.ok("remember", "--wing", "ops", "--risk", "high", hostile)
		out, _ := c.runRaw("inbox", "--json")
		var inbox struct{ Items []struct{ Ref string } }
		if err := json.Unmarshal([]byte(out), &inbox); err != nil || len(inbox.Items) != 1 {
			t.Fatalf("inbox --json: %v %s", err, out)
		}
		items := inbox.Items
		h := newUIFor(t, c)
		code, body := uiGet(t, h, "/memory/note?ref="+items[0].Ref)
		for _, want := range []string{
			html.EscapeString(hostile),
			`<td>verified, <span class="tag risk-high">high risk</span></td>`,
			`<p class="muted">No Git history: agents/ops/inbox.md is not in a Git work tree</p>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("GET /memory/note: %d, no %s in:\n%s", code, want, body)
			}
		}
		if code != http.StatusOK || strings.Contains(body, "<script>alert") {
			t.Errorf("GET /memory/note: %d\n%s", code, body)
		}
		if code, body := uiGet(t, h, "/memory/note?ref=0123456789abcdef0123456789abcdef"); code != http.StatusNotFound || !strings.Contains(body, "no such note") {
			t.Errorf("an unknown note: %d\n%s", code, body)
		}
	})
}
