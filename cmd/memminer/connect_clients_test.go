package main

import (
	"bytes"

	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/recall/wakeup"
)

// The end-to-end tests of memminer connect drive the real agent clients,
// installed by .ci/setup-agent-clients.sh, against mockModel: after
// connect, a non-interactive session must send the model the wing's
// wake-up digest and the prompt hook's notes, and a search the model calls
// must reach memminer mcp and its result the model; disconnect must leave
// the files as they were.

// agentClientsBin is the directory holding the agent clients' commands:
// those named, or claude and codex.
func agentClientsBin(t *testing.T, commands ...string) string {
	t.Helper()
	if len(commands) == 0 {
		commands = []string{"claude", "codex"}
	}
	dir := os.Getenv("MEMMINER_AGENT_CLIENTS_DIR")
	if dir == "" {
		if cache, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(cache, "memminer", "agent-clients")
		}
	}
	bin := filepath.Join(dir, "node_modules", ".bin")
	for _, c := range commands {
		if _, err := os.Stat(filepath.Join(bin, c)); err == nil {
			continue
		}
		if os.Getenv("CI") != "" {
			t.Fatalf("the agent clients are missing from %s; run .ci/setup-agent-clients.sh", bin)
		}
		t.Skipf("the agent clients are missing from %s; run .ci/setup-agent-clients.sh", bin)
	}
	return bin
}

// e2eHive is a mined hive, a memminer binary and a home for one client.
type e2eHive struct {
	t                *testing.T
	exe, home, hive  string
	palace, work     string
	env              []string
	handoffRef       string
	connectArgs      []string
	beforeConnect    map[string]string
	connectedAgentID string
}

func newE2EHive(t *testing.T, agent string) *e2eHive {
	t.Helper()
	tmp := t.TempDir()
	h := &e2eHive{t: t, exe: filepath.Join(tmp, "bin", "memminer"), home: filepath.Join(tmp, "home"),
		hive: filepath.Join(tmp, "hive"), palace: filepath.Join(tmp, "palace"), work: filepath.Join(tmp, "work"), connectedAgentID: agent}
	build := exec.Command("go", "build", "-o", h.exe, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	testutil.CopyDir(t, filepath.Join("..", "..", "examples", "hive"), h.hive)
	for _, d := range []string{h.home, h.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h.env = []string{"HOME=" + h.home, "PATH=" + os.Getenv("PATH"), "XDG_RUNTIME_DIR=" + filepath.Join(tmp, "run"),
		"XDG_CONFIG_HOME=" + filepath.Join(tmp, "config"), "XDG_STATE_HOME=" + filepath.Join(tmp, "state")}
	h.memminer("mine", h.hive)
	var res handoffResult
	out := h.memminer("handoff", "--json", "--wing", "dwight", "--to", "pam",
		"Finish the db-2 failover runbook; the draft is in ops/failover.md")
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	h.handoffRef = res.Ref
	h.connectArgs = []string{"connect", agent, "--wing", "pam", "--hive", h.hive, "--palace", h.palace, "--model", "lexical"}
	return h
}

func (h *e2eHive) memminer(args ...string) string {
	h.t.Helper()
	cmd := exec.Command(h.exe, args...)
	// The clients run without these: connect writes them into the hooks.
	cmd.Env = append(h.env, "MEMMINER_HIVE="+h.hive, "MEMMINER_PALACE_PATH="+h.palace, "MEMMINER_EMBEDDING_MODEL=lexical")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		h.t.Fatalf("memminer %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// connect connects the agent and checks that connecting again and
// disconnecting and connecting once more change what they should: nothing,
// everything back, the same again.
func (h *e2eHive) connect(files ...string) connectResultJSON {
	h.t.Helper()
	h.beforeConnect = snapshot(h.t, files)
	var first, again connectResultJSON
	json.Unmarshal([]byte(h.memminer(append(h.connectArgs, "--json")...)), &first)
	json.Unmarshal([]byte(h.memminer(append(h.connectArgs, "--json")...)), &again)
	for _, f := range again.Files {
		if f.Action != "unchanged" {
			h.t.Errorf("connecting twice changed %s (%s)", f.Path, f.Action)
		}
	}
	h.disconnect()
	h.checkRestored(files...)
	h.memminer(h.connectArgs...)
	return first
}

// disconnect disconnects the agent from the scope connectArgs named.
func (h *e2eHive) disconnect() {
	h.t.Helper()
	args := []string{"disconnect", h.connectedAgentID}
	for i, a := range h.connectArgs {
		if a == "--project" {
			args = append(args, "--project", h.connectArgs[i+1])
		}
	}
	h.memminer(args...)
}

// checkRestored checks that files are as they were before connect.
func (h *e2eHive) checkRestored(files ...string) {
	h.t.Helper()
	after := snapshot(h.t, files)
	for _, f := range files {
		if after[f] != h.beforeConnect[f] {
			h.t.Errorf("%s after disconnect:\n%s\nwant:\n%s", f, after[f], h.beforeConnect[f])
		}
	}
}

type connectResultJSON struct {
	Files []struct{ Path, Role, Action string }
}

// snapshot reads files; a missing one is "<missing>".
func snapshot(t *testing.T, files []string) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			out[f] = "<missing>"
			continue
		}
		out[f] = string(b)
	}
	return out
}

// findToolResult returns the field of the first object of type (or role)
// kind, or under the key kind, in a recorded request's JSON body ("PATH
// BODY"), as a string.
func findToolResult(req, kind, field string) string {
	_, body, _ := strings.Cut(req, " ")
	var v any
	if json.Unmarshal([]byte(body), &v) != nil {
		return ""
	}
	var walk func(v any) (string, bool)
	walk = func(v any) (string, bool) {
		switch x := v.(type) {
		case map[string]any:
			if inner, ok := x[kind].(map[string]any); ok {
				b, _ := json.Marshal(inner[field])
				return string(b), true
			}
			if x["type"] == kind || x["role"] == kind {
				if s, ok := x[field].(string); ok {
					return s, true
				}
				b, _ := json.Marshal(x[field])
				return string(b), true
			}
			for _, e := range x {
				if s, ok := walk(e); ok {
					return s, true
				}
			}
		case []any:
			for _, e := range x {
				if s, ok := walk(e); ok {
					return s, true
				}
			}
		}
		return "", false
	}
	s, _ := walk(v)
	return s
}

// checkModelSaw checks what the client sent the mock model: the digest
// with the handoff, the prompt hook's notes, and memminer's search result
// after the tool call. It returns the tool result as the model got it.
func (h *e2eHive) checkModelSaw(m *mockModel, kind, field string) string {
	h.t.Helper()
	if _, ok := m.firstWith("Wake-up digest of the hive", h.handoffRef, "Finish the db-2 failover runbook"); !ok {
		h.t.Errorf("no request held the wake-up digest with handoff %s; requests:\n%s", h.handoffRef, strings.Join(m.Requests(), "\n\n"))
	}
	if _, ok := m.firstWith("Notes from the hive", "Production Postgres runs on db-2"); !ok {
		h.t.Errorf("no request held the prompt hook's notes")
	}
	if _, ok := m.firstWith("# Memory protocol", "Your wing: `pam`"); !ok {
		h.t.Errorf("no request held the memory protocol from the instructions file")
	}
	for _, r := range m.Requests() {
		if got := findToolResult(r, kind, field); strings.Contains(got, "Production Postgres runs on db-2") {
			return got
		}
	}
	if d := os.Getenv("MEMMINER_E2E_DUMP"); d != "" {
		os.WriteFile(d, []byte(strings.Join(m.Requests(), "\n\n")), 0o644)
	}
	h.t.Errorf("no request held memminer's search result")
	return ""
}

// claudeEnv is Claude Code's offline environment (../shared/AGENT-CLIENTS.md).
func (h *e2eHive) claudeEnv(m *mockModel) []string {
	return append(append([]string(nil), h.env...), "ANTHROPIC_BASE_URL="+m.URL, "ANTHROPIC_API_KEY=test", "DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
}

func runClient(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := testutil.WaitContext(t)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, nil
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\nstdout: %s\nstderr: %s", filepath.Base(name), err, out, stderr.String())
	}
	return string(out)
}

func TestConnectClaudeCodeEndToEnd(t *testing.T) {
	bin := agentClientsBin(t)
	h := newE2EHive(t, "claude-code")
	settings := filepath.Join(h.home, ".claude", "settings.json")
	instructions := filepath.Join(h.home, ".claude", "CLAUDE.md")
	state := filepath.Join(h.home, ".claude.json")
	testutil.WriteFile(t, settings, "{\n  \"includeCoAuthoredBy\": false,\n  \"env\": {\"MY_TOOL\": \"1\"}\n}\n")
	testutil.WriteFile(t, instructions, "# House rules\n\nBe brief.\n")
	h.connect(settings, instructions, state)

	m := newMockModel(t, "db-2 primary")
	out := runClient(t, h.work, h.claudeEnv(m), filepath.Join(bin, "claude"), "-p", "Which server runs the production Postgres?", "--output-format", "json")
	var res struct {
		IsError bool `json:"is_error"`
		Result  string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.IsError || !strings.Contains(res.Result, "mock answer") {
		t.Errorf("claude -p: %v %s", err, out)
	}
	got := h.checkModelSaw(m, "tool_result", "content")
	t.Logf("search result as Claude Code hands it to the model: %d hits, %d bytes, %d tokens (wake-up's estimate)", strings.Count(got, `"text"`), len(got), wakeup.EstimateTokens(got))

	h.disconnect()
	h.checkRestored(settings, instructions)
	b, _ := os.ReadFile(state)
	if bytes.Contains(b, []byte(`"memminer"`)) {
		t.Errorf("~/.claude.json still names memminer:\n%s", b)
	}
}

// TestConnectClaudeCodeProjectEndToEnd connects a project's files
// (--project): .claude/settings.json, .mcp.json and CLAUDE.md. Claude Code
// applies a project's permission rules (the allowed MCP tools) only in a
// project the user trusts; the test trusts it as the interactive trust
// dialog would, in ~/.claude.json, which connect does not touch here.
func TestConnectClaudeCodeProjectEndToEnd(t *testing.T) {
	bin := agentClientsBin(t)
	h := newE2EHive(t, "claude-code")
	trusted, _ := json.Marshal(map[string]any{"projects": map[string]any{h.work: map[string]any{"hasTrustDialogAccepted": true}}})
	testutil.WriteFile(t, filepath.Join(h.home, ".claude.json"), string(trusted))
	h.connectArgs = append(h.connectArgs, "--project", h.work)
	settings := filepath.Join(h.work, ".claude", "settings.json")
	mcpJSON, instructions := filepath.Join(h.work, ".mcp.json"), filepath.Join(h.work, "CLAUDE.md")
	testutil.WriteFile(t, mcpJSON, `{"mcpServers": {}}`+"\n")
	testutil.WriteFile(t, instructions, "# Project rules\n")
	h.connect(settings, mcpJSON, instructions)

	m := newMockModel(t, "db-2 primary")
	out := runClient(t, h.work, h.claudeEnv(m), filepath.Join(bin, "claude"), "-p", "Which server runs the production Postgres?", "--output-format", "json")
	if !strings.Contains(out, "mock answer") {
		t.Errorf("claude -p: %s", out)
	}
	h.checkModelSaw(m, "tool_result", "content")
	h.disconnect()
	h.checkRestored(settings, mcpJSON, instructions)
}

func TestConnectCodexEndToEnd(t *testing.T) {
	bin := agentClientsBin(t)
	h := newE2EHive(t, "codex")
	m := newMockModel(t, "db-2 primary")
	codexHome := filepath.Join(h.home, ".codex")
	config := filepath.Join(codexHome, "config.toml")
	testutil.WriteFile(t, config, codexOffline(m))
	hooks, instructions := filepath.Join(codexHome, "hooks.json"), filepath.Join(codexHome, "AGENTS.md")
	h.connect(config, hooks, instructions)
	got := h.runCodex(bin, m, codexHome)
	t.Logf("search result as Codex hands it to the model: %d hits, %d bytes, %d tokens (wake-up's estimate)", strings.Count(got, `\"text\"`)+strings.Count(got, `"text"`), len(got), wakeup.EstimateTokens(got))
	h.disconnect()
	h.checkRestored(config, hooks, instructions)
}

// TestConnectCodexProjectEndToEnd connects a project's files: Codex reads
// DIR/.codex/ of a project the user trusts (trust_level in the user's
// config.toml, which connect does not touch here).
func TestConnectCodexProjectEndToEnd(t *testing.T) {
	bin := agentClientsBin(t)
	h := newE2EHive(t, "codex")
	h.connectArgs = append(h.connectArgs, "--project", h.work)
	m := newMockModel(t, "db-2 primary")
	codexHome := filepath.Join(h.home, ".codex")
	testutil.WriteFile(t, filepath.Join(codexHome, "config.toml"), codexOffline(m)+"\n[projects."+strconv.Quote(h.work)+"]\ntrust_level = \"trusted\"\n")
	config, hooks, instructions := filepath.Join(h.work, ".codex", "config.toml"), filepath.Join(h.work, ".codex", "hooks.json"), filepath.Join(h.work, "AGENTS.md")
	testutil.WriteFile(t, instructions, "# Project rules\n")
	h.connect(config, hooks, instructions)
	h.runCodex(bin, m, codexHome)
	h.disconnect()
	h.checkRestored(config, hooks, instructions)
}

// codexOffline is the offline configuration of ../shared/AGENT-CLIENTS.md,
// with a comment connect must keep.
func codexOffline(m *mockModel) string {
	return `# the mock model on loopback
model = "mock-model"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "` + m.URL + `/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
plugin_sharing = false
tool_suggest = false
skill_mcp_dependency_install = false
`
}

// runCodex runs one codex exec session and checks what the model saw; it
// returns the search result as the model got it.
func (h *e2eHive) runCodex(bin string, m *mockModel, codexHome string) string {
	h.t.Helper()
	env := append(append([]string(nil), h.env...), "CODEX_HOME="+codexHome, "MOCK_API_KEY=test")
	out := runClient(h.t, h.work, env, filepath.Join(bin, "codex"), "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check",
		"--json", "Which server runs the production Postgres?")
	if !strings.Contains(out, "turn.completed") || !strings.Contains(out, "mock answer") {
		h.t.Errorf("codex exec: %s", out)
	}
	return h.checkModelSaw(m, "function_call_output", "output")
}
