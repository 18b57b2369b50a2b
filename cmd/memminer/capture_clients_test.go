package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// The end-to-end tests of capture drive the real clients as the connect
// tests do (connect_clients_test.go): after connect, a session in which
// the user states directives among chatter, and the mock model calls
// memminer's search tool, ends; its SessionEnd hook must have remembered
// the directives in the wing, with their provenance, so that search
// finds them; its Stop hook must have asked the model, once, to record
// what it learned, and the model's remember call must have landed; a
// second session with nothing durable in it captures nothing.

// capturePrompt is what the user says in the first session: two
// durable directives (the second high-risk, for the inbox) among chatter.
const capturePrompt = "Hi! Remember that the staging DB is db-7.\n" +
	"Can you check which server runs the production Postgres?\n" +
	"From now on, never deploy to production on Fridays.\nThanks!"

// checkCaptured checks what the first session left in pam's wing: the
// staging DB in memory, found by search, and the deploy rule in the
// inbox, both with client's provenance; chatter nowhere.
func (h *e2eHive) checkCaptured(client string) map[string]string {
	h.t.Helper()
	dir := filepath.Join(h.hive, "agents", "pam")
	files := hiveFiles(h.t, dir)
	var memory, inbox string
	for p, text := range files {
		switch {
		case filepath.Base(p) == "inbox.md":
			inbox = text
		case strings.HasPrefix(filepath.Base(p), "memory."):
			memory += text
		}
	}
	provenance := "(captured from the user's words: " + client + " session "
	if !strings.Contains(memory, "- The staging DB is db-7. "+provenance) {
		h.t.Errorf("pam's memory lacks the staging DB with its provenance:\n%s", memory)
	}
	if !strings.Contains(inbox, "- From now on, never deploy to production on Fridays. "+provenance) {
		h.t.Errorf("pam's inbox lacks the deploy rule with its provenance:\n%s", inbox)
	}
	for p, text := range files {
		for _, chatter := range []string{"Can you check", "Thanks", "mock answer"} {
			if strings.Contains(text, chatter) {
				h.t.Errorf("%s captured chatter %q:\n%s", p, chatter, text)
			}
		}
	}
	if out := h.memminer("search", "staging DB"); !strings.Contains(out, "The staging DB is db-7. "+provenance) {
		h.t.Errorf("search does not find the captured directive:\n%s", out)
	}
	if out := h.memminer("inbox", "--wing", "pam"); !strings.Contains(out, "never deploy to production on Fridays") || !strings.Contains(out, provenance) {
		h.t.Errorf("the inbox does not show the deploy rule with its provenance:\n%s", out)
	}
	return files
}

// checkAskedOnce checks that the Stop hook's request reached the model in
// exactly one turn of the session, once, and that the note the mock
// model remembered in answer is in pam's memory.
func (h *e2eHive) checkAskedOnce(m *mockModel, callID string) {
	h.t.Helper()
	asked, most := 0, 0
	for _, r := range m.Requests() {
		n := strings.Count(r, askMarker)
		most = max(most, n)
		if n > 0 && !strings.Contains(r, callID) {
			asked++
		}
	}
	if asked != 1 || most != 1 {
		h.t.Errorf("the Stop hook's request reached the model in %d turns, at most %d times in one request; want once", asked, most)
	}
	if out := h.memminer("search", "nightly job WAL archive bucket"); !strings.Contains(out, learnedNote) {
		h.t.Errorf("the note the model remembered on the Stop hook's request is not found:\n%s", out)
	}
}

// checkNothingNew checks that pam's files are still before.
func (h *e2eHive) checkNothingNew(before map[string]string) {
	h.t.Helper()
	after := hiveFiles(h.t, filepath.Join(h.hive, "agents", "pam"))
	if len(after) != len(before) {
		h.t.Errorf("a session with nothing durable changed pam's files: %d files, want %d", len(after), len(before))
	}
	for p, text := range before {
		if after[p] != text {
			h.t.Errorf("a session with nothing durable changed %s:\n%s\nwant:\n%s", p, after[p], text)
		}
	}
}

func TestCaptureClaudeCodeEndToEnd(t *testing.T) {
	bin := agentClientsBin(t)
	h := newE2EHive(t, "claude-code")
	h.memminer(h.connectArgs...)
	m := newMockModel(t, "db-2 primary")
	// One tool call (the mock's search) is substantial work here.
	env := append(h.claudeEnv(m), "MEMMINER_CAPTURE_ASK_AFTER=1")
	runClient(t, h.work, env, filepath.Join(bin, "claude"), "-p", capturePrompt, "--output-format", "json")
	if _, ok := m.firstWith(`"tool_result"`); !ok {
		t.Errorf("the session made no tool call")
	}
	h.checkAskedOnce(m, "toolu_mock2")
	before := h.checkCaptured("claude-code")
	// The second session is asked too, and the mock remembers the same
	// note: the duplicate rule writes nothing.
	runClient(t, h.work, env, filepath.Join(bin, "claude"), "-p", "thanks, that looks good. Can you fix the typo in README.md?", "--output-format", "json")
	h.checkNothingNew(before)
	h.disconnect()
	settings, _ := os.ReadFile(filepath.Join(h.home, ".claude", "settings.json"))
	if strings.Contains(string(settings), "capture --hook") {
		t.Errorf("disconnect left the capture hook:\n%s", settings)
	}
}

func TestCaptureCodexEndToEnd(t *testing.T) {
	bin := agentClientsBin(t)
	h := newE2EHive(t, "codex")
	m := newMockModel(t, "db-2 primary")
	codexHome := filepath.Join(h.home, ".codex")
	testutil.WriteFile(t, filepath.Join(codexHome, "config.toml"), codexOffline(m))
	h.memminer(h.connectArgs...)
	env := append(append([]string(nil), h.env...), "CODEX_HOME="+codexHome, "MOCK_API_KEY=test", "MEMMINER_CAPTURE_ASK_AFTER=1")
	// Codex asks before an MCP tool that writes runs, and exec cannot
	// ask: the user approves memminer's tools in its config.
	codex := func(prompt string) {
		runClient(t, h.work, env, filepath.Join(bin, "codex"), "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", "-c", `mcp_servers.memminer.default_tools_approval_mode="approve"`, prompt)
	}
	codex(capturePrompt)
	if _, ok := m.firstWith(`"function_call_output"`); !ok {
		t.Errorf("the session made no tool call")
	}
	h.checkAskedOnce(m, "call_mock2")
	before := h.checkCaptured("codex")
	codex("thanks, that looks good. Can you fix the typo in README.md?")
	h.checkNothingNew(before)
	h.disconnect()
	hooks, _ := os.ReadFile(filepath.Join(codexHome, "hooks.json"))
	if strings.Contains(string(hooks), "capture --hook") {
		t.Errorf("disconnect left the capture hook:\n%s", hooks)
	}
}
