package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memminer/memminer/internal/testutil"
)

// inboxRef is the ref of the first pending item of inbox --json.
func inboxRef(t *testing.T, out string) string {
	t.Helper()
	var l struct {
		Items []struct{ Ref string }
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Items) == 0 {
		t.Fatalf("inbox --json: %v: %s", err, out)
	}
	return l.Items[0].Ref
}

func inboxSteps(t *testing.T, c *cli) string {
	tr := &cmdLog{t: t, c: c}
	tr.step("remember", "--wing", "ops", "--confidence", "hypothesis", "The load balancer drops idle connections after ten minutes")
	tr.step("search", "load balancer idle connections")
	tr.step("search", "load balancer idle connections", "--include-inbox")
	tr.step("inbox")
	if st := c.ok("status"); !strings.Contains(st, "\ninbox:       1 note waits for approval (memminer inbox)\n") {
		t.Errorf("status does not count the inbox:\n%s", st)
	}
	out, _ := tr.step("inbox", "--json")
	ref := inboxRef(t, out)
	tr.step("wake-up", "--wing", "ops")
	tr.step("pack", "deploy", "--include-inbox", "--tokens", "200")
	tr.step("inbox", "approve", ref, "--by", "pam", "--note", "seen in the proxy logs")
	tr.step("search", "load balancer idle connections")
	tr.step("inbox")
	tr.step("inbox", "approve", ref)
	// A high-risk note goes to the inbox whatever its confidence.
	tr.step("remember", "--wing", "ops", "--risk", "high", "Drop the audit table before the migration")
	out, _ = tr.step("inbox", "--json")
	ref = inboxRef(t, out)
	tr.step("inbox", "reject", ref)
	tr.step("inbox", "reject", ref, "--by", "angela", "--note", "the audit table is kept (legal)")
	tr.step("inbox", "--all")
	tr.step("search", "drop the audit table", "--include-inbox", "--wing", "ops")
	tr.step("remember", "--wing", "ops", "--ttl", "30d", "The VPN certificate is renewed by hand")
	tr.step("remember", "--wing", "ops", "--confidence", "maybe", "x")
	tr.step("remember", "--wing", "ops", "--confidence", "hypothesis", "--ttl", "30d", "x")
	tr.step("inbox", "approve", "0123456789abcdef0123456789abcdef")
	tr.step("inbox", "--wing", "zed")
	return scrubRemember(tr.b.String())
}

// TestInboxRoundTrip: a hypothesis waits in the inbox, out of search until
// approved, then is in search as approved and attributed; a high-risk note
// goes to the inbox too and a rejection keeps it as history. The same
// with and without the daemon.
func TestInboxRoundTrip(t *testing.T) {
	withAndWithoutDaemon(t, "inbox.txt", inboxSteps, func(t *testing.T, c *cli) {
		mem := scrubRemember(c.scrub(testutil.ReadFile(t, filepath.Join(c.hive, "agents", "ops", "memory.laptop.md"))))
		if !strings.Contains(mem, "- The load balancer drops idle connections after ten minutes (status: approved $MTIME_DATE by pam) — seen in the proxy logs (added $MTIME_DATE)\n") {
			t.Errorf("memory.md:\n%s", mem)
		}
		box := scrubRemember(c.scrub(testutil.ReadFile(t, filepath.Join(c.hive, "agents", "ops", "inbox.md"))))
		want := "# ops's inbox (waiting for approval)\n\n" +
			"- The load balancer drops idle connections after ten minutes (inbox: hypothesis, risk low) (added $MTIME_DATE) (inbox: approved $MTIME_DATE by pam into agents/ops/memory.laptop.md:7)\n" +
			"- Drop the audit table before the migration (inbox: verified, risk high) (added $MTIME_DATE) (inbox: rejected $MTIME_DATE by angela: the audit table is kept [legal])\n"
		if box != want {
			t.Errorf("inbox.md =\n%s\nwant\n%s", box, want)
		}
	})
}

// TestInboxOverMCP: the MCP remember tool may write a hypothesis, which
// waits in the inbox; no tool approves it, and search leaves it out.
func TestInboxOverMCP(t *testing.T) {
	c := newPackCLI(t)
	cs := connectInMemory(t, newMCPServerFor(t, c, "ops"))
	res := callTool(t, cs, "remember", map[string]any{"text": "The cache warms up in five minutes", "confidence": "hypothesis"})
	if res.IsError || !strings.Contains(resultText(t, res), "agents/ops/inbox.md:3") {
		t.Fatalf("remember a hypothesis: %s", resultText(t, res))
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if strings.Contains(tool.Name, "approve") || strings.Contains(tool.Name, "inbox") {
			t.Errorf("tool %s: approval must not be an MCP tool", tool.Name)
		}
	}
	if res := callTool(t, cs, "search", map[string]any{"query": "cache warms up"}); strings.Contains(resultText(t, res), "warms up in five") {
		t.Errorf("search over MCP returns an inbox note:\n%s", resultText(t, res))
	}
	// Only a person's CLI shows the inbox: MCP has no include_inbox.
	if res := callTool(t, cs, "search", map[string]any{"query": "cache warms up", "include_inbox": true}); !res.IsError || strings.Contains(resultText(t, res), "warms up in five") {
		t.Errorf("search include_inbox over MCP:\n%s", resultText(t, res))
	}
	list, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	joined := strings.Join(uris, " ")
	if strings.Contains(joined, "inbox.md") || !strings.Contains(joined, "memminer://pack/deploy") || !strings.Contains(joined, "memminer://pack/migrate") {
		t.Errorf("resources: %v", uris)
	}
	read, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "memminer://pack/deploy"})
	if err != nil || len(read.Contents) != 1 || !strings.HasPrefix(read.Contents[0].Text, "# Pack deploy (packs/deploy.md)\n") {
		t.Errorf("read pack resource: %v %+v", err, read)
	}
	res = callTool(t, cs, "pack", map[string]any{"name": "deploy", "mark": "bad", "note": "too long"})
	if res.IsError || !strings.Contains(testutil.ReadFile(t, filepath.Join(c.hive, "packs", "deploy.marks")), " bad ops: too long\n") {
		t.Errorf("pack mark over MCP: %s", resultText(t, res))
	}
	res = callTool(t, cs, "pack", map[string]any{"name": "deploy"})
	if res.IsError || !strings.Contains(resultText(t, res), "Production deploys run only") {
		t.Errorf("pack render over MCP: %s", resultText(t, res))
	}
	if res := callTool(t, cs, "pack", map[string]any{"name": "migrate"}); !res.IsError || !strings.Contains(resultText(t, res), "block_stale") {
		t.Errorf("a blocking pack over MCP: %s", resultText(t, res))
	}
}

// TestInboxRefsAndFlags: inbox approve and reject take --hive, --json and
// every form of REF show takes (a unique id prefix of 6 or more digits
// here); a prefix too short or shared is refused.
func TestInboxRefsAndFlags(t *testing.T) {
	c := newPackCLI(t)
	hive := c.env["MEMMINER_HIVE"]
	delete(c.env, "MEMMINER_HIVE") // given as --hive below
	c.ok("remember", "--hive", hive, "--wing", "ops", "--confidence", "hypothesis", "The coffee machine needs descaling monthly")
	c.ok("remember", "--hive", hive, "--wing", "ops", "--risk", "high", "Restart the proxy every night")
	var l struct{ Items []struct{ Ref, Text string } }
	if err := json.Unmarshal([]byte(c.ok("inbox", "--hive", hive, "--json")), &l); err != nil || len(l.Items) != 2 {
		t.Fatalf("inbox --json: %v %+v", err, l)
	}
	first, second := l.Items[0].Ref, l.Items[1].Ref

	if _, errs, code := c.run("inbox", "approve", "--hive", hive, first[:5]); code != exitUsage {
		t.Errorf("a 5-digit prefix: exit %d, %s", code, errs)
	}
	out, code := c.runRaw("inbox", "approve", "--hive", hive, "--json", "--by", "pam", first[:6])
	if code != 0 {
		t.Fatalf("inbox approve PREFIX: exit %d, %s", code, out)
	}
	var d decision
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Decision != "approved" || d.Wing != "ops" || d.Into == nil || !strings.HasPrefix(*d.Into, "agents/ops/memory.laptop.md:") || d.ID == "" {
		t.Errorf("inbox approve --json: %v %s", err, out)
	}
	approved := d.ID
	out = c.ok("inbox", "reject", "--hive", hive, "--json", "--by", "pam", "--note", "no", second[:8])
	d = decision{}
	if err := json.Unmarshal([]byte(out), &d); err != nil || d.Decision != "rejected" || d.Into != nil || d.File != "agents/ops/inbox.md" {
		t.Errorf("inbox reject --json: %v %s", err, out)
	}
	if out := c.ok("show", "--hive", hive, approved[:6]); !strings.Contains(out, "coffee machine needs descaling") {
		t.Errorf("show PREFIX:\n%s", out)
	}
}
