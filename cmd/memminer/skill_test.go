package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSkillCommand(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	good := filepath.Join(t.TempDir(), "SKILL.md")
	os.WriteFile(good, []byte("---\nname: deploy-api\ndescription: Deploy the API.\n---\nSteps.\n"), 0o644)
	bad := filepath.Join(t.TempDir(), "SKILL.md")
	os.WriteFile(bad, []byte("# no frontmatter\n"), 0o644)

	steps := []struct {
		args []string
		code int
		want string // in stdout, or stderr when code != 0
	}{
		{[]string{"skill"}, 0, "no skills yet"},
		{[]string{"skill", "propose", "deploy-api", bad}, exitUsage, "no frontmatter name"},
		{[]string{"skill", "propose", "Deploy", good}, exitUsage, "lower-case"},
		{[]string{"skill", "propose", "deploy-api", good, "--wing", "dwight"}, 0, "waits for a person: memminer skill approve deploy-api"},
		{[]string{"skill", "propose", "deploy-api", good}, exitUsage, "waits for approval already"},
		{[]string{"inbox"}, 0, "1 skill waits for approval (memminer skill approve|reject NAME):\n  deploy-api: Deploy the API."},
		{[]string{"skill", "reject", "deploy-api"}, exitUsage, "needs --note"},
		{[]string{"skill", "approve", "deploy-api"}, 0, "approved skill deploy-api"},
		{[]string{"skill", "approve", "deploy-api"}, exitUsage, "no proposed skill deploy-api"},
		{[]string{"skill", "list"}, 0, "published  deploy-api  Deploy the API."},
		{[]string{"skill", "deprecate", "deploy-api"}, 0, "deprecated skill deploy-api"},
	}
	for _, s := range steps {
		out, stderr, code := c.run(s.args...)
		got := out
		if s.code != 0 {
			got = stderr
		}
		if code != s.code || !strings.Contains(got, s.want) {
			t.Errorf("memminer %s: exit %d, want %d and %q\nstdout: %s\nstderr: %s", strings.Join(s.args, " "), code, s.code, s.want, out, stderr)
		}
	}
	var list skillListJSON
	if err := json.Unmarshal([]byte(c.ok("skill", "list", "--json")), &list); err != nil || len(list.Skills) != 1 || list.Skills[0].State != "deprecated" {
		t.Errorf("skill list --json: %+v %v", list, err)
	}
	log, _ := os.ReadFile(filepath.Join(c.hive, "skills", "LOG.md"))
	if !strings.Contains(string(log), "proposed deploy-api by dwight") {
		t.Errorf("LOG.md:\n%s", log)
	}
}
