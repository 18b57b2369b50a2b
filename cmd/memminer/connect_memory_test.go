package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/memminer/memminer/internal/testutil"
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

	dir := filepath.Join(c.hive, "agents", "pam", "claude-code-memory.laptop")
	out := c.ok("connect", "claude-code", "--wing", "pam", "--dry-run")
	for _, want := range []string{"would copy " + old + " to $HIVE/agents/pam/claude-code-memory.laptop/imported/-src-app/deploys.md\n", `+  "autoMemoryDirectory": "$HIVE/agents/pam/claude-code-memory.laptop"`} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	out = c.ok("connect", "claude-code", "--wing", "pam")
	if !strings.Contains(out, "  imported   memory        $HIVE/agents/pam/claude-code-memory.laptop/imported/-src-app/deploys.md (from "+old+")\n") ||
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
	if err := json.Unmarshal([]byte(c.ok("connect", "claude-code", "--wing", "pam", "--json")), &again); err != nil || len(again.Memory.Imported) != 0 || again.Memory.Unchanged != 1 {
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
