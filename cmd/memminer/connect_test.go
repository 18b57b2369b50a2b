package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memminer/memminer/clients/connect"
	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
)

// useConnectExe makes the installed commands name a fixed program.
func useConnectExe(t *testing.T, exe string) {
	old := connectExe
	connectExe = func() (string, error) { return exe, nil }
	t.Cleanup(func() { connectExe = old })
}

func TestConnectCLI(t *testing.T) {
	useConnectExe(t, "/usr/local/bin/memminer")
	c := newCLI(t)
	home := c.env["HOME"]
	config := filepath.Join(home, ".codex", "config.toml")
	testutil.WriteFile(t, config, "# mine\nmodel = \"o3\"\n")

	// The palace and model come from the environment (newCLI's), which
	// the agent client does not have: they are written.
	out := c.ok("connect", "codex", "--wing", "Pam", "--dry-run")
	for _, want := range []string{
		"--- /dev/null\n+++ " + filepath.Join(home, ".codex", "hooks.json"),
		`+            "command": "/usr/local/bin/memminer wake-up --hook codex --wing pam --palace $PALACE --model lexical"`,
		"+[mcp_servers.memminer]\n+command = '/usr/local/bin/memminer'\n+args = ['mcp', '--wing', 'pam', '--palace', '$PALACE', '--model', 'lexical']\n",
		"dry run: nothing written (connect codex, wing pam, user files)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".codex", "hooks.json")); err == nil {
		t.Error("dry run wrote hooks.json")
	}

	// The hive is written however it was found: here MEMMINER_HIVE.
	c.env["MEMMINER_HIVE"] = c.hive
	out = c.ok("connect", "codex", "--wing", "pam", "--json")
	delete(c.env, "MEMMINER_HIVE")
	var res struct {
		Agent, Wing, Scope string
		Files              []struct{ Path, Role, Action string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Agent != "codex" || res.Wing != "pam" || res.Scope != "user" || len(res.Files) != 3 || res.Files[1].Action != "changed" {
		t.Errorf("connect --json: %s", out)
	}
	if got := testutil.ReadFile(t, config); !strings.Contains(got, "args = ['mcp', '--wing', 'pam', '--hive', '"+c.hive+"', '--palace', '"+c.palace+"', '--model', 'lexical']") {
		t.Errorf("config.toml:\n%s", got)
	}
	if got := testutil.ReadFile(t, filepath.Join(home, ".codex", "AGENTS.md")); !strings.Contains(got, "Your wing: `pam`") {
		t.Errorf("AGENTS.md lacks the protocol for pam:\n%s", got)
	}

	st := c.ok("status")
	if !strings.Contains(st, "agents:      1 connected\n  codex, wing pam, user files: "+filepath.Join(home, ".codex", "hooks.json")) {
		t.Errorf("status:\n%s", st)
	}
	var sj struct {
		Agents []connectedAgent
	}
	json.Unmarshal([]byte(c.stdout("status", "--json")), &sj)
	if len(sj.Agents) != 1 || sj.Agents[0].Agent != "codex" || sj.Agents[0].Wing != "pam" {
		t.Errorf("status --json agents: %+v", sj.Agents)
	}

	out = c.ok("disconnect", "codex")
	if !strings.Contains(out, "disconnected codex (wing pam, user files)\n  deleted    hooks") || !strings.Contains(out, "restored   mcp") {
		t.Errorf("disconnect:\n%s", out)
	}
	if got := testutil.ReadFile(t, config); got != "# mine\nmodel = \"o3\"\n" {
		t.Errorf("config.toml after disconnect: %q", got)
	}
	if !strings.Contains(c.ok("status"), "agents:      none connected") {
		t.Error("status still lists codex")
	}
}

// TestConnectSaysHowHooksRun: Codex skips untrusted hooks silently, so
// connect codex says how to have them run; Claude Code needs nothing.
func TestConnectSaysHowHooksRun(t *testing.T) {
	useConnectExe(t, "/usr/local/bin/memminer")
	const note = "note: Codex runs the hooks only when started with --dangerously-bypass-hook-trust"
	for _, tt := range []struct {
		agent    string
		wantNote bool
	}{{"codex", true}, {"claude-code", false}} {
		c := newCLI(t)
		out := c.ok("connect", tt.agent, "--wing", "pam")
		if strings.Contains(out, note) != tt.wantNote {
			t.Errorf("connect %s (note wanted: %v):\n%s", tt.agent, tt.wantNote, out)
		}
		var res struct{ Note string }
		if err := json.Unmarshal([]byte(c.ok("connect", tt.agent, "--wing", "pam", "--json")), &res); err != nil || (res.Note != "") != tt.wantNote {
			t.Errorf("connect %s --json: note %q, %v", tt.agent, res.Note, err)
		}
	}
}

func TestConnectCLIRefuses(t *testing.T) {
	useConnectExe(t, "/usr/local/bin/memminer")
	c := newCLI(t)
	home := c.env["HOME"]
	settings := filepath.Join(home, ".claude", "settings.json")
	testutil.WriteFile(t, settings, `{"hooks": {`)
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"connect", "claude-code", "--wing", "dwight"}, exitError, settings + ": not JSON connect can edit"},
		{[]string{"connect", "claude-code"}, exitUsage, "connect needs the agent's wing"},
		{[]string{"connect", "cursor", "--wing", "dwight"}, exitUsage, `unknown agent "cursor" (want: ` + strings.Join(connect.AgentIDs(), ", ") + `)`},
		{[]string{"connect", "codex", "--wing", "dwight", "--project", filepath.Join(home, "nowhere")}, exitUsage, "not a directory"},
		{[]string{"disconnect", "codex"}, exitError, "not connected"},
	}
	for _, tc := range cases {
		_, stderr, code := c.run(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
	if got := testutil.ReadFile(t, settings); got != `{"hooks": {` {
		t.Errorf("refused file changed: %q", got)
	}
	for _, f := range []string{filepath.Join(home, ".claude.json"), filepath.Join(home, ".claude", "CLAUDE.md")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s written although a file was refused", f)
		}
	}
}

func TestRecallBudget(t *testing.T) {
	long := strings.Repeat("word ", 400)
	hits := []api.Hit{
		{Note: api.Note{Wing: "dwight", Source: "agents/dwight/memory.md", Line: 13, Text: "Production Postgres runs on db-2.\nSince 2026-09."}},
		{Note: api.Note{Wing: "pam", Source: "agents/pam/memory.md", Line: 4, Text: long}},
		{Note: api.Note{Wing: "jim", Source: "agents/jim/memory.md", Line: 2, Text: "never reached"}},
	}
	d := "2026-10-02"
	hits[0].Date = &d
	hits[0].Stale = true
	reason := "review due 2026-11-01"
	hits[0].StaleReason = &reason
	for _, budget := range []int{1, 40, 60, 100, 300, 1000} {
		out := renderRecall(hits, budget)
		if got := wakeup.EstimateTokens(out); got > budget {
			t.Errorf("budget %d: %d tokens:\n%s", budget, got, out)
		}
		if budget < 50 && out != "" {
			t.Errorf("budget %d: want nothing, got %q", budget, out)
		}
		if budget >= 100 && !strings.Contains(out, "- [dwight] Production Postgres runs on db-2. Since 2026-09. (agents/dwight/memory.md:13, 2026-10-02, STALE: review due 2026-11-01)\n") {
			t.Errorf("budget %d: first hit missing or malformed:\n%s", budget, out)
		}
		// A note is given whole or not at all: a cut could drop the part
		// that answers, and the notes after one that does not fit are not
		// reached.
		if budget < 1000 && (strings.Contains(out, "word") || strings.Contains(out, "…") || strings.Contains(out, "never reached")) {
			t.Errorf("budget %d: the long note is cut to fit, or a later one given:\n%s", budget, out)
		}
		if budget >= 1000 && !strings.Contains(out, strings.TrimSpace(long)+" (agents/pam/memory.md:4") {
			t.Errorf("budget %d: the long note is not given whole:\n%s", budget, out)
		}
	}
	if out := renderRecall(nil, 300); out != "" {
		t.Errorf("no hits: %q", out)
	}
}

func TestRecallHook(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	// No palace yet: nothing, exit 0, and not even a warning.
	out, stderr, code := c.runStdin(`{"hook_event_name":"UserPromptSubmit","prompt":"where does Postgres run?"}`, "recall", "--hook", "claude-code")
	if out != "" || code != 0 || stderr != "" {
		t.Errorf("empty palace: %q, %q, exit %d", out, stderr, code)
	}
	c.ok("mine", c.hive)
	out, _, code = c.runStdin(`{"hook_event_name":"UserPromptSubmit","prompt":"which server runs the production Postgres?"}`, "recall", "--hook", "codex", "--wing", "pam")
	if code != 0 || !strings.HasPrefix(out, recallHeader+"\n- [dwight] Production Postgres runs on db-2") || wakeup.EstimateTokens(out) > defaultRecallTokens {
		t.Errorf("recall: exit %d\n%s", code, out)
	}
	// The same as the plain command, which searches the same way.
	if plain := c.ok("recall", "which server runs the production Postgres?"); plain != out {
		t.Errorf("recall PROMPT differs from the hook:\n%s\n%s", plain, out)
	}
	// Gemini CLI reads JSON, and puts the session-start context in front
	// of the first prompt: recall searches with the prompt alone.
	digest := "<hook_context>" + strings.Repeat("Wake-up digest zxqv plorth. ", 100) + "</hook_context>\n\n"
	gemIn, _ := json.Marshal(map[string]string{"hook_event_name": "BeforeAgent", "prompt": digest + "which server runs the production Postgres?"})
	gem, _, code := c.runStdin(string(gemIn), "recall", "--hook", "gemini", "--wing", "pam")
	var gemOut struct {
		HookSpecificOutput struct{ HookEventName, AdditionalContext string }
	}
	if err := json.Unmarshal([]byte(gem), &gemOut); err != nil || code != 0 || gemOut.HookSpecificOutput.HookEventName != "BeforeAgent" ||
		gemOut.HookSpecificOutput.AdditionalContext != out {
		t.Errorf("gemini hook: exit %d, %v\n%s", code, err, gem)
	}
	// Nothing relevant: nothing printed.
	if out, _, code := c.runStdin(`{"prompt":"zxqv plorth"}`, "recall", "--hook", "claude-code"); out != "" || code != 0 {
		t.Errorf("irrelevant prompt: %q, exit %d", out, code)
	}
	// Any error: nothing on stdout, a line on stderr, exit 0.
	for name, tc := range map[string]struct {
		stdin string
		args  []string
		env   map[string]string
	}{
		"bad JSON":              {stdin: "{not json", args: []string{"recall", "--hook", "claude-code"}},
		"unknown agent":         {stdin: `{"prompt":"db-2"}`, args: []string{"recall", "--hook", "cursor"}},
		"bad config":            {stdin: `{"prompt":"db-2"}`, args: []string{"recall", "--hook", "codex"}, env: map[string]string{"MEMMINER_EMBEDDING_MODEL": "nonsense:x"}},
		"unknown flag":          {stdin: `{"prompt":"db-2"}`, args: []string{"recall", "--hook", "codex", "--from-the-future", "x"}},
		"unknown flag, wake-up": {args: []string{"wake-up", "--hook=codex", "--wing", "pam", "--from-the-future"}},
		"wake-up":               {args: []string{"wake-up", "--hook", "codex", "--wing", "nobody"}},
		"unknown flag, capture": {stdin: "{}", args: []string{"capture", "--hook", "codex", "--from-the-future"}},
	} {
		saved := map[string]string{}
		for k, v := range tc.env {
			saved[k], c.env[k] = c.env[k], v
		}
		out, stderr, code := c.runStdin(tc.stdin, tc.args...)
		for k, v := range saved {
			c.env[k] = v
		}
		if name == "unknown flag" {
			if code != 0 || !strings.Contains(out, "db-2") {
				t.Errorf("%s: exit %d, %q", name, code, out)
			}
			continue
		}
		if name == "unknown flag, wake-up" {
			if code != 0 || !strings.HasPrefix(out, wakeupHeader) {
				t.Errorf("%s: exit %d, %q", name, code, out)
			}
			continue
		}
		if out != "" || code != 0 || !strings.Contains(stderr, "--hook") {
			t.Errorf("%s: stdout %q, stderr %q, exit %d", name, out, stderr, code)
		}
	}
	// Run by a person, an unknown flag is a usage error, as for search.
	for _, args := range [][]string{{"recall", "postgres", "--bogus-flag"}, {"wake-up", "--bogus-flag"}, {"recall", "--hook-x", "postgres"}} {
		if _, stderr, code := c.run(args...); code != exitUsage || !strings.Contains(stderr, "unknown flag") {
			t.Errorf("memminer %s: exit %d, %s", strings.Join(args, " "), code, stderr)
		}
	}
	// The session-start hook is the digest, introduced.
	out, _, code = c.runStdin(`{"hook_event_name":"SessionStart"}`, "wake-up", "--hook", "claude-code", "--wing", "pam")
	if digest := c.ok("wake-up", "--wing", "pam"); code != 0 || out != wakeupHeader+digest {
		t.Errorf("wake-up --hook: exit %d\n%s", code, out)
	}
	// Through a daemon: the same notes, the same digest.
	direct := c.ok("recall", "which server runs the production Postgres?")
	startRun(t, c, c.hive)
	out, _, code = c.runStdin(`{"prompt":"which server runs the production Postgres?"}`, "recall", "--hook", "claude-code")
	if code != 0 || out != direct {
		t.Errorf("recall through the daemon:\n%s\nwant\n%s", out, direct)
	}
	out, _, _ = c.runStdin("", "wake-up", "--hook", "claude-code", "--wing", "pam")
	if digest := c.ok("wake-up", "--wing", "pam"); out != wakeupHeader+digest {
		t.Errorf("wake-up --hook through the daemon:\n%s", out)
	}
}

var handoffRefRe = regexp.MustCompile(`ho-[0-9a-f]{8}`)

// TestHandoff hands work from dwight to pam and back, without a daemon
// and with one: the note is in the sender's file, pam's wake-up leads with
// it until pam accepts it in her own file.
func TestHandoff(t *testing.T) {
	for _, withDaemon := range []bool{false, true} {
		name := "direct"
		if withDaemon {
			name = "daemon"
		}
		t.Run(name, func(t *testing.T) {
			c := newCLI(t)
			c.env["MEMMINER_HIVE"] = c.hive
			c.ok("mine", c.hive)
			if withDaemon {
				startRun(t, c, c.hive)
			}
			// Each agent writes its own memory file of this machine.
			written := regexp.MustCompile(`in (agents/(dwight|pam)/memory\.[^:]+):`)
			pamBefore := snapshot(t, []string{filepath.Join(c.hive, "agents", "pam", "memory.md")})
			out := c.ok("handoff", "--wing", "dwight", "--to", "pam", "Finish the db-2 failover runbook")
			ref := handoffRefRe.FindString(out)
			m := written.FindStringSubmatch(out)
			if ref == "" || m == nil || m[2] != "dwight" {
				t.Fatalf("handoff: %s", out)
			}
			dwight := filepath.Join(c.hive, m[1])
			if !strings.Contains(testutil.ReadFile(t, dwight), "- handoff "+ref+" to pam: Finish the db-2 failover runbook (added ") {
				t.Errorf("dwight's file lacks the handoff")
			}
			if entries, _ := os.ReadDir(filepath.Join(c.hive, "agents", "pam")); len(entries) != 1 || snapshot(t, []string{filepath.Join(c.hive, "agents", "pam", "memory.md")})[filepath.Join(c.hive, "agents", "pam", "memory.md")] != pamBefore[filepath.Join(c.hive, "agents", "pam", "memory.md")] {
				t.Errorf("handoff wrote into the receiver's directory")
			}
			digest := c.ok("wake-up", "--wing", "pam")
			if !strings.HasPrefix(digest, quote.Preamble+"\n## Open handoffs to you (accept one with: memminer handoff --accept REF)\n- "+ref+" from dwight, ") {
				t.Errorf("pam's wake-up does not lead with the handoff:\n%s", digest)
			}
			if strings.Contains(c.ok("wake-up", "--wing", "jim"), ref) {
				t.Errorf("jim's wake-up shows pam's handoff")
			}
			// MEMMINER_WING is the agent, as for remember and handoff: its
			// handoffs lead the story of every wing of its domain.
			c.env["MEMMINER_WING"] = "pam"
			if got := c.ok("wake-up"); !strings.HasPrefix(got, quote.Preamble+"\n## Open handoffs to you (accept one with: memminer handoff --accept REF)\n- "+ref+" from dwight, ") || !strings.Contains(got, "\n- jim: ") {
				t.Errorf("wake-up with MEMMINER_WING=pam:\n%s", got)
			}
			delete(c.env, "MEMMINER_WING")
			var d wakeup.Digest
			json.Unmarshal([]byte(c.ok("wake-up", "--wing", "pam", "--json")), &d)
			if len(d.Handoffs) != 1 || d.Handoffs[0].Ref != ref || d.Handoffs[0].From != "dwight" || d.Handoffs[0].Source != m[1] {
				t.Errorf("wake-up --json handoffs: %+v", d.Handoffs)
			}

			if _, stderr, code := c.run("handoff", "--wing", "jim", "--accept", ref); code != exitError || !strings.Contains(stderr, "addressed to pam, not to you (jim)") {
				t.Errorf("jim accepting pam's handoff: exit %d, %s", code, stderr)
			}
			out = c.ok("handoff", "--wing", "pam", "--accept", ref)
			am := written.FindStringSubmatch(out)
			if !strings.Contains(out, "accepted handoff "+ref+" from dwight in ") || am == nil || am[2] != "pam" {
				t.Fatalf("accept: %s", out)
			}
			if !strings.Contains(testutil.ReadFile(t, filepath.Join(c.hive, am[1])), "- accepted handoff "+ref+" from dwight: Finish the db-2 failover runbook (added ") {
				t.Errorf("pam's file lacks the acceptance")
			}
			if strings.Contains(c.ok("wake-up", "--wing", "pam"), "Open handoffs") {
				t.Errorf("an accepted handoff still leads the digest")
			}
			if out := c.ok("handoff", "--wing", "pam", "--accept", ref); !strings.Contains(out, "already accepted") {
				t.Errorf("accepting twice: %s", out)
			}
			for _, tc := range []struct {
				args []string
				want string
			}{
				{[]string{"handoff", "--to", "pam", "x"}, "handoff needs your wing"},
				{[]string{"handoff", "--wing", "pam", "--to", "pam", "x"}, "your own wing"},
				{[]string{"handoff", "--wing", "pam", "--to", "dwight"}, "needs a SUMMARY"},
				{[]string{"handoff", "--wing", "pam", "--accept", "nope"}, "ho- and 8 hex digits"},
				{[]string{"handoff", "--wing", "pam"}, "--to ID with a SUMMARY, or --accept REF"},
			} {
				if _, stderr, code := c.run(tc.args...); code != exitUsage || !strings.Contains(stderr, tc.want) {
					t.Errorf("%v: exit %d, %s", tc.args, code, stderr)
				}
			}
		})
	}
}

func TestMCPHandoff(t *testing.T) {
	c := newMinedCLI(t)
	cs := connectInMemory(t, newMCPServerFor(t, c, "jim"))
	res := callTool(t, cs, "handoff", map[string]any{"to": "angela", "summary": "Take over the quarterly report"})
	if res.IsError {
		t.Fatalf("handoff: %s", resultText(t, res))
	}
	ref := handoffRefRe.FindString(resultText(t, res))
	wake := connectInMemory(t, newMCPServerFor(t, c, "angela"))
	got := callTool(t, wake, "wake_up", map[string]any{"wing": "angela"})
	if !strings.HasPrefix(resultText(t, got), quote.Preamble+"\n## Open handoffs to you") || !strings.Contains(canonicalJSON(t, got.StructuredContent), `"ref": "`+ref+`"`) {
		t.Errorf("wake_up for angela: %s\n%s", resultText(t, got), canonicalJSON(t, got.StructuredContent))
	}
	if res := callTool(t, wake, "handoff", map[string]any{"accept": ref}); res.IsError || !strings.Contains(resultText(t, res), "accepted handoff "+ref+" from jim") {
		t.Errorf("accept: %s", resultText(t, res))
	}
	if res := callTool(t, wake, "handoff", map[string]any{"to": "jim"}); !res.IsError {
		t.Error("a handoff without a summary was accepted")
	}
}

// runStdin runs memminer with stdin as its standard input, scrubbed.
func (c *cli) runStdin(stdin string, args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	var out, errb strings.Builder
	code = runStdin(c, strings.NewReader(stdin), &out, &errb, args...)
	return c.scrub(out.String()), c.scrub(errb.String()), code
}
