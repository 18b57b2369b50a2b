package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// publishE2ESkill publishes, in h's hive, a skill whose description holds
// marker, which a request to the model carries once the client offers it.
func publishE2ESkill(h *e2eHive, marker string) {
	h.t.Helper()
	file := filepath.Join(h.work, "SKILL.md")
	testutil.WriteFile(h.t, file, "---\nname: failover-drill\ndescription: Run the quarterly db-2 failover drill, the "+marker+", step by step.\n---\n# Failover drill\n\n1. Announce the drill.\n")
	h.memminer("skill", "propose", "failover-drill", file, "--wing", "dwight")
	h.memminer("skill", "approve", "failover-drill")
	if err := os.Remove(file); err != nil {
		h.t.Fatal(err)
	}
}

// checkPreActionLogged checks that the client ran the pre-action hook
// connect installed before its shell tool ran command.
func checkPreActionLogged(h *e2eHive, m *mockModel, command string) {
	h.t.Helper()
	var got preActionJSON
	if err := json.Unmarshal([]byte(h.memminer("pre-action", "--json")), &got); err != nil {
		h.t.Fatal(err)
	}
	if len(got.Entries) != 1 || got.Entries[0].Command != command || got.Entries[0].Wing != "pam" || got.Entries[0].Session == "" {
		h.t.Errorf("pre-action log: %+v; requests:\n%s", got.Entries, strings.Join(m.Requests(), "\n\n"))
	}
}

// TestConnectGeminiLogsPreActionAndOffersSkills: the real Gemini CLI runs
// the BeforeTool hook connect installs before its shell tool, and loads
// the published skill connect put in ~/.gemini/skills.
func TestConnectGeminiLogsPreActionAndOffersSkills(t *testing.T) {
	bin := agentClientsBin(t, "gemini")
	h := newE2EHive(t, "gemini")
	testutil.WriteFile(t, filepath.Join(h.home, ".gemini", "settings.json"), geminiOffline)
	const marker = "zebra-kumquat drill"
	publishE2ESkill(h, marker)
	h.memminer(h.connectArgs...)
	if _, err := os.Stat(filepath.Join(h.home, ".gemini", "skills", "failover-drill", "SKILL.md")); err != nil {
		t.Fatalf("connect did not install the skill: %v", err)
	}
	m := newMockModel(t, "db-2 primary")
	const bash = "git push --force origin main"
	m.setBash(bash)
	h.runSession([]string{"GEMINI_API_KEY=test", "GOOGLE_GEMINI_BASE_URL=" + m.URL, "GEMINI_CLI_TRUST_WORKSPACE=true"},
		filepath.Join(bin, "gemini"), "-p", "Publish the branch.", "--yolo")
	checkPreActionLogged(h, m, bash)
	if !hasRequestWith(m, marker) {
		t.Errorf("no request offered the published skill; requests:\n%s", strings.Join(m.Requests(), "\n\n"))
	}
	h.disconnect()
	if _, err := os.Stat(filepath.Join(h.home, ".gemini", "skills", "failover-drill")); !os.IsNotExist(err) {
		t.Errorf("disconnect left the skill: %v", err)
	}
}

// TestConnectOpenCodeLogsPreActionAndOffersSkills: the real OpenCode runs
// the plugin's tool.execute.before before its bash tool, and loads the
// published skill connect put in its configuration's skills folder.
func TestConnectOpenCodeLogsPreActionAndOffersSkills(t *testing.T) {
	bin := agentClientsBin(t, "opencode")
	h := newE2EHive(t, "opencode")
	m := newMockModel(t, "db-2 primary")
	dir := filepath.Join(h.home, "..", "config", "opencode") // $XDG_CONFIG_HOME/opencode
	testutil.WriteFile(t, filepath.Join(dir, "opencode.jsonc"), openCodeOffline(m))
	const marker = "zebra-kumquat drill"
	publishE2ESkill(h, marker)
	h.memminer(h.connectArgs...)
	if _, err := os.Stat(filepath.Join(dir, "skills", "failover-drill", "SKILL.md")); err != nil {
		t.Fatalf("connect did not install the skill: %v", err)
	}
	const bash = "git push --force origin main"
	m.setBash(bash)
	h.runSession([]string{"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1",
		"OPENCODE_DISABLE_SHARE=1"}, filepath.Join(bin, "opencode"), "run", "Publish the branch.")
	checkPreActionLogged(h, m, bash)
	if !hasRequestWith(m, marker) {
		t.Errorf("no request offered the published skill; requests:\n%s", strings.Join(m.Requests(), "\n\n"))
	}
	h.disconnect()
	if _, err := os.Stat(filepath.Join(dir, "skills", "failover-drill")); !os.IsNotExist(err) {
		t.Errorf("disconnect left the skill: %v", err)
	}
}
