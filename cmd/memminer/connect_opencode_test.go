package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/recall/wakeup"
)

// openCodeOffline is OpenCode's user configuration for the mock model: an
// OpenAI-compatible provider on loopback (its SDK ships inside the
// binary), no update checks, no sharing.
func openCodeOffline(m *mockModel) string {
	return `{
  "$schema": "https://opencode.ai/config.json",
  "model": "mock/mock-model",
  "autoupdate": false,
  "share": "disabled",
  "provider": {
    "mock": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Mock",
      "options": {"baseURL": "` + m.URL + `/v1", "apiKey": "test"},
      "models": {"mock-model": {"name": "Mock model"}}
    }
  }
}
`
}

// runOpenCode runs one `opencode run` session and checks what the model
// saw; it returns the search result as the model got it.
func (h *e2eHive) runOpenCode(bin string, m *mockModel) string {
	h.t.Helper()
	h.runSession([]string{"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_SHARE=1"}, filepath.Join(bin, "opencode"), "run", e2ePrompt)
	return h.checkModelSaw(m, "tool", "content")
}

func TestConnectOpenCodeEndToEnd(t *testing.T) {
	bin := agentClientsBin(t, "opencode")
	h := newE2EHive(t, "opencode")
	m := newMockModel(t, "db-2 primary")
	dir := filepath.Join(h.home, "..", "config", "opencode") // $XDG_CONFIG_HOME/opencode
	config := filepath.Join(dir, "opencode.jsonc")
	testutil.WriteFile(t, config, openCodeOffline(m))
	plugin, protocol := filepath.Join(dir, "plugins", "memminer.js"), filepath.Join(dir, "memminer-protocol.md")
	h.connect(config, plugin, protocol)
	got := h.runOpenCode(bin, m)
	t.Logf("search result as OpenCode hands it to the model: %d bytes, %d tokens (wake-up's estimate)", len(got), wakeup.EstimateTokens(got))
	h.disconnect()
	h.checkRestored(config, plugin, protocol)
}

// TestConnectOpenCodeProjectEndToEnd connects a project's files:
// DIR/opencode.json, DIR/.opencode/plugins/memminer.js and the protocol in
// DIR/.opencode/; the provider stays in the user's configuration.
func TestConnectOpenCodeProjectEndToEnd(t *testing.T) {
	bin := agentClientsBin(t, "opencode")
	h := newE2EHive(t, "opencode")
	h.connectArgs = append(h.connectArgs, "--project", h.work)
	m := newMockModel(t, "db-2 primary")
	testutil.WriteFile(t, filepath.Join(h.home, "..", "config", "opencode", "opencode.jsonc"), openCodeOffline(m))
	config := filepath.Join(h.work, "opencode.json")
	testutil.WriteFile(t, config, "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {}\n}\n")
	plugin, protocol := filepath.Join(h.work, ".opencode", "plugins", "memminer.js"), filepath.Join(h.work, ".opencode", "memminer-protocol.md")
	h.connect(config, plugin, protocol)
	h.runOpenCode(bin, m)
	h.disconnect()
	h.checkRestored(config, plugin, protocol)
}

// e2ePrompt is the prompt of the end-to-end sessions.
const e2ePrompt = "Which server runs the production Postgres?"

// runSession runs one non-interactive session of a client with env added
// to the hive's, and checks that it printed the mock model's answer.
func (h *e2eHive) runSession(env []string, name string, args ...string) {
	h.t.Helper()
	out := runClient(h.t, h.work, append(append([]string(nil), h.env...), env...), name, args...)
	if !strings.Contains(out, "mock answer") {
		h.t.Errorf("%s: %s", filepath.Base(name), out)
	}
}
