package connect

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/tidwall/gjson"
)

func testOptions(t *testing.T, wing string) Options {
	t.Helper()
	home := t.TempDir()
	return Options{
		Scope:    Scope{Home: home},
		Wing:     wing,
		Install:  Install{Exe: "/opt/memminer/bin/memminer", Flags: []string{"--wing", wing}, Protocol: "# Memory protocol\nwing " + wing + "\n"},
		StateDir: filepath.Join(home, "state"),
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const claudeSettings = `{
  "theme": "dark",
  "hooks": {
    "SessionStart": [
      {"hooks": [{"type": "command", "command": "other-tool start"}]}
    ]
  },
  "permissions": {"allow": ["Bash(ls:*)"]},
  "zzz": 1
}
`

const claudeState = `{"numStartups": 3, "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": []}}, "projects": {}}`

const instructions = "# My rules\n\nBe brief.\n"

func TestConnectClaudeKeepsEverythingElse(t *testing.T) {
	o := testOptions(t, "dwight")
	home := o.Scope.Home
	settings, state, md := filepath.Join(home, ".claude", "settings.json"), filepath.Join(home, ".claude.json"), filepath.Join(home, ".claude", "CLAUDE.md")
	write(t, settings, claudeSettings)
	write(t, state, claudeState)
	write(t, md, instructions)

	res, err := Connect("claude-code", o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Files {
		if f.Action != Changed {
			t.Errorf("%s: %s, want changed", f.Path, f.Action)
		}
	}
	s := read(t, settings)
	for path, want := range map[string]string{
		"theme":                                "dark",
		"zzz":                                  "1",
		"hooks.SessionStart.0.hooks.0.command": "other-tool start",
		"hooks.SessionStart.1.hooks.0.command": "/opt/memminer/bin/memminer wake-up --hook claude-code --wing dwight",
		"hooks.UserPromptSubmit.0.hooks.0.command": "/opt/memminer/bin/memminer recall --hook claude-code --wing dwight",
		"hooks.PreCompact.0.hooks.0.command":       "/opt/memminer/bin/memminer capture --hook claude-code --wing dwight",
		"hooks.SessionEnd.0.hooks.0.command":       "/opt/memminer/bin/memminer capture --hook claude-code --wing dwight",
		"hooks.SessionEnd.0.hooks.0.timeout":       "30",
		"hooks.Stop.0.hooks.0.command":             "/opt/memminer/bin/memminer capture --hook claude-code --wing dwight",
		"permissions.allow.0":                      "Bash(ls:*)",
		"permissions.allow.1":                      "mcp__memminer",
	} {
		if got := gjson.Get(s, path).String(); got != want {
			t.Errorf("settings %s = %q, want %q\n%s", path, got, want, s)
		}
	}
	if !strings.HasPrefix(s, "{\n  \"theme\": \"dark\",\n  \"hooks\": {\n    \"SessionStart\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"other-tool start\"}]}") {
		t.Errorf("settings lost its formatting:\n%s", s)
	}
	st := read(t, state)
	if gjson.Get(st, "numStartups").Int() != 3 || gjson.Get(st, "mcpServers.github.command").String() != "gh-mcp" {
		t.Errorf("state lost keys: %s", st)
	}
	if got := gjson.Get(st, "mcpServers.memminer.args").String(); got != `["mcp","--wing","dwight"]` {
		t.Errorf("mcp args = %s", got)
	}
	m := read(t, md)
	if !strings.HasPrefix(m, instructions+"\n<!-- BEGIN memminer protocol") || !strings.Contains(m, "wing dwight\n<!-- END memminer protocol -->\n") {
		t.Errorf("CLAUDE.md:\n%s", m)
	}

	// Again: nothing changes.
	res, err = Connect("claude-code", o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Files {
		if f.Action != Unchanged {
			t.Errorf("second connect: %s %s\n%s", f.Path, f.Action, f.Diff)
		}
	}

	// Another wing replaces memminer's entries, and adds none.
	o2 := o
	o2.Wing, o2.Install.Flags = "pam", []string{"--wing", "pam"}
	if _, err := Connect("claude-code", o2); err != nil {
		t.Fatal(err)
	}
	s = read(t, settings)
	if n := len(gjson.Get(s, "hooks.SessionStart").Array()); n != 2 {
		t.Errorf("SessionStart has %d entries after reconnecting, want 2:\n%s", n, s)
	}
	if !strings.Contains(gjson.Get(s, "hooks.UserPromptSubmit.0.hooks.0.command").String(), "--wing pam") {
		t.Errorf("prompt hook not updated:\n%s", s)
	}

	res, err = Disconnect("claude-code", o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Files {
		if f.Action != Restored {
			t.Errorf("disconnect: %s %s", f.Path, f.Action)
		}
	}
	for path, want := range map[string]string{settings: claudeSettings, state: claudeState, md: instructions} {
		if got := read(t, path); got != want {
			t.Errorf("%s after disconnect:\n%s\nwant\n%s", path, got, want)
		}
	}
	if _, err := os.Stat(o.StateDir); err == nil {
		if entries, _ := os.ReadDir(o.StateDir); len(entries) != 0 {
			t.Errorf("state left behind: %v", entries)
		}
	}
	if _, err := Disconnect("claude-code", o); !errors.Is(err, ErrNotConnected) {
		t.Errorf("second disconnect: %v, want ErrNotConnected", err)
	}
}

func TestDisconnectKeepsChangesMadeSince(t *testing.T) {
	o := testOptions(t, "dwight")
	state := filepath.Join(o.Scope.Home, ".claude.json")
	write(t, state, claudeState)
	if _, err := Connect("claude-code", o); err != nil {
		t.Fatal(err)
	}
	// The client rewrites its state file as it runs.
	cur := read(t, state)
	cur = strings.Replace(cur, `"numStartups": 3`, `"numStartups": 4`, 1)
	write(t, state, strings.TrimSuffix(cur, "}")+`, "tipsHistory": {"a": 1}}`)

	res, err := Disconnect("claude-code", o)
	if err != nil {
		t.Fatal(err)
	}
	got := read(t, state)
	if gjson.Get(got, "mcpServers.memminer").Exists() || gjson.Get(got, "numStartups").Int() != 4 ||
		gjson.Get(got, "tipsHistory.a").Int() != 1 || gjson.Get(got, "mcpServers.github.command").String() != "gh-mcp" {
		t.Errorf("after disconnect: %s", got)
	}
	actions := map[string]string{}
	for _, f := range res.Files {
		actions[filepath.Base(f.Path)] = f.Action
	}
	// settings.json and CLAUDE.md were created by connect: deleted, with
	// the .claude directory connect made for them.
	want := map[string]string{".claude.json": Cleaned, "settings.json": Deleted, "CLAUDE.md": Deleted}
	for k, v := range want {
		if actions[k] != v {
			t.Errorf("%s: %s, want %s", k, actions[k], v)
		}
	}
	if _, err := os.Stat(filepath.Join(o.Scope.Home, ".claude")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".claude directory left behind: %v", err)
	}
}

func TestConnectCleansCreatedFileChangedSince(t *testing.T) {
	o := testOptions(t, "dwight")
	if _, err := Connect("claude-code", o); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(o.Scope.Home, ".claude", "settings.json")
	s := read(t, settings)
	write(t, settings, strings.Replace(s, "{", `{"model": "opus",`, 1))
	if _, err := Disconnect("claude-code", o); err != nil {
		t.Fatal(err)
	}
	if got := read(t, settings); got != "{\n  \"model\": \"opus\"}\n" && gjson.Get(got, "model").String() != "opus" || gjson.Get(got, "hooks").Exists() || gjson.Get(got, "permissions").Exists() {
		t.Errorf("settings after disconnect: %q", got)
	}
}

const codexConfig = `# my codex settings
model = "gpt-5" # the best one

[mcp_servers.github]
command = "gh-mcp" # keep me

[profiles.fast]
model = "gpt-5-mini"
`

func TestConnectCodexKeepsCommentsAndTables(t *testing.T) {
	o := testOptions(t, "pam")
	codex := filepath.Join(o.Scope.Home, ".codex")
	config := filepath.Join(codex, "config.toml")
	write(t, config, codexConfig)
	if _, err := Connect("codex", o); err != nil {
		t.Fatal(err)
	}
	got := read(t, config)
	if !strings.HasPrefix(got, codexConfig+"\n# BEGIN memminer connect") {
		t.Errorf("config.toml:\n%s", got)
	}
	var doc struct {
		Model      string `toml:"model"`
		MCPServers map[string]struct {
			Command string   `toml:"command"`
			Args    []string `toml:"args"`
		} `toml:"mcp_servers"`
		Profiles map[string]map[string]any `toml:"profiles"`
	}
	if err := toml.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Model != "gpt-5" || doc.MCPServers["github"].Command != "gh-mcp" || doc.Profiles["fast"]["model"] != "gpt-5-mini" {
		t.Errorf("lost settings: %+v", doc)
	}
	if s := doc.MCPServers["memminer"]; s.Command != "/opt/memminer/bin/memminer" || strings.Join(s.Args, " ") != "mcp --wing pam" {
		t.Errorf("memminer server: %+v", s)
	}
	hooks := read(t, filepath.Join(codex, "hooks.json"))
	if c := gjson.Get(hooks, "hooks.SessionStart.0.hooks.0.command").String(); c != "/opt/memminer/bin/memminer wake-up --hook codex --wing pam" {
		t.Errorf("hooks.json: %s", hooks)
	}
	for _, event := range []string{"PreCompact", "SessionEnd", "Stop"} {
		if c := gjson.Get(hooks, "hooks."+event+".0.hooks.0.command").String(); c != "/opt/memminer/bin/memminer capture --hook codex --wing pam" {
			t.Errorf("hooks.json %s: %s", event, hooks)
		}
	}
	if _, err := os.Stat(filepath.Join(codex, "AGENTS.md")); err != nil {
		t.Error(err)
	}
	if _, err := Disconnect("codex", o); err != nil {
		t.Fatal(err)
	}
	if got := read(t, config); got != codexConfig {
		t.Errorf("config.toml after disconnect:\n%s", got)
	}
	for _, name := range []string{"hooks.json", "AGENTS.md"} {
		if _, err := os.Stat(filepath.Join(codex, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind", name)
		}
	}

	// Changed since connect: only the block goes.
	if _, err := Connect("codex", o); err != nil {
		t.Fatal(err)
	}
	write(t, config, read(t, config)+"\n[profiles.slow]\nmodel = \"o3\"\n")
	if _, err := Disconnect("codex", o); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, config), codexConfig+"\n\n[profiles.slow]\nmodel = \"o3\"\n"; got != want {
		t.Errorf("config.toml after disconnect:\n%q\nwant\n%q", got, want)
	}
}

func TestConnectRefusesWhatItCannotEdit(t *testing.T) {
	cases := []struct {
		name, agent, file, content string
		want                       error
	}{
		{"bad JSON", "claude-code", ".claude/settings.json", `{"theme": "dark",}`, ErrUnparsable},
		{"JSON array", "claude-code", ".claude/settings.json", `[1, 2]`, ErrUnparsable},
		{"hooks not an object", "claude-code", ".claude/settings.json", `{"hooks": []}`, ErrUnparsable},
		{"event not an array", "codex", ".codex/hooks.json", `{"hooks": {"SessionStart": {}}}`, ErrUnparsable},
		{"someone else's server", "claude-code", ".claude.json", `{"mcpServers": {"memminer": {"command": "npx", "args": ["other"]}}}`, ErrTaken},
		{"bad TOML", "codex", ".codex/config.toml", "model = \n", ErrUnparsable},
		{"user's own TOML table", "codex", ".codex/config.toml", "[mcp_servers.memminer]\ncommand = \"x\"\n", ErrTaken},
		{"inline table", "codex", ".codex/config.toml", "mcp_servers = { github = { command = \"gh\" } }\n", ErrUnparsable},
		{"broken markers", "codex", ".codex/AGENTS.md", "rules\n<!-- BEGIN memminer protocol -->\nhalf\n", ErrUnparsable},
		{"someone else's Gemini server", "gemini", ".gemini/settings.json", `{"mcpServers": {"memminer": {"command": "npx", "args": ["other"]}}}`, ErrTaken},
		{"JSONC comments", "opencode", ".config/opencode/opencode.jsonc", "{\n  // mine\n  \"theme\": \"x\"\n}\n", ErrUnparsable},
		{"instructions not a list", "opencode", ".config/opencode/opencode.jsonc", `{"instructions": "x.md"}`, ErrUnparsable},
		{"someone else's OpenCode server", "opencode", ".config/opencode/opencode.jsonc", `{"mcp": {"memminer": {"type": "local", "command": ["npx", "other"]}}}`, ErrTaken},
		{"broken plugin markers", "opencode", ".config/opencode/plugins/memminer.js", "// END memminer connect\n", ErrUnparsable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions(t, "dwight")
			path := filepath.Join(o.Scope.Home, c.file)
			write(t, path, c.content)
			_, err := Connect(c.agent, o)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error does not name the file: %v", err)
			}
			if got := read(t, path); got != c.content {
				t.Errorf("file changed: %q", got)
			}
			entries, _ := os.ReadDir(o.Scope.Home)
			for _, e := range entries {
				if n := e.Name(); "."+strings.Split(c.file, "/")[0][1:] != n && n != strings.Split(c.file, "/")[0] {
					t.Errorf("wrote %s", n)
				}
			}
		})
	}
}

func TestConnectDryRunWritesNothing(t *testing.T) {
	o := testOptions(t, "dwight")
	o.DryRun = true
	state := filepath.Join(o.Scope.Home, ".claude.json")
	write(t, state, claudeState)
	res, err := Connect("claude-code", o)
	if err != nil {
		t.Fatal(err)
	}
	if read(t, state) != claudeState {
		t.Error("dry run changed .claude.json")
	}
	entries, _ := os.ReadDir(o.Scope.Home)
	if len(entries) != 1 {
		t.Errorf("dry run wrote %v", entries)
	}
	var diffs string
	for _, f := range res.Files {
		diffs += f.Diff
	}
	for _, want := range []string{"--- /dev/null\n+++ " + filepath.Join(o.Scope.Home, ".claude", "settings.json"), "+<!-- BEGIN memminer protocol", `"memminer":{"type":"stdio"`} {
		if !strings.Contains(diffs, want) {
			t.Errorf("diff lacks %q:\n%s", want, diffs)
		}
	}
}

func TestConnectProjectScope(t *testing.T) {
	o := testOptions(t, "dwight")
	o.Scope.Project = t.TempDir()
	if _, err := Connect("claude-code", o); err != nil {
		t.Fatal(err)
	}
	s := read(t, filepath.Join(o.Scope.Project, ".claude", "settings.json"))
	if gjson.Get(s, "enabledMcpjsonServers.0").String() != "memminer" {
		t.Errorf("project settings: %s", s)
	}
	if m := read(t, filepath.Join(o.Scope.Project, ".mcp.json")); !gjson.Get(m, "mcpServers.memminer").Exists() {
		t.Errorf(".mcp.json: %s", m)
	}
	cs, err := Connections(o.StateDir)
	if err != nil || len(cs) != 1 || cs[0].Scope != o.Scope.Project || cs[0].Wing != "dwight" {
		t.Fatalf("connections: %+v %v", cs, err)
	}
	if _, err := Disconnect("claude-code", o); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(o.Scope.Project); len(entries) != 0 {
		t.Errorf("project left with %v", entries)
	}
}

func TestMarkersCut(t *testing.T) {
	m := protocolMarkers
	for _, before := range []string{"", "text\n", "text", "a\n\n"} {
		put, err := m.put([]byte(before), "body\n")
		if err != nil {
			t.Fatal(err)
		}
		again, _ := m.put(put, "body\n")
		if string(again) != string(put) {
			t.Errorf("put twice on %q: %q", before, again)
		}
		cut, _ := m.cut(put)
		want := before
		if before == "text" {
			want = "text\n" // a missing last line break is not known afterwards
		}
		if string(cut) != want {
			t.Errorf("cut(put(%q)) = %q", before, cut)
		}
	}
}

func TestShellJoin(t *testing.T) {
	got := shellJoin([]string{"/a b/memminer", "recall", "--hive", "it's"})
	if want := `'/a b/memminer' recall --hive 'it'\''s'`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if !ourHook("codex").MatchString(got[:0] + `'/a b/memminer' recall --hook codex --wing x`) {
		t.Error("quoted program not recognised as memminer's hook")
	}
}
