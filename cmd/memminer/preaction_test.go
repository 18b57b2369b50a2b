package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPreActionHook(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	log := filepath.Join(c.hive, "agents", "dwight", "pre-action-log.laptop.md")
	hook := func(command string, env ...string) (string, int) {
		t.Helper()
		in, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "session_id": "s-42", "cwd": "/work/api",
			"tool_name": "Bash", "tool_input": map[string]any{"command": command}})
		out, stderr, code := c.runStdin(string(in), "pre-action", "--hook", "claude-code", "--wing", "dwight")
		if stderr != "" {
			t.Errorf("stderr: %s", stderr)
		}
		return out, code
	}
	// The prompt hook's notes and the pack the wing used last go in.
	c.ok("mine", c.hive)
	c.ok("pack", "new", "deploy", "--use", "wing:dwight")
	c.env["MEMMINER_USER"] = "dwight"
	c.ok("pack", "deploy")
	delete(c.env, "MEMMINER_USER")
	if out, _, _ := c.runStdin(`{"hook_event_name":"UserPromptSubmit","session_id":"s-42","prompt":"which server runs the production Postgres?"}`,
		"recall", "--hook", "claude-code", "--wing", "dwight"); !strings.Contains(out, "Production Postgres runs on db-2") {
		t.Fatalf("recall: %q", out)
	}
	if out, code := hook("git status"); out != "" || code != 0 {
		t.Errorf("harmless: %q exit %d", out, code)
	}
	if _, err := os.Stat(log); !os.IsNotExist(err) {
		t.Errorf("a harmless command was logged: %v", err)
	}
	if out, code := hook("git push --force origin main"); out != "" || code != 0 {
		t.Errorf("high-risk, not blocking: %q exit %d", out, code)
	}
	// Codex gives argv.
	in := `{"hook_event_name":"PreToolUse","session_id":"s-43","cwd":"/work/web","tool_name":"shell","tool_input":{"command":["bash","-lc","rm -rf dist"]}}`
	if out, _, code := c.runStdin(in, "pre-action", "--hook", "codex", "--wing", "dwight"); out != "" || code != 0 {
		t.Errorf("codex: %q exit %d", out, code)
	}
	c.env["MEMMINER_PRE_ACTION_BLOCK"] = "true"
	out, _ := hook("terraform destroy")
	if !strings.Contains(out, `"permissionDecision":"ask"`) {
		t.Errorf("block: %q", out)
	}
	// Gemini CLI's BeforeTool reads a top-level decision, as is: never
	// wrapped as context for the model.
	in = `{"hook_event_name":"BeforeTool","session_id":"s-44","cwd":"/work/web","tool_name":"run_shell_command","tool_input":{"command":"kubectl delete ns web"}}`
	if out, _, _ := c.runStdin(in, "pre-action", "--hook", "gemini", "--wing", "dwight"); !strings.HasPrefix(out, `{"decision":"ask","reason":"memminer: a high-risk command`) {
		t.Errorf("gemini block: %q", out)
	}
	delete(c.env, "MEMMINER_PRE_ACTION_BLOCK")

	// Times are scrubbed to $TIME in c's output.
	var got struct {
		Entries []struct {
			Time, Wing, Session, Cwd, Command, File, Pack string
			Notes                                         []string
		}
	}
	if err := json.Unmarshal([]byte(c.ok("pre-action", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	want := []string{"git push --force origin main", "bash -lc rm -rf dist", "terraform destroy", "kubectl delete ns web"}
	if len(got.Entries) != len(want) {
		t.Fatalf("entries %+v, want %v", got.Entries, want)
	}
	for i, e := range got.Entries {
		if e.Command != want[i] || e.Wing != "dwight" || e.File != "agents/dwight/pre-action-log.laptop.md" {
			t.Errorf("entry %d: %+v", i, e)
		}
	}
	if e := got.Entries[0]; e.Session != "s-42" || e.Cwd != "/work/api" || e.Pack != "deploy" || len(e.Notes) == 0 || !strings.HasPrefix(e.Notes[0], "agents/dwight/memory.md:") {
		t.Errorf("entry 0: %+v", e)
	}
	if e := got.Entries[1]; len(e.Notes) != 0 {
		t.Errorf("entry 1, another session, has notes: %+v", e)
	}
	if out := c.ok("pre-action", "--wing", "pam"); !strings.Contains(out, "no high-risk commands logged") {
		t.Errorf("--wing pam: %s", out)
	}
	// Mined as history: search finds it, wake-up's story never tells it.
	c.ok("mine", c.hive)
	if out := c.ok("search", "terraform destroy"); !strings.Contains(out, "pre-action-log.laptop.md") {
		t.Errorf("search does not find the log:\n%s", out)
	}
	if out := c.ok("wake-up", "--tokens", "4000"); strings.Contains(out, "pre-action-log") || strings.Contains(out, "terraform destroy") {
		t.Errorf("wake-up tells the log:\n%s", out)
	}
}

// TestConnectClaudeCodeLogsPreAction: the real Claude Code runs the
// PreToolUse hook connect installs before its Bash tool, and the
// high-risk command lands in the agent's pre-action log.
func TestConnectClaudeCodeLogsPreAction(t *testing.T) {
	bin := agentClientsBin(t)
	h := newE2EHive(t, "claude-code")
	h.memminer(h.connectArgs...)
	m := newMockModel(t, "db-2 primary")
	const bash = "git push --force origin main"
	m.setBash(bash)
	runClient(t, h.work, h.claudeEnv(m), filepath.Join(bin, "claude"), "-p", "Publish the branch.", "--output-format", "json")
	var got preActionJSON
	if err := json.Unmarshal([]byte(h.memminer("pre-action", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Entries) != 1 || got.Entries[0].Command != bash || got.Entries[0].Wing != "pam" || got.Entries[0].Session == "" || got.Entries[0].Cwd != h.work {
		t.Errorf("pre-action log: %+v; requests:\n%s", got.Entries, strings.Join(m.Requests(), "\n\n"))
	}
	h.disconnect()
}
