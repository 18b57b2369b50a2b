package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/syncthing"
)

// conflictCopies are the conflict copies the tests put into the example
// hive, relative to it.
var conflictCopies = []string{
	"agents/dwight/memory.sync-conflict-20240131-093000-ABCDEFG.md",
	"agents/pam/notes/todo.sync-conflict-20240201-101010-ZYXWVUT.md",
}

// copyMtime is the conflict copies' modification time.
var copyMtime = time.Date(2024, 1, 31, 9, 30, 0, 0, time.UTC)

func addConflictCopies(t *testing.T, hive string) []string {
	t.Helper()
	var paths []string
	for _, rel := range conflictCopies {
		p := filepath.Join(hive, filepath.FromSlash(rel))
		testutil.WriteFile(t, p, "# lost\n- a fact only the losing machine wrote down\n")
		if err := os.Chtimes(p, copyMtime, copyMtime); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// runRaw runs memminer without scrubbing its output.
func (c *cli) runRaw(args ...string) (string, int) {
	c.t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, func(k string) string { return c.env[k] })
	if code != 0 && code != exitConflict {
		c.t.Fatalf("memminer %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String(), code
}

// TestConflictsSameWithAndWithoutDaemon lists conflicts by scanning the
// hive, then through a daemon (memminer run), then by scanning again after
// the daemon stopped: the output matches the golden files each time, and
// the last scan reuses the daemon's records byte for byte.
func TestConflictsSameWithAndWithoutDaemon(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	paths := addConflictCopies(t, c.hive)
	steps := []struct {
		golden string
		args   []string
	}{
		{"conflicts.txt", []string{"conflicts"}},
		{"conflicts.json", []string{"conflicts", "--json"}},
		{"conflicts-wing.json", []string{"conflicts", "--wing", "Dwight", "--json"}},
		{"conflicts-none.txt", []string{"conflicts", "--wing", "jim"}},
	}
	for _, s := range steps {
		golden(t, s.golden, c.ok(s.args...))
	}
	direct, _ := c.runRaw("conflicts", "--json")
	if !strings.Contains(direct, `"detected": "2024-01-31T09:30:00Z"`) || strings.Count(direct, `"found_by": "scan"`) != 2 {
		t.Fatalf("direct scan: detected should be the copy's mtime, found_by scan:\n%s", direct)
	}
	// Status without a daemon counts what conflicts lists.
	if out := c.ok("status", "--json"); !strings.Contains(out, `"conflicts_open": 2`) {
		t.Fatalf("direct status does not count the conflicts:\n%s", out)
	}
	if out := c.ok("status"); !strings.Contains(out, "conflicts:   2 open") {
		t.Fatalf("direct status does not count the conflicts:\n%s", out)
	}

	alerts := filepath.Join(t.TempDir(), "alerts")
	r := startRun(t, c, c.hive, "--no-syncthing",
		"--on-conflict", `sh -c 'printf "%s %s\n" "$MEMMINER_CONFLICT_WING" "$MEMMINER_CONFLICT_PATH" >> "$0"' `+alerts)
	for _, s := range steps {
		golden(t, s.golden, c.ok(s.args...))
	}
	served, _ := c.runRaw("conflicts", "--json")
	testutil.WaitFor(t, "the on-conflict command to run for both conflicts", func() bool {
		data, _ := os.ReadFile(alerts)
		return strings.Count(string(data), "\n") == 2
	})
	data, _ := os.ReadFile(alerts)
	want := "dwight " + paths[0] + "\npam " + paths[1] + "\n"
	if string(data) != want {
		t.Fatalf("on-conflict command saw:\n%s\nwant:\n%s", data, want)
	}
	if out := c.ok("status", "--json"); !strings.Contains(out, `"conflicts_open": 2`) {
		t.Fatalf("status does not count the conflicts:\n%s", out)
	}
	r.stop(t)

	after, _ := c.runRaw("conflicts", "--json")
	if after != served {
		t.Fatalf("after the daemon stopped the scan differs from the daemon's answer:\n--- daemon\n%s--- scan\n%s", served, after)
	}
	if out := c.ok("status", "--json"); !strings.Contains(out, `"conflicts_open": 2`) {
		t.Fatalf("status after the daemon stopped does not count the conflicts:\n%s", out)
	}
}

// TestConflictsCheck: --check exits 3 while the wing (or, without --wing,
// any wing) has an open conflict, 0 otherwise, and 2 for a wing that is
// neither an agent directory nor a wing of the palace, with or without a
// daemon. Through a daemon that follows no Syncthing and has no mine tick
// due, the answer is still what is on disk at the time of the check.
func TestConflictsCheck(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	paths := addConflictCopies(t, c.hive)
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"conflicts", "--wing", "dwight", "--check"}, exitConflict, "wing dwight has 1 open conflict; merge first"},
		{[]string{"conflicts", "--wing", "pam", "--check", "--json"}, exitConflict, "wing pam has 1 open conflict"},
		{[]string{"conflicts", "--wing", "jim", "--check"}, exitOK, ""},
		{[]string{"conflicts", "--check"}, exitConflict, "the hive has 2 open conflicts"},
		{[]string{"conflicts", "--wing", "dwigth", "--check"}, exitUsage, `--wing: unknown wing "dwigth" (known wings: angela, dwight, jim, pam)`},
		{[]string{"conflicts", "--wing", "dwigth"}, exitUsage, `unknown wing "dwigth" (known wings: angela, dwight, jim, pam)`},
	}
	check := func(mode string, extra ...string) {
		t.Helper()
		for _, tt := range tests {
			args := append(append([]string{}, extra...), tt.args...)
			_, stderr, code := c.run(args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("%s: memminer %s: exit %d, stderr %q; want %d, %q", mode, strings.Join(args, " "), code, stderr, tt.code, tt.stderr)
			}
		}
	}
	// checkNow asserts --check's exit code for wing through the daemon and
	// without it.
	checkNow := func(what, wing string, want int) {
		t.Helper()
		for _, extra := range [][]string{nil, {"--no-daemon"}} {
			args := append(append([]string{}, extra...), "conflicts", "--check", "--wing", wing)
			if _, stderr, code := c.run(args...); code != want {
				t.Errorf("%s: memminer %s: exit %d (%s), want %d", what, strings.Join(args, " "), code, stderr, want)
			}
		}
	}
	check("direct")
	// No Syncthing, no mine tick during the test: only the check's own
	// walk can see the changes below.
	r := startRun(t, c, c.hive, "--no-syncthing", "--mine-interval", "1h")
	check("daemon")
	check("--no-daemon, daemon up", "--no-daemon")

	// Merged: the very next check passes.
	for _, p := range paths {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	checkNow("after the merge", "dwight", exitOK)
	if _, _, code := c.run("conflicts", "--check"); code != exitOK {
		t.Fatalf("daemon: --check of the hive after the merge: exit %d", code)
	}
	// A conflict copy that appears is caught by the very next check.
	jim := filepath.Join(c.hive, "agents", "jim", "memory.sync-conflict-20240301-080000-ABCDEFG.md")
	testutil.WriteFile(t, jim, "# lost\n")
	checkNow("a new copy", "jim", exitConflict)
	if out := c.ok("status", "--json"); !strings.Contains(out, `"conflicts_open": 1`) {
		t.Fatalf("daemon status does not count the new copy:\n%s", out)
	}
	if err := os.Remove(jim); err != nil {
		t.Fatal(err)
	}
	checkNow("the new copy merged", "jim", exitOK)
	r.stop(t)
	addConflictCopies(t, c.hive)
	check("direct, after the daemon")
}

// TestConflictsWingRoots: without a hive, the directories the palace's
// wings were mined from are scanned.
func TestConflictsWingRoots(t *testing.T) {
	c := newCLI(t)
	addConflictCopies(t, c.hive)
	if _, stderr, code := c.run("conflicts"); code != exitUsage || !strings.Contains(stderr, "no hive to scan") {
		t.Fatalf("no hive, empty palace: exit %d, %q", code, stderr)
	}
	c.ok("mine", filepath.Join(c.hive, "agents", "dwight"))
	c.ok("mine", filepath.Join(c.hive, "agents", "pam", "memory.md"))
	out := c.ok("conflicts", "--json")
	// dwight's directory holds its copy; pam was mined from memory.md
	// alone, whose conflict copies (none) are the only ones that count.
	if !strings.Contains(out, "$HIVE/"+conflictCopies[0]) || strings.Contains(out, "todo.sync-conflict") {
		t.Fatalf("conflicts from wing roots:\n%s", out)
	}
	if _, stderr, code := c.run("conflicts", "--wing", "jim", "--check"); code != exitUsage || !strings.Contains(stderr, `unknown wing "jim" (known wings: dwight, pam)`) {
		t.Fatalf("unknown wing without hive: exit %d, %q", code, stderr)
	}
	// Status without a daemon counts the same conflicts.
	if out := c.ok("status", "--json"); !strings.Contains(out, `"conflicts_open": 1`) {
		t.Fatalf("direct status without a hive:\n%s", out)
	}
}

func TestConflictsErrors(t *testing.T) {
	c := newCLI(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"argument", []string{"conflicts", "dwight"}, exitUsage, "conflicts takes no arguments"},
		{"bad wing", []string{"conflicts", "--wing", "../x"}, exitUsage, `wing id "../x" is not valid`},
		{"missing hive", []string{"conflicts", "--hive", filepath.Join(c.hive, "nope")}, exitError, "no such file or directory"},
		{"bad on-conflict", []string{"run", "--hive", c.hive, "--no-syncthing", "--on-conflict", `notify "open`}, exitUsage, "--on-conflict: command"},
		{"bad webhook", []string{"run", "--hive", c.hive, "--no-syncthing", "--conflict-webhook", "ftp://x/y"}, exitUsage, "--conflict-webhook: webhook URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := c.run(tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.stderr)
			}
		})
	}
	// A corrupt registry is said, and the scan goes on without it.
	if err := os.MkdirAll(c.palace, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.palace, "conflicts.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	addConflictCopies(t, c.hive)
	out, stderr, code := c.run("conflicts", "--hive", c.hive)
	if code != 0 || !strings.Contains(stderr, "conflict registry is corrupt") || !strings.Contains(out, "2 open conflicts") {
		t.Fatalf("corrupt registry: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// Said once: it is moved aside (kept), and the next command is quiet.
	if !strings.Contains(stderr, "moved the corrupt registry aside") {
		t.Fatalf("corrupt registry not moved aside: %q", stderr)
	}
	if data, err := os.ReadFile(registryAside(t, c.palace)); err != nil || string(data) != "{" {
		t.Fatalf("corrupt registry not kept: %q, %v", data, err)
	}
	out, stderr, code = c.run("conflicts", "--hive", c.hive)
	if code != 0 || stderr != "" || !strings.Contains(out, "2 open conflicts") {
		t.Fatalf("after the corrupt registry was set aside: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// registryAside returns the one place the conflict registry of palaceDir
// was moved aside to.
func registryAside(t *testing.T, palaceDir string) string {
	t.Helper()
	asides, err := filepath.Glob(filepath.Join(palaceDir, "conflicts.json.damaged-*"))
	if err != nil || len(asides) != 1 {
		t.Fatalf("registry set aside as %v (%v), want one", asides, err)
	}
	return asides[0]
}

// TestConflictsRegistryDirectory: a directory where conflicts.json should
// be is said by commands while another writer holds the palace, moved
// aside with its contents by the next command that may write, and the
// command after that is quiet.
func TestConflictsRegistryDirectory(t *testing.T) {
	c := newCLI(t)
	registry := filepath.Join(c.palace, "conflicts.json")
	testutil.WriteFile(t, filepath.Join(registry, "kept.txt"), "kept\n")
	addConflictCopies(t, c.hive)

	// Another writer holds the palace: the registry is left as it is.
	ctx := context.Background()
	p, err := palace.Open(ctx, c.palace, palace.Options{ReadOnly: true, Wings: []string{"-"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Lock(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		out, stderr, code := c.run("conflicts", "--hive", c.hive)
		if code != 0 || !strings.Contains(stderr, "not a regular file (directory)") || !strings.Contains(out, "2 open conflicts") {
			t.Fatalf("registry directory: exit %d, stdout %q, stderr %q", code, out, stderr)
		}
		if strings.Contains(stderr, "moved the corrupt registry aside") {
			t.Fatalf("moved aside while another writer holds the palace: %q", stderr)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	// The next command may write: it says so once and moves it aside.
	out, stderr, code := c.run("conflicts", "--hive", c.hive)
	if code != 0 || strings.Count(stderr, "not a regular file (directory)") != 1 || !strings.Contains(out, "2 open conflicts") {
		t.Fatalf("registry directory: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	aside := registryAside(t, c.palace)
	if !strings.Contains(stderr, "moved the corrupt registry aside to $PALACE/"+filepath.Base(aside)+";") {
		t.Fatalf("registry directory not moved aside: %q", stderr)
	}
	if data, err := os.ReadFile(filepath.Join(aside, "kept.txt")); err != nil || string(data) != "kept\n" {
		t.Fatalf("registry directory's contents not kept: %q, %v", data, err)
	}
	out, stderr, code = c.run("conflicts", "--hive", c.hive)
	if code != 0 || stderr != "" || !strings.Contains(out, "2 open conflicts") {
		t.Fatalf("after the registry directory was set aside: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

func TestResolveSyncthing(t *testing.T) {
	conf := func(url, key string) func() (string, syncthing.GUIConfig, error) {
		return func() (string, syncthing.GUIConfig, error) {
			return "/st/config.xml", syncthing.GUIConfig{Address: url, APIKey: key}, nil
		}
	}
	none := func() (string, syncthing.GUIConfig, error) {
		return "", syncthing.GUIConfig{}, syncthing.ErrNoConfig
	}
	broken := func() (string, syncthing.GUIConfig, error) {
		return "", syncthing.GUIConfig{}, errors.New("config.xml: permission denied")
	}
	tests := []struct {
		name    string
		url     string // the syncthing_url setting
		key     string // the syncthing_api_key setting, set by keyFrom
		env     map[string]string
		find    func() (string, syncthing.GUIConfig, error)
		wantURL string
		wantKey string
		keyFrom string
		off     string
	}{
		{name: "config.xml only", find: conf("127.0.0.1:8385", "cfgkey"),
			wantURL: "http://127.0.0.1:8385", wantKey: "cfgkey", keyFrom: "/st/config.xml"},
		{name: "settings win", url: "http://127.0.0.1:9000", key: "flagkey", env: map[string]string{envSTGUIAPIKey: "stkey"},
			find: conf("127.0.0.1:8385", "cfgkey"), wantURL: "http://127.0.0.1:9000", wantKey: "flagkey", keyFrom: "--syncthing-api-key"},
		{name: "memminer's setting over syncthing env", url: "http://127.0.0.1:9001", key: "envkey", env: map[string]string{envSTGUIAPIKey: "stkey"},
			find: conf("127.0.0.1:8385", "cfgkey"), wantURL: "http://127.0.0.1:9001", wantKey: "envkey", keyFrom: "--syncthing-api-key"},
		{name: "STGUIAPIKEY, address from config.xml", env: map[string]string{envSTGUIAPIKey: "stkey"}, find: conf("0.0.0.0:8386", "cfgkey"),
			wantURL: "http://127.0.0.1:8386", wantKey: "stkey", keyFrom: envSTGUIAPIKey},
		{name: "key without config.xml", env: map[string]string{envSTGUIAPIKey: "stkey"}, find: none,
			wantURL: syncthing.DefaultURL, wantKey: "stkey", keyFrom: envSTGUIAPIKey},
		{name: "no key anywhere", find: none, wantURL: syncthing.DefaultURL, off: "no Syncthing API key: pass --syncthing-api-key, set MEMMINER_SYNCTHING_API_KEY or STGUIAPIKEY"},
		{name: "config.xml unreadable", find: broken, wantURL: syncthing.DefaultURL, off: "permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := resolveSyncthing(tt.url, tt.key, "--syncthing-api-key", func(k string) string { return tt.env[k] }, tt.find)
			if tt.off != "" {
				if !strings.Contains(s.Off, tt.off) {
					t.Fatalf("Off = %q, want %q", s.Off, tt.off)
				}
				for _, k := range []string{"flagkey", "envkey", "stkey", "cfgkey"} {
					if strings.Contains(s.Off, k) {
						t.Fatalf("Off reveals a key: %q", s.Off)
					}
				}
				return
			}
			if s.Off != "" || s.URL != tt.wantURL || s.APIKey != tt.wantKey || s.KeyFrom != tt.keyFrom {
				t.Fatalf("got %+v (key %q), want url %s key %s from %s", s, s.APIKey, tt.wantURL, tt.wantKey, tt.keyFrom)
			}
		})
	}
}

// TestConflictSettingsFromConfig: the config file's Syncthing and alert
// settings reach the conflict component, and flags still override them.
func TestConflictSettingsFromConfig(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := newApp(io.Discard, io.Discard, func(string) string { return "" })
	cmd := a.runCmd() // no flags given
	a.cfg = config.Default(func(string) string { return "" }, "lexical")
	build := func() (*conflicts.Component, error) {
		client, s, err := a.syncthingClient(cmd)
		if err != nil {
			return nil, err
		}
		return a.conflictsComponent(cmd, log, client, s)
	}

	a.cfg.Syncthing = false
	a.cfg.SyncthingAPIKey = "cfgkey"
	c, err := build()
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Snapshot(); st.Syncthing.Enabled || st.Syncthing.Reason == nil || !strings.Contains(*st.Syncthing.Reason, "disabled") {
		t.Fatalf("syncthing: false ignored: %+v", st.Syncthing)
	}

	a.cfg.Syncthing = true
	a.cfg.SyncthingURL = "http://127.0.0.1:9"
	a.cfg.ConflictWebhook = "not a url"
	if _, err := build(); err == nil || !strings.HasPrefix(err.Error(), "conflict_webhook: webhook URL") {
		t.Fatalf("conflict_webhook from config not checked: %v", err)
	}
	a.cfg.ConflictWebhook = ""
	c, err = build()
	if err != nil {
		t.Fatal(err)
	}
	if st := c.Snapshot(); !st.Syncthing.Enabled {
		t.Fatalf("syncthing_url and syncthing_api_key from config not used: %+v", st.Syncthing)
	}
}

// TestConflictCopyForms: every name Syncthing has given a conflict copy is
// one conflict to `conflicts --check` (exit 3, with and without a daemon)
// and is never mined, and a name that merely looks like one is mined and
// no conflict: mine skips exactly what the conflict watcher reports.
func TestConflictCopyForms(t *testing.T) {
	tests := []struct {
		name     string
		conflict bool
	}{
		{"memory.sync-conflict-20261201-095500-ABCDEFG.md", true},
		{"memory.sync-conflict-20261201-095500-ABCDEF1.md", true},
		{"memory.sync-conflict-20261201-095500.md", true},
		{"memory.sync-conflict-20261201-095500-.md", true},
		{"notes/todo.sync-conflict-20261201-095500-Z234567.markdown", true},
		{"memory.sync-conflict-draft.md", false},
		{"how-to-fix-sync-conflict-errors.md", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			c.env["MEMMINER_HIVE"] = c.hive
			word := fmt.Sprintf("zebrafact%d", i)
			testutil.WriteFile(t, filepath.Join(c.hive, "agents", "jim", filepath.FromSlash(tt.name)), "# copy\n- "+word+" only the losing machine wrote down\n")
			want := exitOK
			if tt.conflict {
				want = exitConflict
			}
			checks := func(mode string, extra ...string) {
				t.Helper()
				for _, args := range [][]string{{"conflicts", "--check", "--wing", "jim"}, {"conflicts", "--check"}} {
					args = append(append([]string{}, extra...), args...)
					if _, stderr, code := c.run(args...); code != want {
						t.Errorf("%s: memminer %s: exit %d (%s), want %d", mode, strings.Join(args, " "), code, stderr, want)
					}
				}
			}
			checks("direct")
			c.ok("mine", c.hive)
			out, stderr, code := c.run("search", word, "--json")
			if code != exitOK && code != exitError { // 1: no match
				t.Fatalf("memminer search %s: exit %d: %s", word, code, stderr)
			}
			var found struct{ Results []json.RawMessage }
			if err := json.Unmarshal([]byte(out), &found); err != nil {
				t.Fatal(err)
			}
			if mined := len(found.Results) > 0; mined == tt.conflict {
				t.Errorf("after mine, search %s found it: %v; want %v\n%s", word, mined, !tt.conflict, out)
			}
			r := startRun(t, c, c.hive, "--no-syncthing", "--mine-interval", "1h")
			checks("daemon")
			r.stop(t)
		})
	}
}
