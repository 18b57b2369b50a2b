package connect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

const openCodeConfig = `{
  "$schema": "https://opencode.ai/config.json",
  "model": "mock/mock-model",
  "instructions": ["CONTRIBUTING.md"],
  "mcp": {
    "github": {"type": "local", "command": ["gh-mcp"]}
  }
}
`

func TestConnectOpenCode(t *testing.T) {
	cases := []struct {
		name    string
		project bool
		// config is the file connect edits, relative to the scope's
		// directory; protocolRef is how the configuration names the
		// protocol file.
		config, plugin, protocol, protocolRef string
	}{
		{name: "user", config: "xdg/opencode/opencode.jsonc", plugin: "xdg/opencode/plugins/memminer.js",
			protocol: "xdg/opencode/memminer-protocol.md", protocolRef: "xdg/opencode/memminer-protocol.md"},
		{name: "user opencode.json", config: "xdg/opencode/opencode.json", plugin: "xdg/opencode/plugins/memminer.js",
			protocol: "xdg/opencode/memminer-protocol.md", protocolRef: "xdg/opencode/memminer-protocol.md"},
		{name: "project", project: true, config: "opencode.json", plugin: ".opencode/plugins/memminer.js",
			protocol: ".opencode/memminer-protocol.md", protocolRef: ".opencode/memminer-protocol.md"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := testOptions(t, "dwight")
			base := o.Scope.Home
			o.Scope.ConfigHome = filepath.Join(base, "xdg")
			if c.project {
				base = t.TempDir()
				o.Scope.Project = base
			}
			config := filepath.Join(base, c.config)
			write(t, config, openCodeConfig)
			ref := c.protocolRef
			if !c.project {
				ref = filepath.Join(base, ref)
			}

			res, err := Connect("opencode", o)
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{config: Changed, filepath.Join(base, c.plugin): Created, filepath.Join(base, c.protocol): Created}
			for _, f := range res.Files {
				if want[f.Path] != f.Action {
					t.Errorf("%s: %s, want %q", f.Path, f.Action, want[f.Path])
				}
			}
			s := read(t, config)
			for path, want := range map[string]string{
				"model":                "mock/mock-model",
				"instructions.0":       "CONTRIBUTING.md",
				"instructions.1":       ref,
				"mcp.github.command.0": "gh-mcp",
				"mcp.memminer.type":    "local",
				"mcp.memminer.command": `["/opt/memminer/bin/memminer","mcp","--wing","dwight"]`,
				"mcp.memminer.enabled": "true",
			} {
				if got := gjson.Get(s, path); got.String() != want && got.Raw != want {
					t.Errorf("%s = %s, want %s\n%s", path, got.Raw, want, s)
				}
			}
			if !strings.HasPrefix(s, openCodeConfig[:strings.Index(openCodeConfig, `  "instructions"`)]) ||
				!strings.Contains(s, `"github": {"type": "local", "command": ["gh-mcp"]}`) {
				t.Errorf("config lost its formatting:\n%s", s)
			}
			plugin := read(t, filepath.Join(base, c.plugin))
			for _, w := range []string{`["/opt/memminer/bin/memminer","wake-up","--hook","opencode","--wing","dwight"]`,
				`["/opt/memminer/bin/memminer","recall","--hook","opencode","--wing","dwight"]`, `"experimental.chat.system.transform"`,
				`["/opt/memminer/bin/memminer","pre-action","--hook","opencode","--wing","dwight"]`, `"tool.execute.before"`, "// END memminer connect\n"} {
				if !strings.Contains(plugin, w) {
					t.Errorf("plugin lacks %s:\n%s", w, plugin)
				}
			}
			skills := filepath.Join(base, "xdg", "opencode", "skills")
			if c.project {
				skills = filepath.Join(base, ".opencode", "skills")
			}
			if ag, _ := Lookup("opencode"); ag.SkillsDir(o.Scope) != skills {
				t.Errorf("skills folder %s, want %s", ag.SkillsDir(o.Scope), skills)
			}
			if p := read(t, filepath.Join(base, c.protocol)); !strings.Contains(p, "# Memory protocol\nwing dwight\n") {
				t.Errorf("protocol file:\n%s", p)
			}
			if res, err := Connect("opencode", o); err != nil {
				t.Fatal(err)
			} else {
				for _, f := range res.Files {
					if f.Action != Unchanged {
						t.Errorf("second connect: %s %s\n%s", f.Path, f.Action, f.Diff)
					}
				}
			}

			// OpenCode's `mcp add` writes the file meanwhile: disconnect
			// keeps that and removes only memminer's entries.
			edited := strings.Replace(read(t, config), `"model"`, `"theme": "dark", "model"`, 1)
			write(t, config, edited)
			if _, err := Disconnect("opencode", o); err != nil {
				t.Fatal(err)
			}
			want2 := strings.Replace(openCodeConfig, `"model"`, `"theme": "dark", "model"`, 1)
			if got := read(t, config); !sameJSON(got, want2) {
				t.Errorf("config after disconnect:\n%s\nwant\n%s", got, want2)
			}
			for _, f := range []string{c.plugin, c.protocol} {
				if _, err := os.Stat(filepath.Join(base, f)); !os.IsNotExist(err) {
					t.Errorf("%s left behind: %v", f, err)
				}
			}
			if _, err := os.Stat(filepath.Join(base, filepath.Dir(c.plugin))); !os.IsNotExist(err) {
				t.Errorf("plugins directory left behind: %v", err)
			}
		})
	}
}
