package main

import (
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// geminiOffline is Gemini CLI's user settings for the mock model: an API
// key, no telemetry or update checks. The environment points it at the
// mock (GOOGLE_GEMINI_BASE_URL) and trusts the working directory.
const geminiOffline = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "general": {"enableAutoUpdate": false}
}
`

// runGemini runs one `gemini -p` session and checks what the model saw.
func (h *e2eHive) runGemini(bin string, m *mockModel) string {
	h.t.Helper()
	h.runSession([]string{"GEMINI_API_KEY=test", "GOOGLE_GEMINI_BASE_URL=" + m.URL, "GEMINI_CLI_TRUST_WORKSPACE=true"},
		filepath.Join(bin, "gemini"), "-p", e2ePrompt, "--allowed-mcp-server-names", "memminer", "--yolo")
	return h.checkModelSaw(m, "functionResponse", "response")
}

func TestConnectGeminiEndToEnd(t *testing.T) {
	bin := agentClientsBin(t, "gemini")
	h := newE2EHive(t, "gemini")
	m := newMockModel(t, "db-2 primary")
	settings, instructions := filepath.Join(h.home, ".gemini", "settings.json"), filepath.Join(h.home, ".gemini", "GEMINI.md")
	testutil.WriteFile(t, settings, geminiOffline)
	testutil.WriteFile(t, instructions, "# House rules\n\nBe brief.\n")
	h.connect(settings, instructions)
	h.runGemini(bin, m)
	h.disconnect()
	h.checkRestored(settings, instructions)
}

// TestConnectGeminiProjectEndToEnd connects a project's files:
// DIR/.gemini/settings.json and DIR/GEMINI.md. Gemini CLI reads them in a
// trusted folder (GEMINI_CLI_TRUST_WORKSPACE, as runGemini sets).
func TestConnectGeminiProjectEndToEnd(t *testing.T) {
	bin := agentClientsBin(t, "gemini")
	h := newE2EHive(t, "gemini")
	h.connectArgs = append(h.connectArgs, "--project", h.work)
	m := newMockModel(t, "db-2 primary")
	testutil.WriteFile(t, filepath.Join(h.home, ".gemini", "settings.json"), geminiOffline)
	settings, instructions := filepath.Join(h.work, ".gemini", "settings.json"), filepath.Join(h.work, "GEMINI.md")
	testutil.WriteFile(t, instructions, "# Project rules\n")
	h.connect(settings, instructions)
	h.runGemini(bin, m)
	h.disconnect()
	h.checkRestored(settings, instructions)
}
