package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestDefaultUsesXDG(t *testing.T) {
	c := Default(env(map[string]string{"XDG_DATA_HOME": "/data", "XDG_CACHE_HOME": "/cache", "HOME": "/home/u"}), "lexical")
	if c.Palace != "/data/memminer/palace" || c.ModelCache != "/cache/memminer/models" || !c.Enabled || c.MineInterval != 3*time.Minute {
		t.Fatalf("defaults %+v", c)
	}
	c = Default(env(map[string]string{"HOME": "/home/u", "XDG_DATA_HOME": "relative/ignored"}), "lexical")
	if c.Palace != "/home/u/.local/share/memminer/palace" {
		t.Fatalf("palace %s", c.Palace)
	}
	if f := DefaultFile(env(map[string]string{"HOME": "/home/u"})); f != "/home/u/.config/memminer/config.yml" {
		t.Fatalf("config file %s", f)
	}
}

func TestRuntimeDir(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000", "XDG_CACHE_HOME": "/cache", "HOME": "/home/u"}, "/run/user/1000"},
		{map[string]string{"XDG_RUNTIME_DIR": "relative/ignored", "XDG_CACHE_HOME": "/cache", "HOME": "/home/u"}, "/cache"},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.cache"},
	} {
		if got := RuntimeDir(env(c.env)); got != c.want {
			t.Errorf("RuntimeDir(%v) = %s, want %s", c.env, got, c.want)
		}
	}
}

func TestLoadFileAndEnv(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := Default(env(map[string]string{"HOME": dir}), "lexical")

	write("palace: /p\nmodel: use-lite\nenabled: false\nmax_file_bytes: 1024\nmine_interval: 30s\n")
	c := base
	if err := c.LoadFile(path, true); err != nil {
		t.Fatal(err)
	}
	if c.Palace != "/p" || c.Model != "use-lite" || c.Enabled || c.MaxFileBytes != 1024 || c.MineInterval != 30*time.Second {
		t.Fatalf("file not applied: %+v", c)
	}
	if c.LockTimeout != DefaultLockTimeout {
		t.Fatalf("absent key changed a default: %v", c.LockTimeout)
	}
	if err := c.ApplyEnv(env(map[string]string{"MEMMINER_PALACE_PATH": "/q", "MEMMINER_ENABLED": "true"})); err != nil {
		t.Fatal(err)
	}
	if c.Palace != "/q" || !c.Enabled {
		t.Fatalf("env not applied over file: %+v", c)
	}

	c = base
	if err := c.LoadFile(filepath.Join(dir, "missing.yml"), false); err != nil {
		t.Fatalf("optional missing file: %v", err)
	}
	if err := c.LoadFile(filepath.Join(dir, "missing.yml"), true); err == nil {
		t.Fatal("required missing file accepted")
	}
	c = base
	write("syncthing: false\nsyncthing_url: http://127.0.0.1:9999\non_conflict: notify-send conflict\nmetrics_addr: 127.0.0.1:9464\nlog_format: json\n")
	if err := c.LoadFile(path, true); err != nil {
		t.Fatal(err)
	}
	if c.Syncthing || c.SyncthingURL != "http://127.0.0.1:9999" || c.OnConflict != "notify-send conflict" || c.MetricsAddr != "127.0.0.1:9464" || c.LogFormat != "json" || c.LogLevel != "info" {
		t.Fatalf("daemon keys not applied: %+v", c)
	}

	write("")
	if err := c.LoadFile(path, true); err != nil {
		t.Fatalf("empty file: %v", err)
	}
}

func TestBadValuesSayWhatToFix(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yml")
	tests := []struct{ file, want string }{
		{"palcae: /x\n", "palcae"},
		{"hive: /h\nmine_intervall:\n", `line 2: unknown setting "mine_intervall"`},
		{"palcae: ~\n", `line 1: unknown setting "palcae"`},
		{"mine_interval: soon\n", "mine_interval"},
		{"enabled: maybe\n", "enabled"},
		{"max_file_bytes: lots\n", "max_file_bytes"},
		{"[not a mapping\n", "config"},
	}
	for _, tt := range tests {
		if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
			t.Fatal(err)
		}
		c := Default(env(nil), "lexical")
		err := c.LoadFile(path, true)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want it to mention %q", tt.file, err, tt.want)
		}
	}
	for name, value := range map[string]string{"MEMMINER_ENABLED": "nah", "MEMMINER_MAX_FILE_BYTES": "-", "MEMMINER_MINE_INTERVAL": "3 minutes"} {
		c := Default(env(nil), "lexical")
		if err := c.ApplyEnv(env(map[string]string{name: value})); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v", name, value, err)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := Default(env(map[string]string{"HOME": "/h"}), "lexical")
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	c := ok
	c.Palace = ""
	err := c.Validate()
	var se *Error
	if !errors.As(err, &se) || se.Key != "palace" || !errors.Is(err, ErrNotSet) {
		t.Fatalf("empty palace: %v", err)
	}
}

// TestValuesCheckedWhereSet: a value a setting refuses is an error naming
// the setting and the place it came from, whichever layer set it.
func TestValuesCheckedWhereSet(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yml")
	tests := []struct{ key, value, want string }{
		{"max_file_bytes", "0", "max_file_bytes: must be at least 1, got 0"},
		{"max_file_bytes", "lots", `max_file_bytes: "lots" is not a whole number`},
		{"mine_interval", "10ms", "mine_interval: must be at least 1s, got 10ms"},
		{"lock_timeout", "-1s", "lock_timeout: must not be negative, got -1s"},
		{"enabled", "maybe", `enabled: "maybe" is not true or false`},
	}
	for _, tt := range tests {
		s, _ := Lookup(tt.key)
		if err := s.Check(tt.value); err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tt.want, tt.key+": ")) {
			t.Errorf("Check(%s=%s) = %v", tt.key, tt.value, err)
		}
		if err := os.WriteFile(path, []byte("palace: /p\n"+tt.key+": "+tt.value+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		c := Default(env(nil), "lexical")
		if err := c.LoadFile(path, true); err == nil || err.Error() != "config "+path+": line 2: "+tt.want {
			t.Errorf("file %s: %s: %v", tt.key, tt.value, err)
		}
		c = Default(env(nil), "lexical")
		err := c.ApplyEnv(env(map[string]string{s.Env: tt.value}))
		var se *Error
		if !errors.As(err, &se) || se.Source != s.Env || se.Key != tt.key || err.Error() != s.Env+": "+tt.want {
			t.Errorf("env %s=%s: %v", s.Env, tt.value, err)
		}
	}
}

// TestTable: every setting is declared completely and once, and its
// default is a value it accepts.
func TestTable(t *testing.T) {
	seen := map[string]string{}
	once := func(what, name, key string) {
		t.Helper()
		if prev, dup := seen[what+" "+name]; dup {
			t.Errorf("%s %s is declared by both %s and %s", what, name, prev, key)
		}
		seen[what+" "+name] = key
	}
	for _, s := range Settings() {
		if s.Key == "" || s.Help == "" || s.kind.set == nil {
			t.Errorf("incomplete setting %+v", s)
		}
		if !strings.HasPrefix(s.Env, "MEMMINER_") {
			t.Errorf("%s: environment variable %q does not start with MEMMINER_", s.Key, s.Env)
		}
		once("key", s.Key, s.Key)
		once("env", s.Env, s.Key)
		if s.Flag != "" {
			once("flag", s.Flag, s.Key)
		}
		if s.FlagNegates && !s.IsBool() {
			t.Errorf("%s: only a true-or-false setting can have a negating flag", s.Key)
		}
		if s.Default != "" {
			if err := s.Check(s.Default); err != nil {
				t.Errorf("%s: default %q: %v", s.Key, s.Default, err)
			}
		}
		if got, ok := Lookup(s.Key); !ok || got.Env != s.Env {
			t.Errorf("Lookup(%s) = %+v, %v", s.Key, got, ok)
		}
	}
	c := Default(env(map[string]string{"HOME": "/h"}), "")
	if c.Model != "use-lite" || c.MaxFileBytes != DefaultMaxFileBytes || c.LockTimeout != DefaultLockTimeout || !c.Syncthing || c.LogLevel != "info" {
		t.Fatalf("defaults not taken from the table: %+v", c)
	}
}

func TestAgentsSetting(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yml")
	tests := []struct {
		name string
		file string
		env  string // MEMMINER_AGENTS
		want []string
	}{
		{"unset", "palace: /p\n", "", nil},
		{"flow list", "agents: [bots/*, teams/*/agents/*]\n", "", []string{"bots/*", "teams/*/agents/*"}},
		{"block list", "agents:\n  - bots/*\n  - '*/agents/*'\n", "", []string{"bots/*", "*/agents/*"}},
		{"empty list", "agents: []\n", "", []string{}},
		{"scalar", "agents: bots/*\n", "", []string{"bots/*"}},
		{"comma-separated scalar", "agents: 'bots/*, teams/*/agents/*'\n", "", []string{"bots/*", "teams/*/agents/*"}},
		{"empty scalar", "agents:\n", "", nil},
		{"env", "", "bots/*,crew/*", []string{"bots/*", "crew/*"}},
		{"env over file", "agents: [bots/*]\n", " crew/* ", []string{"crew/*"}},
		{"null", "agents: ~\n", "", nil},
		{"null items and spaces", "agents: [~, ' bots/* ']\n", "", []string{"bots/*"}},
		{"empty items", "", "bots/*, ,x/*,", []string{"bots/*", "x/*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			c := Default(env(nil), "lexical")
			if err := c.LoadFile(path, true); err != nil {
				t.Fatal(err)
			}
			if err := c.ApplyEnv(env(map[string]string{"MEMMINER_AGENTS": tt.env})); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Agents, tt.want) || (c.Agents == nil) != (tt.want == nil) {
				t.Fatalf("agents = %#v, want %#v", c.Agents, tt.want)
			}
		})
	}
}

func TestBadAgentsSayWhatToFix(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yml")
	tests := []struct{ file, want string }{
		{"agents: /srv/bots/*\n", `line 1: agents: pattern "/srv/bots/*" is absolute`},
		{"agents: ../bots/*\n", `line 1: agents: pattern "../bots/*" has a ".." element`},
		{"agents: bots/[a-\n", `line 1: agents: pattern "bots/[a-" is malformed: syntax error in pattern`},
		{"agents: .stversions/*\n", `line 1: agents: pattern ".stversions/*" names a hidden directory`},
		{"palace: /p\nagents:\n  - bots/*\n  - /abs/*\n", `line 4: agents: pattern "/abs/*" is absolute`},
		{"agents:\n  - bots/*\n  - ''\n", `line 3: agents: pattern "" is empty`},
		{"agents:\n  - bots/*\n  - ../x\n", `line 3: agents: pattern "../x" has a ".." element`},
		{"agents:\n  - [bots/*]\n", "line 2: agents: want a list of glob patterns"},
		{"agents: {bots: x}\n", "line 1: agents: want a list of glob patterns, or one string of them separated by commas"},
		{"hive: [a, b]\n", "line 1: hive: want a single value"},
	}
	for _, tt := range tests {
		if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
			t.Fatal(err)
		}
		c := Default(env(nil), "lexical")
		err := c.LoadFile(path, true)
		if err == nil || !strings.Contains(err.Error(), "config "+path+": "+tt.want) {
			t.Errorf("%q: error %v, want it to contain %q", tt.file, err, tt.want)
		}
		if c.Agents != nil {
			t.Errorf("%q: a bad list set agents to %q", tt.file, c.Agents)
		}
	}
	for value, want := range map[string]string{
		"/abs/*":      `MEMMINER_AGENTS: agents: pattern "/abs/*" is absolute`,
		"bots/*,../x": `MEMMINER_AGENTS: agents: pattern "../x" has a ".." element`,
		"bots/[":      `MEMMINER_AGENTS: agents: pattern "bots/[" is malformed`,
	} {
		c := Default(env(nil), "lexical")
		if err := c.ApplyEnv(env(map[string]string{"MEMMINER_AGENTS": value})); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("MEMMINER_AGENTS=%s: %v, want %q", value, err, want)
		}
	}
}
