package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// domainHive writes a hive of three agents sharing words: eng declares
// domain engineering in its identity.md, mkt domain marketing in its
// memory.md, and prefs none (global).
func domainHive(t *testing.T) *cli {
	t.Helper()
	tmp := t.TempDir()
	c := newCLIAt(t, tmp, filepath.Join(tmp, "hive"))
	c.env["MEMMINER_HIVE"] = c.hive
	files := map[string]string{
		"agents/eng/identity.md": "---\nidentity: builds the API\ndomain: Engineering\n---\n",
		"agents/eng/memory.md":   "# Release\n\nThe launch checklist for the API release requires a green CI run on main.\n",
		"agents/mkt/memory.md":   "---\ndomain: marketing\n---\n# Campaign\n\nThe launch checklist for the spring campaign requires the press kit from Lisa.\n",
		"agents/prefs/memory.md": "# Rules\n\nEvery launch checklist is reviewed by the user on Mondays.\n",
	}
	for rel, text := range files {
		path := filepath.Join(c.hive, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.ok("mine", c.hive)
	c.serve(t)
	return c
}

const (
	engNote   = "green CI run"
	mktNote   = "press kit from Lisa"
	prefsNote = "reviewed by the user on Mondays"
)

func TestDomainsScopeAnAgent(t *testing.T) {
	c := domainHive(t)
	const prompt = `{"hook_event_name":"UserPromptSubmit","prompt":"what does the launch checklist require?"}`
	cases := []struct {
		name string
		env  map[string]string // added to c's
		// run is the command; stdin, when set, is a hook's input.
		args  []string
		stdin string
		has   []string
		hasnt []string
	}{
		{name: "an agent's search", env: map[string]string{"MEMMINER_WING": "eng"},
			args: []string{"search", "launch checklist requires"}, has: []string{engNote, prefsNote}, hasnt: []string{mktNote}},
		{name: "an agent's search, all domains", env: map[string]string{"MEMMINER_WING": "eng"},
			args: []string{"search", "launch checklist requires", "--all-domains"}, has: []string{engNote, mktNote, prefsNote}},
		{name: "a person's search", args: []string{"search", "launch checklist requires"}, has: []string{engNote, mktNote, prefsNote}},
		{name: "a person's search of one domain", args: []string{"search", "launch checklist requires", "--domain", "marketing"},
			has: []string{mktNote, prefsNote}, hasnt: []string{engNote}},
		{name: "an agent of no domain", env: map[string]string{"MEMMINER_WING": "prefs"},
			args: []string{"search", "launch checklist requires"}, has: []string{engNote, mktNote, prefsNote}},
		{name: "the prompt hook", args: []string{"recall", "--hook", "claude-code", "--wing", "eng"}, stdin: prompt,
			has: []string{engNote}, hasnt: []string{mktNote}},
		{name: "the prompt hook, all domains", args: []string{"recall", "--hook", "claude-code", "--wing", "eng", "--all-domains"}, stdin: prompt,
			has: []string{mktNote}},
		{name: "the prompt hook of the other domain", args: []string{"recall", "--hook", "codex", "--wing", "mkt"}, stdin: prompt,
			has: []string{mktNote}, hasnt: []string{engNote}},
		{name: "the configuration wins over frontmatter", env: map[string]string{"MEMMINER_WING": "eng", "MEMMINER_DOMAINS": "prefs=marketing"},
			args: []string{"search", "launch checklist requires"}, has: []string{engNote}, hasnt: []string{mktNote, prefsNote}},
		{name: "an agent's wake-up", env: map[string]string{"MEMMINER_WING": "eng"},
			args: []string{"wake-up"}, has: []string{engNote, prefsNote}, hasnt: []string{mktNote, "[mkt]"}},
		{name: "the session-start hook", args: []string{"wake-up", "--hook", "claude-code", "--wing", "eng"},
			has: []string{engNote}, hasnt: []string{mktNote, "[mkt]"}},
		{name: "an agent's wake-up, all domains", env: map[string]string{"MEMMINER_WING": "eng"},
			args: []string{"wake-up", "--all-domains"}, has: []string{engNote, mktNote}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			saved := c.env
			c.env = maps.Clone(c.env)
			defer func() { c.env = saved }()
			for k, v := range tc.env {
				c.env[k] = v
			}
			out, stderr, code := c.runStdin(tc.stdin, tc.args...)
			if code != 0 || stderr != "" {
				t.Fatalf("memminer %s: exit %d\nstderr: %s", strings.Join(tc.args, " "), code, stderr)
			}
			for _, s := range tc.has {
				if !strings.Contains(out, s) {
					t.Errorf("%q is missing:\n%s", s, out)
				}
			}
			for _, s := range tc.hasnt {
				if strings.Contains(out, s) {
					t.Errorf("%q is there:\n%s", s, out)
				}
			}
		})
	}
}

func TestDomainsRefuseLookingOutside(t *testing.T) {
	c := domainHive(t)
	c.env["MEMMINER_WING"] = "eng"
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"a wing of another domain", []string{"search", "launch checklist", "--wing", "mkt"}, "wing mkt is in domain marketing"},
		{"another domain", []string{"search", "launch checklist", "--domain", "marketing"}, "add --all-domains"},
		{"a domain no wing is in", []string{"search", "launch checklist", "--domain", "sales", "--all-domains"}, `unknown domain "sales" (domains: engineering, global, marketing)`},
		{"a bad domain name", []string{"search", "launch checklist", "--domain", "a b"}, "--domain:"},
		{"wake-up of a wing of another domain", []string{"wake-up", "--wing", "mkt"}, "wing mkt is in domain marketing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := c.run(tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Contains(out, mktNote) {
				t.Errorf("memminer %s: exit %d, want %d and %q\nstdout: %s\nstderr: %s", strings.Join(tc.args, " "), code, exitUsage, tc.want, out, stderr)
			}
		})
	}
	// --all-domains lets the agent name them.
	if out := c.ok("search", "launch checklist", "--wing", "mkt", "--all-domains"); !strings.Contains(out, mktNote) {
		t.Errorf("--all-domains --wing mkt:\n%s", out)
	}
	if out := c.ok("search", "launch checklist requires", "--domain", "marketing", "--all-domains"); !strings.Contains(out, mktNote) || strings.Contains(out, engNote) {
		t.Errorf("--all-domains --domain marketing:\n%s", out)
	}
}

func TestDomainsOverMCP(t *testing.T) {
	c := domainHive(t)
	cs := connectInMemory(t, newMCPServerFor(t, c, "eng"))
	cases := []struct {
		args       map[string]any
		has, hasnt string
	}{
		{map[string]any{"query": "launch checklist requires"}, engNote, mktNote},
		{map[string]any{"query": "launch checklist requires", "all_domains": true}, mktNote, ""},
	}
	for _, tc := range cases {
		res := callTool(t, cs, "search", tc.args)
		out := resultText(t, res)
		if res.IsError || !strings.Contains(out, tc.has) || tc.hasnt != "" && strings.Contains(out, tc.hasnt) {
			t.Errorf("search %v: want %q and not %q:\n%s", tc.args, tc.has, tc.hasnt, out)
		}
	}
	if out := resultText(t, callTool(t, cs, "wake_up", nil)); !strings.Contains(out, engNote) || strings.Contains(out, mktNote) {
		t.Errorf("wake_up:\n%s", out)
	}
}

func TestDomainsScopeAPack(t *testing.T) {
	c := domainHive(t)
	c.ok("pack", "new", "launch", "--use", "query:launch checklist requires", "--use", "wing:mkt")
	if out := c.ok("pack", "launch"); !strings.Contains(out, mktNote) || !strings.Contains(out, engNote) {
		t.Errorf("a person's pack:\n%s", out)
	}
	c.env["MEMMINER_WING"] = "eng"
	if out := c.ok("pack", "launch"); strings.Contains(out, mktNote) || !strings.Contains(out, engNote) {
		t.Errorf("an agent's pack:\n%s", out)
	}
	if out := c.ok("pack", "launch", "--all-domains"); !strings.Contains(out, mktNote) {
		t.Errorf("an agent's pack, all domains:\n%s", out)
	}
}

func TestDomainsGroupStatusAndIndex(t *testing.T) {
	c := domainHive(t)
	out := c.ok("status")
	for _, want := range []string{"  DOMAIN ", "global       prefs", "engineering  eng", "marketing    mkt"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if g, e, m := strings.Index(out, "prefs"), strings.Index(out, "eng "), strings.Index(out, "mkt"); !(g < e && e < m) {
		t.Errorf("status does not group global, engineering, marketing in that order:\n%s", out)
	}
	if js := c.ok("status", "--json"); !strings.Contains(js, `"id": "mkt"`) || !strings.Contains(js, `"domain": "marketing"`) {
		t.Errorf("status --json:\n%s", js)
	}
	md := c.ok("index")
	for _, want := range []string{"## Domain global\n\n### prefs", "## Domain engineering\n\n### eng", "## Domain marketing\n\n### mkt"} {
		if !strings.Contains(md, want) {
			t.Errorf("index lacks %q:\n%s", want, md)
		}
	}
}

// TestDomainsScopeShow: show and MCP's read_note honour an agent's domain
// as its search does: a note of a wing of another domain is refused,
// named by the wing's domain, unless the agent widens its view.
func TestDomainsScopeShow(t *testing.T) {
	c := domainHive(t)
	const mktRef, engRef = "agents/mkt/memory.md:6", "agents/eng/memory.md:3"
	if out := c.ok("show", mktRef); !strings.Contains(out, mktNote) {
		t.Errorf("a person's show:\n%s", out)
	}
	c.env["MEMMINER_WING"] = "eng"
	if out, stderr, code := c.run("show", mktRef); code != exitUsage || !strings.Contains(stderr, "wing mkt is in domain marketing") || strings.Contains(out, mktNote) {
		t.Errorf("an agent's show of another domain: exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
	}
	if out := c.ok("show", mktRef, "--all-domains"); !strings.Contains(out, mktNote) {
		t.Errorf("an agent's show, all domains:\n%s", out)
	}
	if out := c.ok("show", engRef); !strings.Contains(out, engNote) {
		t.Errorf("an agent's show of its own domain:\n%s", out)
	}
	delete(c.env, "MEMMINER_WING")
	cs := connectInMemory(t, newMCPServerFor(t, c, "eng"))
	if res := callTool(t, cs, "read_note", map[string]any{"ref": mktRef}); !res.IsError || strings.Contains(resultText(t, res), mktNote) {
		t.Errorf("read_note of another domain: %s", resultText(t, res))
	}
	if res := callTool(t, cs, "read_note", map[string]any{"ref": engRef}); res.IsError || !strings.Contains(resultText(t, res), engNote) {
		t.Errorf("read_note of its own domain: %s", resultText(t, res))
	}
}
