package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// TestDaemonKeepsClientsSkillsInStep: with the daemon running, a skill
// published reaches the connected clients' skills folders and a skill
// deprecated leaves them, as connect run again would do, without
// touching the user's own skills; once disconnected, a client is left
// alone.
func TestDaemonKeepsClientsSkillsInStep(t *testing.T) {
	useConnectExe(t, "/usr/local/bin/memminer")
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	home := c.env["HOME"]
	claude := filepath.Join(home, ".claude", "skills")
	codex := filepath.Join(home, ".codex", "skills")
	own := filepath.Join(claude, "my-own", "SKILL.md")
	testutil.WriteFile(t, own, "---\nname: my-own\ndescription: Mine.\n---\n")
	c.ok("connect", "claude-code", "--wing", "dwight")
	c.ok("connect", "codex", "--wing", "pam")
	// A project's connection without the hive is not the daemon's.
	project := t.TempDir()
	delete(c.env, "MEMMINER_HIVE")
	c.ok("connect", "claude-code", "--wing", "jim", "--project", project)
	c.env["MEMMINER_HIVE"] = c.hive
	startRun(t, c, c.hive)

	has := func(dir, name string) bool {
		_, err := os.Stat(filepath.Join(dir, name, "SKILL.md"))
		return err == nil
	}
	publishSkill(t, c, "deploy-api", "Deploy the API.")
	testutil.WaitFor(t, "the daemon to install the published skill in both clients", func() bool {
		return has(claude, "deploy-api") && has(codex, "deploy-api")
	})
	if has(filepath.Join(project, ".claude", "skills"), "deploy-api") {
		t.Error("the skill went to a client connected without the hive")
	}

	// An improvement replaces the installed copy.
	improved := filepath.Join(t.TempDir(), "SKILL.md")
	testutil.WriteFile(t, improved, "---\nname: deploy-api\ndescription: Deploy the API, v2.\n---\nNew steps.\n")
	c.ok("skill", "propose", "deploy-api", improved)
	c.ok("skill", "approve", "deploy-api")
	testutil.WaitFor(t, "the daemon to install the improved skill", func() bool {
		b, _ := os.ReadFile(filepath.Join(codex, "deploy-api", "SKILL.md"))
		return string(b) == "---\nname: deploy-api\ndescription: Deploy the API, v2.\n---\nNew steps.\n"
	})

	c.ok("skill", "deprecate", "deploy-api")
	testutil.WaitFor(t, "the daemon to remove the deprecated skill from both clients", func() bool {
		return !has(claude, "deploy-api") && !has(codex, "deploy-api")
	})
	if _, err := os.Stat(own); err != nil {
		t.Errorf("the user's own skill is gone: %v", err)
	}

	// Disconnected, a client hears of the hive's skills no more: a skill
	// published next reaches codex alone.
	c.ok("disconnect", "claude-code")
	publishSkill(t, c, "release-notes", "Write the release notes.")
	testutil.WaitFor(t, "the daemon to install the next skill in codex", func() bool { return has(codex, "release-notes") })
	if has(claude, "release-notes") {
		t.Error("the daemon installed a skill into a disconnected client")
	}
}
