package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// TestConnectClaudeCodeOffersPublishedSkills: a skill an agent proposed
// and a person approved reaches the model through the real Claude Code
// once connect installs it, and leaves it when deprecated.
func TestConnectClaudeCodeOffersPublishedSkills(t *testing.T) {
	bin := agentClientsBin(t)
	h := newE2EHive(t, "claude-code")
	const marker = "zebra-kumquat drill"
	file := filepath.Join(h.work, "SKILL.md")
	testutil.WriteFile(t, file, "---\nname: failover-drill\ndescription: Run the quarterly db-2 failover drill, the "+marker+", step by step.\n---\n# Failover drill\n\n1. Announce the drill.\n")
	h.memminer("skill", "propose", "failover-drill", file, "--wing", "dwight")
	h.memminer("skill", "approve", "failover-drill")
	out := h.memminer(h.connectArgs...)
	installed := filepath.Join(h.home, ".claude", "skills", "failover-drill", "SKILL.md")
	if _, err := os.Stat(installed); err != nil || !strings.Contains(out, "installed  skill") {
		t.Fatalf("connect did not install the skill (%v):\n%s", err, out)
	}
	ask := func() *mockModel {
		m := newMockModel(t, "db-2 primary")
		runClient(t, h.work, h.claudeEnv(m), filepath.Join(bin, "claude"), "-p", "Which server runs the production Postgres?", "--output-format", "json")
		return m
	}
	if m := ask(); !hasRequestWith(m, marker) {
		t.Errorf("no request offered the published skill; requests:\n%s", strings.Join(m.Requests(), "\n\n"))
	}

	h.memminer("skill", "deprecate", "failover-drill")
	h.memminer(h.connectArgs...)
	if _, err := os.Stat(installed); !os.IsNotExist(err) {
		t.Errorf("the deprecated skill is still installed: %v", err)
	}
	if m := ask(); hasRequestWith(m, marker) {
		t.Errorf("a request still offered the deprecated skill")
	}
	h.disconnect()
}

func hasRequestWith(m *mockModel, s string) bool {
	_, ok := m.firstWith(s)
	return ok
}

// TestConnectCodexOffersPublishedSkills: the same with the real Codex,
// which loads $CODEX_HOME/skills.
func TestConnectCodexOffersPublishedSkills(t *testing.T) {
	bin := agentClientsBin(t)
	h := newE2EHive(t, "codex")
	m := newMockModel(t, "db-2 primary")
	codexHome := filepath.Join(h.home, ".codex")
	testutil.WriteFile(t, filepath.Join(codexHome, "config.toml"), codexOffline(m))
	h.env = append(h.env, "CODEX_HOME="+codexHome)
	const marker = "zebra-kumquat drill"
	file := filepath.Join(h.work, "SKILL.md")
	testutil.WriteFile(t, file, "---\nname: failover-drill\ndescription: Run the quarterly db-2 failover drill, the "+marker+", step by step.\n---\n# Failover drill\n\n1. Announce the drill.\n")
	h.memminer("skill", "propose", "failover-drill", file, "--wing", "dwight")
	h.memminer("skill", "approve", "failover-drill")
	h.memminer(h.connectArgs...)
	if _, err := os.Stat(filepath.Join(codexHome, "skills", "failover-drill", "SKILL.md")); err != nil {
		t.Fatalf("connect did not install the skill: %v", err)
	}
	h.runCodex(bin, m, codexHome)
	if !hasRequestWith(m, marker) {
		t.Errorf("no request offered the published skill; requests:\n%s", strings.Join(m.Requests(), "\n\n"))
	}
	h.disconnect()
	if _, err := os.Stat(filepath.Join(codexHome, "skills", "failover-drill")); !os.IsNotExist(err) {
		t.Errorf("disconnect left the skill: %v", err)
	}
}
