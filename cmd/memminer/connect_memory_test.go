package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/secrets/secretstest"
)

// TestConnectClaudeMemoryCLI: with a hive, connect claude-code points
// Claude Code's auto memory at the wing's claude-code-memory.<machine>/
// and copies what it remembered before there; a mine then finds those
// notes from any wing, as Claude Code's.
func TestConnectClaudeMemoryCLI(t *testing.T) {
	useConnectExe(t, "/usr/local/bin/memminer")
	c := newCLI(t)
	home := c.env["HOME"]
	c.env["MEMMINER_HIVE"] = c.hive
	old := filepath.Join(home, ".claude", "projects", "-src-app", "memory", "deploys.md")
	testutil.WriteFile(t, old, "---\nname: deploys\ntype: project\n---\nThe staging cluster is rebuilt every Sunday night by the zamboni job.\n")
	// A file with a secret is copied with it hidden; one not .md is not.
	ci := filepath.Join(filepath.Dir(old), "ci.md")
	testutil.WriteFile(t, ci, secretstest.Ten()[1].Note+"\n")
	scratch := filepath.Join(filepath.Dir(old), "scratch.txt")
	testutil.WriteFile(t, scratch, "not memory\n")

	dir := filepath.Join(c.hive, "agents", "pam", "claude-code-memory.laptop")
	out := c.ok("connect", "claude-code", "--wing", "pam", "--dry-run")
	for _, want := range []string{"would copy " + old + " to $HIVE/agents/pam/claude-code-memory.laptop/imported/-src-app/deploys.md\n",
		"would copy " + ci + " to $HIVE/agents/pam/claude-code-memory.laptop/imported/-src-app/ci.md; secrets hidden: 1\n",
		"would skip " + scratch + ": not a .md file\n", `+  "autoMemoryDirectory": "$HIVE/agents/pam/claude-code-memory.laptop"`} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	out = c.ok("connect", "claude-code", "--wing", "pam")
	if !strings.Contains(out, "  imported   memory        $HIVE/agents/pam/claude-code-memory.laptop/imported/-src-app/deploys.md (from "+old+")\n") ||
		!strings.Contains(out, "  imported   memory        $HIVE/agents/pam/claude-code-memory.laptop/imported/-src-app/ci.md (from "+ci+"; secrets hidden: 1)\n") ||
		!strings.Contains(out, "  skipped    memory        "+scratch+" (not a .md file)\n") ||
		!strings.Contains(out, "claude-code keeps its own memory in the hive: $HIVE/agents/pam/claude-code-memory.laptop (autoMemoryDirectory in "+filepath.Join(home, ".claude", "settings.json")+")\n") {
		t.Errorf("connect:\n%s", out)
	}
	if got := gjson.Get(testutil.ReadFile(t, filepath.Join(home, ".claude", "settings.json")), "autoMemoryDirectory").String(); got != dir {
		t.Errorf("autoMemoryDirectory = %q, want %q", got, dir)
	}
	var again struct {
		Memory struct {
			Imported  []any
			Unchanged int
		}
	}
	if err := json.Unmarshal([]byte(c.ok("connect", "claude-code", "--wing", "pam", "--json")), &again); err != nil || len(again.Memory.Imported) != 0 || again.Memory.Unchanged != 2 {
		t.Errorf("connect again --json: %+v %v", again, err)
	}

	c.ok("mine", c.hive)
	var res struct {
		Results []struct{ Wing, Agent, Source, Text string }
	}
	if err := json.Unmarshal([]byte(c.ok("search", "--json", "--wing", "pam", "when is staging rebuilt by zamboni")), &res); err != nil || len(res.Results) == 0 {
		t.Fatalf("search: %+v %v", res, err)
	}
	if r := res.Results[0]; r.Wing != "pam" || r.Agent != "claude-code" || !strings.Contains(r.Text, "zamboni") {
		t.Errorf("first hit: %+v", r)
	}

	// connect created settings.json: disconnect deletes it.
	c.ok("disconnect", "claude-code")
	if _, err := os.Stat(filepath.Join(home, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Errorf("settings.json after disconnect: %v", err)
	}
	if testutil.ReadFile(t, old) == "" || testutil.ReadFile(t, filepath.Join(dir, "imported", "-src-app", "deploys.md")) == "" {
		t.Error("disconnect removed memory")
	}
}

// TestConnectClaudeCodeMemoryEndToEnd drives the real Claude Code after
// connect: it loads its auto memory from the hive's folder (the index
// connect wrote over what it remembered before), and when the model
// saves a memory there with its Write tool, a mine makes it found by a
// search from another wing, as Claude Code's note of wing pam.
func TestConnectClaudeCodeMemoryEndToEnd(t *testing.T) {
	bin := agentClientsBin(t, "claude")
	h := newE2EHive(t, "claude-code")
	h.env = append(h.env, "MEMMINER_MACHINE=laptop")
	settings := filepath.Join(h.home, ".claude", "settings.json")
	testutil.WriteFile(t, settings, "{\n  \"includeCoAuthoredBy\": false\n}\n")
	before := filepath.Join(h.home, ".claude", "projects", "-work-app", "memory", "MEMORY.md")
	const oldFact = "- The app's integration tests need the oyster-queue container running.\n"
	testutil.WriteFile(t, before, oldFact)
	h.connect(settings)
	dir := filepath.Join(h.hive, "agents", "pam", "claude-code-memory.laptop")
	if got := testutil.ReadFile(t, filepath.Join(dir, "imported", "-work-app", "MEMORY.md")); got != oldFact {
		t.Errorf("imported MEMORY.md = %q", got)
	}

	m := newMockModel(t, "db-2 primary")
	saved := filepath.Join(dir, "release_ferry.md")
	const fact = "The release ferry leaves from platform nine every Thursday at noon."
	m.setWrite(saved, "---\nname: release ferry\ndescription: when releases ship\ntype: project\n---\n"+fact+"\n")
	out := runClient(t, h.work, h.claudeEnv(m), filepath.Join(bin, "claude"), "-p", "Remember when the release ferry leaves.", "--output-format", "json")
	if !strings.Contains(out, "mock answer") {
		t.Errorf("claude -p: %s", out)
	}
	// Claude Code loaded its memory from the hive: the index connect
	// wrote, linking what it remembered before.
	if _, ok := m.firstWith("imported/-work-app/MEMORY.md"); !ok {
		t.Errorf("no request held the memory index of %s", dir)
	}
	if got, err := os.ReadFile(saved); err != nil || !strings.Contains(string(got), fact) {
		t.Fatalf("Claude Code did not save its memory in the hive: %q, %v\nrequests:\n%s", got, err, strings.Join(m.Requests(), "\n\n"))
	}

	h.memminer("mine", h.hive)
	for _, query := range []string{"when does the release ferry leave", "oyster-queue container integration tests"} {
		cmd := []string{"search", "--json", "--wing", "dwight", "--wing", "pam", query}
		var res struct {
			Results []struct{ Wing, Agent, Text string }
		}
		if err := json.Unmarshal([]byte(h.memminer(cmd...)), &res); err != nil || len(res.Results) == 0 {
			t.Fatalf("search %q: %+v %v", query, res, err)
		}
		if r := res.Results[0]; r.Wing != "pam" || r.Agent != "claude-code" {
			t.Errorf("search %q: first hit %+v, want Claude Code's note of wing pam", query, r)
		}
	}

	h.disconnect()
	h.checkRestored(settings)
	if got := testutil.ReadFile(t, before); got != oldFact {
		t.Errorf("%s after disconnect: %q", before, got)
	}
}
