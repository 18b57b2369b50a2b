package main

import (
	"encoding/json"
	"html"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/memory/secrets/secretstest"
)

// TestUISkills: the skills page lists the hive's skills by state, as skill
// list does, each with its SKILL.md, markup in it escaped.
func TestUISkills(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	for name, desc := range map[string]string{"deploy-api": "Deploy the API.", "rotate-keys": "Rotate the <b>keys</b>."} {
		f := filepath.Join(t.TempDir(), "SKILL.md")
		if err := os.WriteFile(f, []byte("---\nname: "+name+"\ndescription: "+desc+"\n---\nSteps: <script>alert(1)</script>\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		c.ok("skill", "propose", name, f, "--wing", "dwight")
	}
	c.ok("skill", "approve", "deploy-api")
	code, body := uiGet(t, newUIFor(t, c), "/skills")
	if code != http.StatusOK {
		t.Fatalf("GET /skills: %d\n%s", code, body)
	}
	proposed, published := strings.Index(body, "<h2>proposed <span class=\"muted\">(1)</span></h2>"), strings.Index(body, "<h2>published <span class=\"muted\">(1)</span></h2>")
	deploy, rotate := strings.Index(body, `data-skill="deploy-api"`), strings.Index(body, `data-skill="rotate-keys"`)
	if proposed < 0 || published < 0 || !(proposed < rotate && rotate < published && published < deploy) {
		t.Errorf("want rotate-keys under proposed and deploy-api under published:\n%s", body)
	}
	for _, want := range []string{"<p>Rotate the &lt;b&gt;keys&lt;/b&gt;.</p>", "Steps: &lt;script&gt;alert(1)&lt;/script&gt;", "skills/published/deploy-api/SKILL.md"} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Errorf("a skill's markup is on the page")
	}
}

// TestUIPreAction: the pre-action page lists what pre-action lists,
// newest first, filtered by wing, with a secret in a command hidden.
func TestUIPreAction(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	c.ok("mine", c.hive)
	cred := secretstest.Ten()[1] // a GitHub token
	for _, command := range []string{"git push --force origin main", "rm -rf dist <b>now</b>", "git push --force https://x:" + cred.Secrets[0] + "@github.com/o/r.git main"} {
		in, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "session_id": "s-42", "cwd": "/work/api",
			"tool_name": "Bash", "tool_input": map[string]any{"command": command}})
		if _, stderr, code := c.runStdin(string(in), "pre-action", "--hook", "claude-code", "--wing", "dwight"); code != 0 || stderr != "" {
			t.Fatalf("pre-action --hook: exit %d %s", code, stderr)
		}
	}
	h := newUIFor(t, c)
	code, body := uiGet(t, h, "/pre-action")
	if code != http.StatusOK || strings.Count(body, `<tr class="entry">`) != 3 {
		t.Fatalf("GET /pre-action: %d, want 3 entries:\n%s", code, body)
	}
	first, last := strings.Index(body, "https://x:"), strings.Index(body, "git push --force origin main")
	if first < 0 || last < first || !strings.Contains(body, html.EscapeString("rm -rf dist <b>now</b>")) {
		t.Errorf("want the entries newest first, escaped:\n%s", body)
	}
	if strings.Contains(body, cred.Secrets[0]) || !strings.Contains(body, "[secret hidden: ") {
		t.Errorf("the token is shown, not hidden:\n%s", body)
	}
	if _, body := uiGet(t, h, "/pre-action?wing=jim"); !strings.Contains(body, "No high-risk command logged.") {
		t.Errorf("wing=jim shows dwight's entries:\n%s", body)
	}
	if _, body := uiGet(t, h, "/pre-action?since=yesterday-ish"); !strings.Contains(body, `<p class="error">--since: `) {
		t.Errorf("a since that is no date:\n%s", body)
	}
}
