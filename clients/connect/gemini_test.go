package connect

import (
	"path/filepath"
	"testing"

	"github.com/tidwall/gjson"
)

func TestConnectGemini(t *testing.T) {
	cases := []struct {
		name                   string
		cliHome, project       bool
		settings, instructions string // relative to the home, GEMINI_CLI_HOME or project
	}{
		{name: "user", settings: ".gemini/settings.json", instructions: ".gemini/GEMINI.md"},
		{name: "GEMINI_CLI_HOME", cliHome: true, settings: ".gemini/settings.json", instructions: ".gemini/GEMINI.md"},
		{name: "project", project: true, settings: ".gemini/settings.json", instructions: "GEMINI.md"},
	}
	gemini, _ := Lookup("gemini")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions(t, "dwight")
			base := o.Scope.Home
			if c.cliHome {
				base = t.TempDir()
				o.Scope.GeminiCLIHome = base
			}
			if c.project {
				base = t.TempDir()
				o.Scope.Project = base
			}
			settings := filepath.Join(base, c.settings)
			write(t, settings, `{"general": {"enableAutoUpdate": false}}`)
			if _, err := Connect("gemini", o); err != nil {
				t.Fatal(err)
			}
			s := read(t, settings)
			for path, want := range map[string]string{
				"general.enableAutoUpdate":             "false",
				"hooks.SessionStart.0.hooks.0.command": "/opt/memminer/bin/memminer wake-up --hook gemini --wing dwight",
				"hooks.BeforeAgent.0.hooks.0.command":  "/opt/memminer/bin/memminer recall --hook gemini --wing dwight",
				"hooks.BeforeTool.0.hooks.0.command":   "/opt/memminer/bin/memminer pre-action --hook gemini --wing dwight",
				"mcpServers.memminer":                  `{"command":"/opt/memminer/bin/memminer","args":["mcp","--wing","dwight"]}`,
			} {
				if got := gjson.Get(s, path); got.String() != want && got.Raw != want {
					t.Errorf("%s = %s, want %s", path, got.Raw, want)
				}
			}
			if got, want := gemini.SkillsDir(o.Scope), filepath.Join(base, ".gemini", "skills"); got != want {
				t.Errorf("skills folder %s, want %s", got, want)
			}
			if md := read(t, filepath.Join(base, c.instructions)); md != "<!-- BEGIN memminer protocol: written by `memminer connect`, removed by `memminer disconnect`; edits inside are replaced -->\n# Memory protocol\nwing dwight\n<!-- END memminer protocol -->\n" {
				t.Errorf("instructions:\n%s", md)
			}
			if _, err := Disconnect("gemini", o); err != nil {
				t.Fatal(err)
			}
			if got := read(t, settings); got != `{"general": {"enableAutoUpdate": false}}` {
				t.Errorf("settings after disconnect: %s", got)
			}
		})
	}
}

func TestGeminiPrompt(t *testing.T) {
	for in, want := range map[string]string{
		"deploy db-2": "deploy db-2",
		"<hook_context>digest</hook_context>\n\nhi":                      "\n\nhi",
		"<hook_context>a</hook_context><hook_context>b</hook_context> x": " x",
		"<hook_context>unclosed digest":                                  "<hook_context>unclosed digest",
		"hi <hook_context>later</hook_context>":                          "hi <hook_context>later</hook_context>",
	} {
		if got := geminiPrompt(in); got != want {
			t.Errorf("geminiPrompt(%q) = %q, want %q", in, got, want)
		}
	}
}
