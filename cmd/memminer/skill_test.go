package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/memory/secrets/secretstest"
)

func TestSkillCommand(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	good := filepath.Join(t.TempDir(), "SKILL.md")
	os.WriteFile(good, []byte("---\nname: deploy-api\ndescription: Deploy the API.\n---\nSteps.\n"), 0o644)
	bad := filepath.Join(t.TempDir(), "SKILL.md")
	os.WriteFile(bad, []byte("# no frontmatter\n"), 0o644)
	secret := filepath.Join(t.TempDir(), "SKILL.md")
	os.WriteFile(secret, []byte("---\nname: push\ndescription: Push tags.\n---\nCI pushes tags with the token "+secretstest.Ten()[1].Secrets[0]+".\n"), 0o644)

	steps := []struct {
		args []string
		code int
		want string // in stdout, or stderr when code != 0
	}{
		{[]string{"skill"}, 0, "no skills yet"},
		{[]string{"skill", "propose", "deploy-api", bad}, exitUsage, "no frontmatter name"},
		{[]string{"skill", "propose", "Deploy", good}, exitUsage, "lower-case"},
		{[]string{"skill", "propose", "push", secret}, exitSecret, "the skill holds a secret: push"},
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

// TestSkillStepsJSON: every step of a skill takes --json, saying what was
// done and where the skill lies now, with --hive as the only hive.
func TestSkillStepsJSON(t *testing.T) {
	c := newCLI(t)
	file := filepath.Join(t.TempDir(), "SKILL.md")
	os.WriteFile(file, []byte("---\nname: deploy-api\ndescription: Deploy the API.\n---\nSteps.\n"), 0o644)
	steps := []struct {
		args []string
		want skillStepJSON
	}{
		{[]string{"skill", "propose", "deploy-api", file, "--wing", "dwight"},
			skillStepJSON{Name: "deploy-api", Done: "proposed", By: "dwight", State: "proposed", Source: "skills/proposed/deploy-api/SKILL.md"}},
		{[]string{"skill", "approve", "deploy-api"},
			skillStepJSON{Name: "deploy-api", Done: "approved", State: "published", Source: "skills/published/deploy-api/SKILL.md"}},
		{[]string{"skill", "deprecate", "deploy-api"},
			skillStepJSON{Name: "deploy-api", Done: "deprecated", State: "deprecated", Source: "skills/deprecated/deploy-api/SKILL.md"}},
		{[]string{"skill", "propose", "deploy-api", file, "--wing", "dwight"},
			skillStepJSON{Name: "deploy-api", Done: "proposed", By: "dwight", State: "proposed", Source: "skills/proposed/deploy-api/SKILL.md"}},
		{[]string{"skill", "reject", "deploy-api", "--note", "too vague"},
			skillStepJSON{Name: "deploy-api", Done: "rejected"}},
	}
	for _, s := range steps {
		out := c.ok(append(s.args, "--json", "--hive", c.hive)...)
		var got skillStepJSON
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("memminer %s --json: %v\n%s", strings.Join(s.args, " "), err, out)
		}
		if s.want.By == "" {
			s.want.By = got.By // a person's login name
		}
		if s.want.Source != "" {
			s.want.Path = "$HIVE/" + s.want.Source // as c.ok shows the hive
		}
		if got != s.want || got.By == "" {
			t.Errorf("memminer %s --json:\n got %+v\nwant %+v", strings.Join(s.args, " "), got, s.want)
		}
	}
}
