package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/secrets/secretstest"
)

// secretsHive adds to c's hive a memory file kim wrote by hand holding the
// ten kinds of credential, and an inbox item holding one; it returns the
// credentials and the line each one's note starts at.
func secretsHive(t *testing.T, c *cli) ([]secretstest.Credential, []int) {
	t.Helper()
	creds := secretstest.Ten()
	var b strings.Builder
	b.WriteString("# kim's memory\n\n## Ops\n")
	line := 4
	var lines []int
	for _, cr := range creds {
		lines = append(lines, line)
		b.WriteString("- " + strings.ReplaceAll(cr.Note, "\n", "\n  ") + "\n")
		line += strings.Count(cr.Note, "\n") + 1
	}
	b.WriteString("- Rotate the API key every 90 days.\n")
	testutil.WriteFile(t, filepath.Join(c.hive, "agents", "kim", "memory.md"), b.String())
	testutil.WriteFile(t, filepath.Join(c.hive, "agents", "kim", "inbox.md"),
		"# Inbox\n\n- (hypothesis) The staging key may be "+creds[3].Secrets[0]+" (added 2026-12-01)\n")
	return creds, lines
}

// leaks fails t when out shows any of creds' secrets.
func leaks(t *testing.T, where, out string, creds []secretstest.Credential) {
	t.Helper()
	for _, cr := range creds {
		if cr.In(out) {
			t.Errorf("%s shows the %s secret:\n%s", where, cr.Kind, out)
		}
	}
}

// TestSecretsNeverLeave: a hand-written memory file holding credentials is
// mined and searchable, but no output shows a secret: search in every
// form, show, wake-up, the prompt hook, a pack, the index, MCP's tools and
// resources. The file is left as it was; status counts the secrets and
// doctor names where they are.
func TestSecretsNeverLeave(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	creds, lines := secretsHive(t, c)
	path := filepath.Join(c.hive, "agents", "kim", "memory.md")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, mineErr, code := c.run("mine", c.hive)
	if code != 0 || !strings.Contains(mineErr, "agents/kim/memory.md: holds 11 secrets (aws-access-token at line 4,") {
		t.Errorf("mine: exit %d, stderr %q; want the warning naming the file", code, mineErr)
	}
	leaks(t, "mine's warning", mineErr, creds)
	c.serve(t)

	for i, cr := range creds {
		for _, args := range [][]string{
			{"search", cr.Before},
			{"search", cr.Before, "--json"},
			{"search", cr.Before, "--jsonl"},
			{"search", cr.Before, "-l"},
			{"recall", cr.Before},
			{"show", fmt.Sprintf("agents/kim/memory.md:%d", lines[i])},
			{"show", fmt.Sprintf("agents/kim/memory.md:%d", lines[i]), "--json"},
		} {
			out := c.ok(args...)
			leaks(t, strings.Join(args, " "), out, creds)
			if args[0] == "search" && len(args) == 2 && !strings.Contains(out, "[secret hidden: "+cr.Kind+"]") {
				t.Errorf("search %q does not find the note with its %s hidden:\n%s", cr.Before, cr.Kind, out)
			}
		}
		out, _, code := c.runStdin(fmt.Sprintf(`{"hook_event_name":"UserPromptSubmit","prompt":%q}`, cr.Before), "recall", "--hook", "claude-code")
		if code != 0 {
			t.Errorf("recall --hook: exit %d", code)
		}
		leaks(t, "recall --hook", out, creds)
	}
	for _, args := range [][]string{{"wake-up", "--wing", "kim"}, {"wake-up", "--wing", "kim", "--json"}, {"wake-up", "--wing", "dwight"}, {"index"}, {"index", "--write"}, {"inbox", "--wing", "kim"}} {
		out := c.ok(args...)
		leaks(t, strings.Join(args, " "), out, creds)
	}
	index, err := os.ReadFile(filepath.Join(c.hive, "INDEX.md"))
	if err != nil {
		t.Fatal(err)
	}
	leaks(t, "INDEX.md", string(index), creds)
	testutil.WriteFile(t, filepath.Join(c.hive, "packs", "kim.md"), "---\nuse:\n  - wing:kim\n---\n\nKim's notes.\n")
	leaks(t, "pack kim", c.ok("pack", "kim"), creds)

	cs := connectInMemory(t, newMCPServerFor(t, c, "kim"))
	for _, cr := range creds {
		res := callTool(t, cs, "search", map[string]any{"query": cr.Before})
		sc, _ := json.Marshal(res.StructuredContent)
		leaks(t, "MCP search", resultText(t, res)+string(sc), creds)
	}
	for i, call := range []struct {
		tool string
		args map[string]any
	}{
		{"wake_up", map[string]any{}},
		{"pack", map[string]any{"name": "kim"}},
		{"read_note", map[string]any{"ref": fmt.Sprintf("agents/kim/memory.md:%d", lines[7])}},
	} {
		res := callTool(t, cs, call.tool, call.args)
		sc, _ := json.Marshal(res.StructuredContent)
		if res.IsError && i > 0 {
			t.Errorf("MCP %s: %s", call.tool, resultText(t, res))
		}
		leaks(t, "MCP "+call.tool, resultText(t, res)+string(sc), creds)
	}
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "memminer://wing/kim/memory.md"})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("read the memory file's resource: %v", err)
	}
	leaks(t, "MCP resource", res.Contents[0].Text, creds)
	if !strings.Contains(res.Contents[0].Text, "Rotate the API key every 90 days.") {
		t.Errorf("the resource lost the rest of the file:\n%s", res.Contents[0].Text)
	}

	status := c.ok("status", "--json")
	var hidden int
	if _, err := fmt.Sscanf(status[strings.Index(status, `"secrets_hidden": `)+len(`"secrets_hidden": `):], "%d", &hidden); err != nil || hidden < len(creds) {
		t.Errorf("status --json: secrets_hidden %d (%v), want at least %d", hidden, err, len(creds))
	}
	doctor, _, _ := c.run("doctor")
	for i, cr := range creds {
		line := lines[i] + strings.Count(cr.Note[:strings.Index(cr.Note, cr.Secrets[0])], "\n")
		if want := fmt.Sprintf("agents/kim/memory.md:%d (%s)", line, cr.Kind); !strings.Contains(doctor, want) {
			t.Errorf("doctor does not name %s:\n%s", want, doctor)
		}
	}
	leaks(t, "doctor", doctor, creds)

	if after, err := os.ReadFile(path); err != nil || string(after) != string(before) {
		t.Errorf("the memory file was rewritten (%v)", err)
	}
}

// TestSecretsNeverEnter: remember, handoff and inbox approve refuse a note
// holding a secret with exit status 5, naming its kind, never the secret,
// and write nothing; remember --redact writes the rest of the note; over
// MCP the refusal is a tool error that says what to do.
func TestSecretsNeverEnter(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	creds, _ := secretsHive(t, c)
	c.ok("mine", c.hive)
	c.serve(t)
	file := filepath.Join(c.hive, "agents", "jim", "memory.laptop.md")

	for _, cr := range creds {
		args := []string{"remember", "--wing", "jim", "--stdin"}
		out, errOut, code := c.runStdin(cr.Note, args...)
		if code != exitSecret || !strings.Contains(errOut, cr.Kind) || !strings.Contains(errOut, "--redact") {
			t.Errorf("remember a %s: exit %d, stderr %q; want exit %d naming the kind", cr.Kind, code, errOut, exitSecret)
		}
		leaks(t, "remember's refusal", out+errOut, creds)
		if _, err := os.Stat(file); err == nil {
			t.Fatalf("remember wrote %s", file)
		}
	}
	for _, cr := range creds {
		if _, errOut, code := c.runStdin(cr.Note, "remember", "--wing", "jim", "--stdin", "--redact"); code != 0 {
			t.Fatalf("remember --redact of a %s: exit %d, %s", cr.Kind, code, errOut)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		leaks(t, "remember --redact", string(data), creds)
		for _, want := range []string{"[redacted: " + cr.Kind + "]", cr.Before, cr.After} {
			if !strings.Contains(string(data), want) {
				t.Errorf("remember --redact of a %s: the file lacks %q", cr.Kind, want)
			}
		}
	}

	written, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, errOut, code := c.run("handoff", "--wing", "jim", "--to", "pam", "the deploy token is "+creds[1].Secrets[0])
	if code != exitSecret || !strings.Contains(errOut, "github-pat") {
		t.Errorf("handoff: exit %d, stderr %q; want exit %d", code, errOut, exitSecret)
	}
	leaks(t, "handoff's refusal", errOut, creds)

	var ids struct {
		Items []struct {
			ID string `json:"ref"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(c.ok("inbox", "--wing", "kim", "--json")), &ids); err != nil || len(ids.Items) != 1 {
		t.Fatalf("inbox --json: %v, %+v", err, ids)
	}
	_, errOut, code = c.run("inbox", "approve", ids.Items[0].ID, "--by", "pam")
	if code != exitSecret || !strings.Contains(errOut, "stripe-access-token") {
		t.Errorf("inbox approve: exit %d, stderr %q; want exit %d", code, errOut, exitSecret)
	}
	leaks(t, "inbox approve's refusal", errOut, creds)
	if _, err := os.Stat(filepath.Join(c.hive, "agents", "kim", "memory.laptop.md")); err == nil {
		t.Errorf("inbox approve wrote kim's memory")
	}

	cs := connectInMemory(t, newMCPServerFor(t, c, "jim"))
	res := callTool(t, cs, "remember", map[string]any{"text": creds[5].Note})
	if text := resultText(t, res); !res.IsError || !strings.Contains(text, "gcp-api-key") || !strings.Contains(text, "store where it lives, not what it is") {
		t.Errorf("MCP remember: error %t, %q; want a tool error saying what to do", res.IsError, text)
	}
	leaks(t, "MCP remember's refusal", resultText(t, res), creds)
	if after, err := os.ReadFile(file); err != nil || string(after) != string(written) {
		t.Errorf("a refused write changed %s (%v)", file, err)
	}
}
