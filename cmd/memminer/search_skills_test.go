package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/service/api"
)

// publishSkill proposes and approves a skill in c's hive.
func publishSkill(t *testing.T, c *cli, name, desc string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "SKILL.md")
	if err := os.WriteFile(f, []byte("---\nname: "+name+"\ndescription: "+desc+"\n---\nSteps.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.ok("skill", "propose", name, f)
	c.ok("skill", "approve", name)
}

// TestSearchFindsSkills: search lists the published skills that match on
// a shelf of their own, after the notes, in text, --json and MCP; the
// prompt hook and a proposed or deprecated skill never offer one.
func TestSearchFindsSkills(t *testing.T) {
	c := newMinedCLI(t)
	publishSkill(t, c, "postgres-failover", "Fail the production Postgres over to its standby server.")
	publishSkill(t, c, "old-failover", "Fail the production Postgres over by hand.")
	c.ok("skill", "deprecate", "old-failover")
	f := filepath.Join(t.TempDir(), "SKILL.md")
	os.WriteFile(f, []byte("---\nname: new-failover\ndescription: Fail the production Postgres over with the pipeline.\n---\n"), 0o644)
	c.ok("skill", "propose", "new-failover", f)

	const query = "which server runs the production Postgres?"
	var res api.SearchResult
	if err := json.Unmarshal([]byte(c.ok("search", query, "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Results) == 0 || len(res.Skills) != 1 || res.Skills[0].Name != "postgres-failover" ||
		res.Skills[0].Source != "skills/published/postgres-failover/SKILL.md" || res.Skills[0].Relevance != 0.75 {
		t.Errorf("search --json: %d notes, skills %+v; want notes and postgres-failover alone, relevance 0.75", len(res.Results), res.Skills)
	}
	for _, h := range res.Results {
		if strings.Contains(h.Path, "skills") {
			t.Errorf("a skill among the notes: %+v", h)
		}
	}
	text := c.ok("search", query)
	want := "skills that match (the published ones, which connected clients load by name):\n  postgres-failover: Fail the production Postgres over to its standby server.  (skills/published/postgres-failover/SKILL.md, relevance 0.75)\n"
	if !strings.HasSuffix(text, want) {
		t.Errorf("search text does not end with the skills:\n%s", text)
	}
	// A skill alone is something found: exit 0.
	if out, stderr, code := c.run("search", "standby"); code != 0 || !strings.Contains(out, "no matching notes\nskills that match") {
		t.Errorf("search standby: exit %d\n%s%s", code, out, stderr)
	}
	// Outputs of hits alone show no skill and say nothing was found.
	if out, _, code := c.run("search", "standby", "-l"); code != exitError || out != "" {
		t.Errorf("search standby -l: exit %d, %q", code, out)
	}
	if out := c.ok("recall", query); strings.Contains(out, "postgres-failover") {
		t.Errorf("the prompt hook offers a skill:\n%s", out)
	}

	cs := connectInMemory(t, newMCPServerFor(t, c, "pam"))
	mres := callTool(t, cs, "search", map[string]any{"query": query})
	b, _ := json.Marshal(mres.StructuredContent)
	var compact mcpSearchResult
	if err := json.Unmarshal(b, &compact); err != nil {
		t.Fatal(err)
	}
	wantSkill := mcpSkill{Name: "postgres-failover", Description: "Fail the production Postgres over to its standby server.", Source: "skills/published/postgres-failover/SKILL.md", Relevance: 0.75}
	if len(compact.Skills) != 1 || compact.Skills[0] != wantSkill || !strings.HasSuffix(resultText(t, mres), want) {
		t.Errorf("MCP search: %s\n%s", b, resultText(t, mres))
	}
}
