package main

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/embed"
)

// The documentation's settings tables are generated between a begin line
// matching settingsTableBegin and settingsTableEnd: the full table once,
// in README.md or a file under docs/, and tables of some settings ("of
// palace, model, hive") anywhere there.
var settingsTableBegin = regexp.MustCompile(`(?m)^<!-- settings table(?: of ([a-z_, ]+))?: generated from config's table; go test ./cmd/memminer -run TestSettingsTable -update -->\n`)

const settingsTableEnd = "<!-- end of settings table -->"

// settingsTable is the documentation's table of the settings with the
// given keys (all of them when keys is empty), made from config's table
// and the commands that take each flag.
func settingsTable(root *cobra.Command, keys []string) string {
	var b strings.Builder
	b.WriteString("| config key | environment | flag | default | what it is |\n|---|---|---|---|---|\n")
	for _, s := range config.Settings() {
		if len(keys) > 0 && !slices.Contains(keys, s.Key) {
			continue
		}
		flag := ""
		if s.Flag != "" {
			flag = "`--" + s.Flag + "` (" + strings.Join(flagCommands(root, s.Flag), ", ") + ")"
			if s.FlagNegates {
				flag += ": sets `false`"
			}
		}
		def := "none"
		if s.Default != "" {
			def = "`" + s.Default + "`"
		}
		b.WriteString("| `" + s.Key + "` | `" + s.Env + "` | " + flag + " | " + def + " | " + markdownText(s.Help) + " |\n")
	}
	return b.String()
}

// flagCommands names the commands that take the flag name.
func flagCommands(root *cobra.Command, name string) []string {
	if root.PersistentFlags().Lookup(name) != nil {
		return []string{"every command"}
	}
	var out []string
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c != root && c.LocalFlags().Lookup(name) != nil {
			out = append(out, strings.TrimPrefix(c.CommandPath(), root.Name()+" "))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	sort.Strings(out)
	return out
}

// markdownText escapes what markdown would read as markup in a table cell.
func markdownText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "|", `\|`, "*", `\*`, "<", `\<`).Replace(s)
}

// TestSettingsTable: the documentation's settings tables are the ones
// made from config's table, so they name each setting with its
// environment variable, flag and default, and the full one names every
// setting. -update rewrites them.
func TestSettingsTable(t *testing.T) {
	root := newApp(io.Discard, io.Discard, func(string) string { return "" }).rootCmd()
	repo := filepath.Join("..", "..")
	docs := []string{filepath.Join(repo, "README.md")}
	_ = filepath.WalkDir(filepath.Join(repo, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			docs = append(docs, p)
		}
		return nil
	})
	full := 0
	for _, path := range docs {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		text, changed := string(data), false
		for at := 0; ; {
			m := settingsTableBegin.FindStringSubmatchIndex(text[at:])
			if m == nil {
				break
			}
			start := at + m[1]
			n := strings.Index(text[start:], settingsTableEnd)
			if n < 0 {
				t.Fatalf("%s: a settings table has no end line %q", path, settingsTableEnd)
			}
			var keys []string
			if m[2] >= 0 {
				for _, k := range strings.Split(text[at+m[2]:at+m[3]], ",") {
					k = strings.TrimSpace(k)
					if _, ok := config.Lookup(k); !ok {
						t.Errorf("%s: the settings table of %s names %q, which is no setting", path, text[at+m[2]:at+m[3]], k)
					}
					keys = append(keys, k)
				}
			} else {
				full++
			}
			want := settingsTable(root, keys)
			if got := text[start : start+n]; got != want {
				if !*update {
					t.Errorf("%s: a settings table is not config's; run go test ./cmd/memminer -run TestSettingsTable -update\ngot:\n%s\nwant:\n%s", path, got, want)
				}
				text, changed = text[:start]+want+text[start+n:], true
			}
			at = start + len(want) + len(settingsTableEnd)
		}
		if changed && *update {
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if full != 1 {
		t.Fatalf("found %d full settings tables in README.md and docs/, want 1", full)
	}
}

// TestModelSetting: the model setting's default and help say what the
// embed package offers.
func TestModelSetting(t *testing.T) {
	s, _ := config.Lookup("model")
	if s.Default != embed.Default {
		t.Errorf("model setting's default %q, embed's %q", s.Default, embed.Default)
	}
	for _, spec := range embed.Specs() {
		if !strings.Contains(s.Help, spec) {
			t.Errorf("model setting's help %q does not mention %s", s.Help, spec)
		}
	}
}

// TestSettingFlagsOverride: a setting's flag overrides the environment,
// which overrides the config file, for every command taking the flag; a
// bad value names where it came from.
func TestSettingFlagsOverride(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(file, []byte("log_format: json\nlog_level: error\nmine_interval: 5m\nmetrics_addr: 127.0.0.1:1\nsyncthing: false\nhive: /from/file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"HOME":                   dir,
		"MEMMINER_LOG_LEVEL":     "warn",
		"MEMMINER_MINE_INTERVAL": "2m",
		"MEMMINER_HIVE":          "/from/env",
	}
	resolve := func(t *testing.T, args ...string) (*app, *cobra.Command) {
		t.Helper()
		a := newApp(io.Discard, io.Discard, func(k string) string { return env[k] })
		root := a.rootCmd()
		cmd, rest, err := root.Find(args)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.ParseFlags(append([]string{"--config", file}, rest...)); err != nil {
			t.Fatal(err)
		}
		if err := a.resolve(cmd); err != nil {
			t.Fatal(err)
		}
		return a, cmd
	}

	a, cmd := resolve(t, "run", "--mine-interval", "1m", "--no-syncthing=false", "--hive", "/from/flag")
	c := a.cfg
	if c.LogFormat != "json" || c.LogLevel != "warn" || c.MineInterval.String() != "1m0s" || !c.Syncthing || c.Hive != "/from/flag" || c.MetricsAddr != "127.0.0.1:1" {
		t.Fatalf("run: %+v", c)
	}
	for key, want := range map[string]string{"mine_interval": "--mine-interval", "log_level": "MEMMINER_LOG_LEVEL", "log_format": "log_format"} {
		if got := a.settingFrom(cmd, key); got != want {
			t.Errorf("%s came from %s, want %s", key, got, want)
		}
	}
	if a, _ := resolve(t, "run", "--no-syncthing"); a.cfg.Syncthing || a.cfg.Hive != "/from/env" {
		t.Fatalf("--no-syncthing: %+v", a.cfg)
	}
	for _, name := range []string{"conflicts", "install"} {
		if a, _ := resolve(t, name, "--hive", "/from/flag"); a.cfg.Hive != "/from/flag" {
			t.Errorf("%s --hive: %q", name, a.cfg.Hive)
		}
	}

	cl := newCLI(t)
	for _, tt := range []struct {
		args []string
		env  map[string]string
		code int
		msg  string
	}{
		{[]string{"run"}, nil, exitUsage, "memminer: no hive: pass --hive, set MEMMINER_HIVE, or put hive: in the config file\n"},
		{[]string{"run", "--mine-interval", "10ms"}, nil, exitUsage, `invalid argument "10ms" for "--mine-interval" flag: must be at least 1s, got 10ms`},
		{[]string{"run", "--log-level", "loud"}, nil, exitUsage, `"loud" is not debug, info, warn or error`},
		{[]string{"status"}, map[string]string{"MEMMINER_MINE_INTERVAL": "10ms"}, exitError, "memminer: MEMMINER_MINE_INTERVAL: mine_interval: must be at least 1s, got 10ms\n"},
		{[]string{"status", "--palace", ""}, nil, exitError, "memminer: palace: no value set; pass --palace, set MEMMINER_PALACE_PATH, or put palace: in the config file\n"},
	} {
		for k, v := range tt.env {
			cl.env[k] = v
		}
		_, stderr, code := cl.run(tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.msg) {
			t.Errorf("%v: exit %d, %q; want %d, %q", tt.args, code, stderr, tt.code, tt.msg)
		}
		for k := range tt.env {
			delete(cl.env, k)
		}
	}
}
