package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMCPProposeSkill(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	cs := connectInMemory(t, newMCPServerFor(t, c, "dwight"))
	good := "---\nname: deploy-api\ndescription: Deploy the API.\n---\nSteps.\n"
	steps := []struct {
		name, skill, md string
		isError         bool
		want            string
	}{
		{"no frontmatter", "deploy-api", "# Deploy\n", true, "skill_md starts with frontmatter"},
		{"a bad name", "Deploy API", good, true, "lower-case"},
		{"proposed", "deploy-api", good, false, "proposed skill deploy-api (skills/proposed/deploy-api/SKILL.md); it waits for a person's approval"},
		{"waiting already", "deploy-api", good, true, "propose it under another name"},
	}
	for _, s := range steps {
		res := callTool(t, cs, "propose_skill", map[string]any{"name": s.skill, "skill_md": s.md})
		if got := resultText(t, res); res.IsError != s.isError || !strings.Contains(got, s.want) {
			t.Errorf("%s: error %v, want %v and %q: %s", s.name, res.IsError, s.isError, s.want, got)
		}
	}
	data, err := os.ReadFile(filepath.Join(c.hive, "skills", "proposed", "deploy-api", "SKILL.md"))
	if err != nil || string(data) != good {
		t.Errorf("proposed SKILL.md %q, %v; want %q", data, err, good)
	}
	log, _ := os.ReadFile(filepath.Join(c.hive, "skills", "LOG.md"))
	if !strings.Contains(string(log), "proposed deploy-api by dwight") {
		t.Errorf("LOG.md does not name the server's wing as the proposer:\n%s", log)
	}
	if out := c.ok("inbox"); !strings.Contains(out, "deploy-api: Deploy the API.") {
		t.Errorf("inbox does not list the proposal:\n%s", out)
	}
}
