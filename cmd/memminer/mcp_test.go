package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/memfile"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
)

// mcpToolCases call every tool; each must return what the CLI command
// beside it prints: its --json as the structured output, its plain output
// as the text. The servers under test speak for wing jim.
var mcpToolCases = []struct {
	tool string
	args map[string]any
	cli  []string
}{
	{"search", map[string]any{"query": "db-2", "wing": "dwight", "results": 2}, []string{"search", "db-2", "--wing", "dwight", "-n", "2"}},
	{"search", map[string]any{"query": "how is the web bundle built"}, []string{"search", "how is the web bundle built"}},
	{"search", map[string]any{"query": "db-2", "since": "2026-10-01", "min_relevance": 0.5, "fresh": true}, []string{"search", "db-2", "--since", "2026-10-01", "--min-relevance", "0.5", "--fresh"}},
	{"search", map[string]any{"query": "release", "tags": []string{"release"}, "include_superseded": true}, []string{"search", "release", "--tag", "release", "--include-superseded"}}, // no match: an answer, not an error
	{"search", map[string]any{"query": "JIRA-1234"}, []string{"search", "JIRA-1234"}},                                                                                                  // nothing relevant: an answer, not an error
	{"search", map[string]any{"query": "staging database kestrel", "explain": true, "results": 2}, []string{"search", "staging database kestrel", "--explain", "-n", "2"}},
	{"wake_up", map[string]any{}, []string{"wake-up"}},
	{"wake_up", map[string]any{"tokens": 300, "wing": "Pam"}, []string{"wake-up", "--tokens", "300", "--wing", "pam"}},
	{"conflicts", map[string]any{}, []string{"conflicts", "--wing", "jim"}},
	{"conflicts", map[string]any{"wing": "dwight"}, []string{"conflicts", "--wing", "dwight"}},
	{"status", map[string]any{}, []string{"status"}},
}

// checkToolsMatchCLI runs mcpToolCases on cs and compares each result with
// the CLI's output for c's palace, run in this process.
func checkToolsMatchCLI(t *testing.T, cs *mcp.ClientSession, c *cli) {
	t.Helper()
	for _, tc := range mcpToolCases {
		name := tc.tool + " " + strings.Join(tc.cli[1:], " ")
		res := callTool(t, cs, tc.tool, tc.args)
		if res.IsError {
			t.Fatalf("%s: tool error: %s", name, resultText(t, res))
		}
		wantJSON := c.stdout(append(tc.cli, "--json")...)
		wantText := c.stdout(tc.cli...)
		got, want := canonicalJSON(t, res.StructuredContent), canonicalJSON(t, mcpForm(t, tc.tool, wantJSON))
		gotText := resultText(t, res)
		if tc.tool == "status" {
			got, want = dropDaemonTimes(got), dropDaemonTimes(want)
			gotText, wantText = dropDaemonTimes(gotText), dropDaemonTimes(wantText)
		}
		if got != want {
			t.Errorf("%s: structured output is not the CLI's --json:\n--- mcp\n%s\n--- cli\n%s", name, got, want)
		}
		if gotText != wantText {
			t.Errorf("%s: text is not the CLI's output:\n--- mcp\n%s\n--- cli\n%s", name, gotText, wantText)
		}
	}
}

// mcpForm is what a tool's structured content holds for the CLI's --json
// output cliJSON: the compact form for search and wake_up, the same JSON
// for the others.
func mcpForm(t *testing.T, tool, cliJSON string) any {
	t.Helper()
	switch tool {
	case "search":
		var out api.SearchResult
		if err := json.Unmarshal([]byte(cliJSON), &out); err != nil {
			t.Fatal(err)
		}
		return compactSearch(out)
	case "wake_up":
		var d wakeup.Digest
		if err := json.Unmarshal([]byte(cliJSON), &d); err != nil {
			t.Fatal(err)
		}
		return compactDigest(d)
	}
	return json.RawMessage(cliJSON)
}

// stdout runs memminer and returns its stdout unscrubbed; exit status 1
// is allowed only for a search that found nothing.
func (c *cli) stdout(args ...string) string {
	c.t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, func(k string) string { return c.env[k] })
	if code != 0 && (code != exitError || args[0] != "search" || errb.Len() > 0) {
		c.t.Fatalf("memminer %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// daemonTimes are the parts of a daemon's status that change while a test
// runs: its uptime and its periodic scans.
var daemonTimes = regexp.MustCompile(`(?m)("uptime_seconds": |up |"last_scan": |last scan: +|"scans": )[^,\n]*`)

func dropDaemonTimes(s string) string { return daemonTimes.ReplaceAllString(s, "${1}$$X") }

// canonicalJSON re-encodes a JSON value as the CLI prints JSON, so values
// compare byte for byte whatever the key order or escaping.
func canonicalJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(data, &generic); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	var b bytes.Buffer
	if err := writeJSON(&b, generic); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

// toolText joins a result's text contents.
func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("content %T, want text", c)
		}
		parts = append(parts, tc.Text)
	}
	return strings.Join(parts, "\n")
}

// newMCPServerFor builds the MCP server `memminer mcp --wing wing` would
// serve for c's palace, in process.
func newMCPServerFor(t *testing.T, c *cli, wing string) *mcpServer {
	t.Helper()
	a := newApp(io.Discard, &syncBuffer{}, func(k string) string { return c.env[k] })
	cmd, _, err := a.rootCmd().Find([]string{"mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.resolve(cmd); err != nil {
		t.Fatal(err)
	}
	return a.newMCPServer(wing)
}

// connectInMemory connects the SDK's client to s over an in-memory
// transport, until the test ends.
func connectInMemory(t *testing.T, s *mcpServer) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "memminer-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// newMinedCLI is a CLI whose palace holds the example hive, with two
// conflict copies in it (dwight's and pam's); the hive is configured.
func newMinedCLI(t *testing.T) *cli {
	t.Helper()
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	c.ok("mine", c.hive)
	addConflictCopies(t, c.hive)
	c.serve(t)
	return c
}

func TestMCPToolsMatchCLI(t *testing.T) {
	c := newMinedCLI(t)
	checkToolsMatchCLI(t, connectInMemory(t, newMCPServerFor(t, c, "jim")), c)
}

// TestMCPToolsListIsSmall keeps what agents pay in context for the tools
// under 1,500 tokens, counted as wake-up counts them (never fewer than
// words, nor than a third of the characters).
func TestMCPToolsListIsSmall(t *testing.T) {
	c := newCLI(t)
	cs := connectInMemory(t, newMCPServerFor(t, c, "dwight"))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.Description == "" {
			t.Errorf("tool %s lacks a description or an input schema", tool.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"conflicts", "handoff", "pack", "propose_skill", "read_note", "remember", "search", "status", "wake_up"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	n := wakeup.EstimateTokens(string(data))
	t.Logf("tools/list: %d bytes, %d estimated tokens", len(data), n)
	if n >= 1500 {
		t.Errorf("tools/list costs %d estimated tokens, want under 1500:\n%s", n, data)
	}
}

func TestMCPToolErrors(t *testing.T) {
	c := newCLI(t)
	cs := connectInMemory(t, newMCPServerFor(t, c, "dwight"))
	// An empty palace: each tool says so, as the CLI does.
	for tool, args := range map[string]map[string]any{"search": {"query": "x"}, "wake_up": {}} {
		res := callTool(t, cs, tool, args)
		if !res.IsError || !strings.Contains(resultText(t, res), "has no notes yet") {
			t.Errorf("%s on an empty palace: %+v", tool, resultText(t, res))
		}
	}
	if list, err := cs.ListResources(context.Background(), nil); err != nil || len(list.Resources) != 1 || list.Resources[0].URI != wakeupURI {
		t.Errorf("resources of an empty palace: %+v, %v", list, err)
	}
	c.ok("mine", c.hive)
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"search", map[string]any{"query": "x", "wing": "zed"}, `unknown wing "zed" (known wings: angela, dwight, jim, pam)`},
		{"search", map[string]any{"query": "x", "wing": "../x"}, `wing id "../x" is not valid`},
		{"search", map[string]any{"query": "  "}, "search needs a QUERY"},
		{"search", map[string]any{"query": "x", "results": 5000}, "--results must be between 1 and 1000, got 5000"},
		{"search", map[string]any{}, `missing properties: ["query"]`},
		{"search", map[string]any{"query": 7}, "want \"string\""},
		{"search", map[string]any{"query": "x", "color": "red"}, "color"},
		{"wake_up", map[string]any{"tokens": 10}, "--tokens must be at least 100, got 10"},
		{"wake_up", map[string]any{"wing": "zed"}, "zed"},
		{"conflicts", map[string]any{"wing": "zed"}, "zed"},
	}
	for _, tt := range tests {
		res := callTool(t, cs, tt.tool, tt.args)
		if text := resultText(t, res); !res.IsError || !strings.Contains(text, tt.want) {
			t.Errorf("%s %v: error %t %q, want an error with %q", tt.tool, tt.args, res.IsError, text, tt.want)
		}
	}
	// An unknown tool is a protocol error; the server goes on serving.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "frobnicate"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("unknown tool: %v", err)
	}
	if res := callTool(t, cs, "status", nil); res.IsError {
		t.Errorf("status after errors: %s", resultText(t, res))
	}
}

func TestMCPConflictsCheck(t *testing.T) {
	c := newMinedCLI(t)
	cs := connectInMemory(t, newMCPServerFor(t, c, "dwight"))
	tests := []struct {
		args map[string]any
		safe bool
		text string
	}{
		{map[string]any{"check": true}, false, "not safe to write: wing dwight has 1 open conflict; merge first"},
		{map[string]any{"check": true, "wing": "jim"}, true, "safe to write"},
	}
	for _, tt := range tests {
		res := callTool(t, cs, "conflicts", tt.args)
		var out conflictsResult
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		if res.IsError || out.SafeToWrite == nil || *out.SafeToWrite != tt.safe || !strings.HasSuffix(resultText(t, res), "\n"+tt.text) {
			t.Errorf("conflicts %v: %s (%s)", tt.args, data, resultText(t, res))
		}
	}
	// Without check the answer is the CLI's, with no verdict.
	res := callTool(t, cs, "conflicts", map[string]any{})
	if strings.Contains(canonicalJSON(t, res.StructuredContent), "safe_to_write") {
		t.Errorf("conflicts without check: %v", res.StructuredContent)
	}
}

func TestMCPResources(t *testing.T) {
	c := newMinedCLI(t)
	cs := connectInMemory(t, newMCPServerFor(t, c, "dwight"))
	ctx := context.Background()
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	want := []string{"memminer://wake-up", "memminer://wing/angela/memory.md", "memminer://wing/dwight/memory.md", "memminer://wing/jim/memory.md", "memminer://wing/pam/memory.md"}
	if !slices.Equal(uris, want) {
		t.Errorf("resources %v, want %v (conflict copies are no memory files)", uris, want)
	}
	read := func(uri string) (string, error) {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return "", err
		}
		return res.Contents[0].Text, nil
	}
	got, err := read("memminer://wing/dwight/memory.md")
	if wantText, _ := os.ReadFile(filepath.Join(c.hive, "agents", "dwight", "memory.md")); err != nil || got != string(wantText) {
		t.Errorf("dwight's memory.md: %q, %v", got, err)
	}
	// Its hash is the one remember's expect_hash takes.
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "memminer://wing/dwight/memory.md"})
	if want, _ := os.ReadFile(filepath.Join(c.hive, "agents", "dwight", "memory.md")); err != nil || res.Contents[0].Meta["hash"] != memfile.Hash(want) {
		t.Errorf("dwight's memory.md hash: %v, %v", res.Contents[0].Meta, err)
	}
	digest, _ := c.runRaw("wake-up")
	if got, err := read(wakeupURI); err != nil || got != digest {
		t.Errorf("wake-up resource: %q, %v; want the CLI's digest %q", got, err, digest)
	}
	// A file written after the list is served when it is a memory file.
	testutil.WriteFile(t, filepath.Join(c.hive, "agents", "jim", "notes", "new.md"), "- a new note\n")
	if got, err := read("memminer://wing/jim/notes/new.md"); err != nil || got != "- a new note\n" {
		t.Errorf("a new memory file: %q, %v", got, err)
	}
	for _, uri := range []string{
		"memminer://wing/dwight/../jim/memory.md",
		"memminer://wing/dwight/%2e%2e/jim/memory.md",
		"memminer://wing/dwight/memory.sync-conflict-20240131-093000-ABCDEFG.md",
		"memminer://wing/zed/memory.md",
		"memminer://wing/dwight/nope.md",
		"file:///etc/passwd",
	} {
		if got, err := read(uri); err == nil {
			t.Errorf("%s read: %q", uri, got)
		}
	}
	testutil.WriteFile(t, filepath.Join(c.hive, "agents", "pam", "bad.md"), "not \xff utf-8\n")
	if _, err := read("memminer://wing/pam/bad.md"); err == nil || !strings.Contains(err.Error(), "bad.md") {
		t.Errorf("invalid UTF-8 file: %v", err)
	}
	// A FIFO is no memory file: refused at once, never waited on.
	if err := syscall.Mkfifo(filepath.Join(c.hive, "agents", "pam", "pipe.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := read("memminer://wing/pam/pipe.md"); err == nil {
		t.Errorf("a FIFO read: %q", got)
	}
}

func TestMCPOverHTTP(t *testing.T) {
	c := newMinedCLI(t)
	s := newMCPServerFor(t, c, "jim")
	o := defaultHTTPOptions()
	o.token = "test-token-0123456789"
	hs := httptest.NewServer(s.httpHandler(o))
	defer hs.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "memminer-test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: bearerClient(o.token)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	checkToolsMatchCLI(t, cs, c)

	// A body over the limit is refused, and the server goes on.
	resp, err := bearerClient(o.token).Post(hs.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("x", maxMCPMessageBytes)+`"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 400 {
		t.Errorf("oversized request: %s", resp.Status)
	}
	if res := callTool(t, cs, "status", nil); res.IsError {
		t.Errorf("status after an oversized request: %s", resultText(t, res))
	}
}

func TestMCPCommandErrors(t *testing.T) {
	c := newCLI(t)
	tests := []struct {
		args []string
		env  string // MEMMINER_WING
		want string
	}{
		{[]string{"mcp", "--http", "0.0.0.0:8765"}, "", `--http address "0.0.0.0:8765" is reachable from other machines; use 127.0.0.1:8765 or ::1, or pass --allow-remote`},
		{[]string{"mcp", "--http", "8765"}, "", "want host:port"},
		{[]string{"mcp", "--wing", "../x"}, "", `--wing: wing id "../x" is not valid`},
		{[]string{"mcp"}, "a b", `--wing: wing id "a b" is not valid`},
		{[]string{"mcp", "extra"}, "", "mcp takes no arguments"},
	}
	for _, tt := range tests {
		c.env["MEMMINER_WING"] = tt.env
		_, stderr, code := c.run(tt.args...)
		if code != exitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v (MEMMINER_WING=%q): exit %d, %q; want exit %d and %q", tt.args, tt.env, code, stderr, exitUsage, tt.want)
		}
	}
}

// mcpCommand is `memminer mcp` as a subprocess: this test binary, run as
// memminer (see TestMain).
func mcpCommand(c *cli, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"mcp"}, args...)...)
	cmd.Env = []string{"MEMMINER_TEST_MAIN=1"}
	for k, v := range c.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// TestMCPBinary runs every tool against the real binary over stdio, the
// SDK's command transport, without a daemon and then with one: the answers
// are the CLI's each time, and with the daemon they come from it.
func TestMCPBinary(t *testing.T) {
	c := newMinedCLI(t)
	cmd := mcpCommand(c, "--wing", "jim")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "memminer-test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	checkToolsMatchCLI(t, cs, c)

	checkRememberThenFind(t, cs, "Jim's MCP note one: the lab printer is on floor 3.")

	r := startRun(t, c, c.hive)
	r.idle(t, c)
	checkToolsMatchCLI(t, cs, c)
	checkRememberThenFind(t, cs, "Jim's MCP note two: the lab printer moved to floor 4.")
	res := callTool(t, cs, "status", nil)
	if !strings.Contains(resultText(t, res), "active:      true") {
		t.Errorf("status with a daemon: %s", resultText(t, res))
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v (stderr: %s)", err, stderr.String())
	}
}

// TestMCPBinaryBadInput writes malformed, oversized and unknown messages
// to the real binary's stdin: each gets a JSON-RPC error, stdout carries
// nothing else, and the server goes on serving.
func TestMCPBinaryBadInput(t *testing.T) {
	c := newMinedCLI(t)
	cmd := mcpCommand(c)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("memminer mcp: %v\n%s", err, stderr.String())
		}
	}()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 4<<20)
	send := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("no answer to %.80s: %v\nstderr: %s", line, lines.Err(), stderr.String())
		}
		var msg map[string]any
		if err := json.Unmarshal(lines.Bytes(), &msg); err != nil || msg["jsonrpc"] != "2.0" {
			t.Fatalf("stdout line is no JSON-RPC message: %q", lines.Text())
		}
		return msg
	}
	errorCode := func(msg map[string]any) float64 {
		e, _ := msg["error"].(map[string]any)
		code, _ := e["code"].(float64)
		return code
	}
	init := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if init["result"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		line string
		code float64
		id   any
	}{
		{"this is not json", -32700, nil},
		{`{"jsonrpc":"2.0","id":2,"method":`, -32700, nil},
		{`[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, -32600, nil},
		{`{"jsonrpc":"1.0","id":4,"method":"ping"}`, -32600, float64(4)},
		{`{"jsonrpc":"2.0","id":5,"method":"no/such/method"}`, -32601, float64(5)},
		{`{"jsonrpc":"2.0","id":55}`, -32600, float64(55)},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, -32602, float64(6)},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"query":"` + strings.Repeat("x", maxMCPMessageBytes) + `"}}}`, -32600, nil},
	}
	for _, tt := range tests {
		msg := send(tt.line)
		if errorCode(msg) != tt.code || msg["id"] != tt.id {
			t.Errorf("%.60s: answer %v, want error %v with id %v", tt.line, msg, tt.code, tt.id)
		}
	}
	msg := send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"search","arguments":{"query":"db-2","wing":"dwight","results":1}}}`)
	result, _ := msg["result"].(map[string]any)
	if msg["id"] != float64(8) || result == nil || result["isError"] == true || !strings.Contains(canonicalJSON(t, result["structuredContent"]), "db-2") {
		t.Errorf("search after bad input: %v", msg)
	}
}

// TestMCPTypeScriptClient drives the binary with the official MCP
// TypeScript SDK (installed by .ci/setup-mcp-client.sh), a client nobody
// here wrote: it lists and calls every tool, reads resources, and gets the
// same answers the CLI gives.
func TestMCPTypeScriptClient(t *testing.T) {
	node, err := exec.LookPath("node")
	dir := os.Getenv("MEMMINER_MCP_CLIENT_DIR")
	if dir == "" {
		if cache, cerr := os.UserCacheDir(); cerr == nil {
			dir = filepath.Join(cache, "memminer", "mcp-client")
		}
	}
	modules := filepath.Join(dir, "node_modules")
	if _, serr := os.Stat(filepath.Join(modules, "@modelcontextprotocol", "sdk", "package.json")); err != nil || serr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node or @modelcontextprotocol/sdk missing (node: %v; %s: %v); run .ci/setup-mcp-client.sh", err, modules, serr)
		}
		t.Skipf("node or @modelcontextprotocol/sdk missing; run .ci/setup-mcp-client.sh")
	}
	c := newMinedCLI(t)
	server := mcpCommand(c, "--wing", "dwight")
	argv, _ := json.Marshal(server.Args)
	ctx, cancel := testutil.WaitContext(t)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "mcp-client.cjs"), string(argv))
	cmd.Env = append(server.Env, "NODE_PATH="+modules, "PATH="+os.Getenv("PATH"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, stderr.String())
	}
	var got struct {
		Server struct{ Name string }
		Tools  []string
		Calls  map[string]struct {
			StructuredContent any
			Content           []struct{ Text string }
			IsError           bool
		}
		UnknownTool struct {
			Code    int
			Message string
		}
		Resources []string
		Memory    string
		WakeUp    string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node client output: %v\n%s", err, out)
	}
	if got.Server.Name != "memminer" || !reflect.DeepEqual(got.Tools, []string{"conflicts", "handoff", "pack", "propose_skill", "read_note", "remember", "search", "status", "wake_up"}) {
		t.Errorf("server %q, tools %v", got.Server.Name, got.Tools)
	}
	for name, cli := range map[string][]string{
		"search":    {"search", "db-2", "--wing", "dwight", "-n", "2"},
		"wake_up":   {"wake-up", "--tokens", "300"},
		"conflicts": {"conflicts", "--wing", "dwight"},
	} {
		call := got.Calls[name]
		wantJSON, _ := c.runRaw(append(cli, "--json")...)
		wantText, _ := c.runRaw(cli...)
		if call.IsError || canonicalJSON(t, call.StructuredContent) != canonicalJSON(t, mcpForm(t, name, wantJSON)) || len(call.Content) == 0 || call.Content[0].Text != wantText {
			t.Errorf("%s through the TypeScript client: %+v\nwant %s", name, call, wantJSON)
		}
	}
	if call := got.Calls["unknown_wing"]; !call.IsError || len(call.Content) == 0 || !strings.Contains(call.Content[0].Text, "known wings: angela, dwight, jim, pam") {
		t.Errorf("unknown wing: %+v", call)
	}
	if call := got.Calls["remember_refused"]; !call.IsError || len(call.Content) == 0 || !strings.Contains(call.Content[0].Text, "open conflict") {
		t.Errorf("remember into a wing with a conflict copy: %+v", call)
	}
	if got.UnknownTool.Code != -32602 {
		t.Errorf("unknown tool: %+v", got.UnknownTool)
	}
	if !slices.Contains(got.Resources, "memminer://wing/dwight/memory.md") || !slices.Contains(got.Resources, wakeupURI) {
		t.Errorf("resources: %v", got.Resources)
	}
	if want, _ := os.ReadFile(filepath.Join(c.hive, "agents", "dwight", "memory.md")); got.Memory != string(want) {
		t.Errorf("memory file through the TypeScript client: %q", got.Memory)
	}
	if want, _ := c.runRaw("wake-up"); got.WakeUp != want {
		t.Errorf("wake-up resource through the TypeScript client: %q", got.WakeUp)
	}
}

// TestMCPBinaryHTTP runs the binary with --http on a loopback port and
// stdin closed: it keeps serving streamable HTTP until SIGTERM, then exits 0.
func TestMCPBinaryHTTP(t *testing.T) {
	c := newMinedCLI(t)
	cmd := mcpCommand(c, "--wing", "jim", "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// One goroutine reads stderr to its end, then waits for the process.
	urls := make(chan string, 1)
	var rest syncBuffer
	var waitErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		urlRe := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			if u := urlRe.FindString(lines.Text()); u != "" && len(urls) == 0 {
				urls <- u
			}
			rest.Write(append(lines.Bytes(), '\n'))
		}
		waitErr = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // when the test failed before SIGTERM
		<-done
	})
	var endpoint string
	select {
	case endpoint = <-urls:
	case <-done:
		t.Fatalf("memminer mcp --http exited: %v\n%s", waitErr, rest.String())
	}
	ctx := context.Background()
	token := strings.TrimSpace(c.ok("mcp", "token")) // made by the server on start
	if _, err := mcp.NewClient(&mcp.Implementation{Name: "memminer-test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil); err == nil {
		t.Error("a client without the token connected")
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "memminer-test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: bearerClient(token)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkToolsMatchCLI(t, cs, c)
	cs.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-done
	if waitErr != nil {
		t.Errorf("memminer mcp --http after SIGTERM: %v\n%s", waitErr, rest.String())
	}
}

// TestReadMemoryFile: only regular UTF-8 text within the limit is served,
// and a FIFO is refused without blocking.
func TestReadMemoryFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		testutil.WriteFile(t, p, text)
		return p
	}
	fifo := filepath.Join(dir, "pipe.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		err  string // substring; empty: served
	}{
		{write("ok.md", "- a note\n"), ""},
		{write("big.md", strings.Repeat("x", 65)), "larger than max_file_bytes (64 bytes)"},
		{write("bad.md", "not \xff utf-8\n"), "bad.md"},
		{write("nul.md", "a\x00b"), "nul.md"},
		{fifo, "not a regular file"},
		{filepath.Join(dir, "gone.md"), "no such file"},
	}
	for _, tt := range tests {
		text, hash, err := readMemoryFile(tt.path, 64)
		switch {
		case tt.err == "" && (err != nil || hash != memfile.Hash([]byte(text))):
			t.Errorf("%s: %q, %s, %v", tt.path, text, hash, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: error %v, want %q", tt.path, err, tt.err)
		}
	}
}

// TestMCPWakeUpLeadsWithTheServersHandoffs: wake_up without a wing is the
// digest of the agent the server speaks for, led by the handoffs open to
// it; another agent's server does not show them.
func TestMCPWakeUpLeadsWithTheServersHandoffs(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	c.ok("mine", c.hive)
	ref := handoffRefRe.FindString(c.ok("handoff", "--wing", "dwight", "--to", "pam", "Finish the db-2 failover runbook"))
	for _, tc := range []struct {
		wing string
		want bool
	}{{"pam", true}, {"jim", false}} {
		res := callTool(t, connectInMemory(t, newMCPServerFor(t, c, tc.wing)), "wake_up", map[string]any{})
		if res.IsError {
			t.Fatalf("%s's wake_up: %s", tc.wing, resultText(t, res))
		}
		text := resultText(t, res)
		if got := strings.Contains(text, "## Open handoffs to you") && strings.Contains(text, ref); got != tc.want {
			t.Errorf("%s's wake_up shows %s: %v, want %v\n%s", tc.wing, ref, got, tc.want, text)
		}
	}
}
