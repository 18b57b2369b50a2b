package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/daemon/registry"
	"github.com/memminer/memminer/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite golden files")

// cli runs memminer in process against one palace and hive.
type cli struct {
	t      *testing.T
	palace string
	hive   string
	env    map[string]string
	// copied is the day the hive was copied: the date of its undated notes.
	copied string
	// served is the daemon serve started, if it did.
	served *daemonRun
}

// throughDaemon is set when the suite runs on the daemon's transport
// (MEMMINER_TEST_TRANSPORT=daemon, as scripts/test runs it once): the
// behaviour tests that call serve then run every command through a daemon
// serving their hive, and must pass unchanged.
var throughDaemon = os.Getenv("MEMMINER_TEST_TRANSPORT") == "daemon"

// serve starts a daemon for c's palace and hive, and waits until it is
// idle, when the suite runs through the daemon (throughDaemon); otherwise
// it does nothing and c's commands open the palace themselves. A test
// calls it once its hive is set up; startRun stops this daemon first.
func (c *cli) serve(t *testing.T) {
	t.Helper()
	if !throughDaemon {
		return
	}
	c.served = startRun(t, c, c.hive)
	c.served.idle(t, c)
	t.Logf("commands go through the daemon serving %s", c.palace)
}

func newCLI(t *testing.T) *cli {
	t.Helper()
	tmp := t.TempDir()
	c := newCLIAt(t, tmp, filepath.Join(tmp, "hive"))
	testutil.CopyDir(t, filepath.Join("..", "..", "examples", "hive"), c.hive)
	return c
}

// newCLIAt is a cli whose home, config and palace are in tmp and whose
// hive is hive, running lexically.
func newCLIAt(t *testing.T, tmp, hive string) *cli {
	c := &cli{t: t, palace: filepath.Join(tmp, "palace"), hive: hive, copied: time.Now().UTC().Format(time.DateOnly)}
	c.env = map[string]string{
		"HOME":                     tmp,
		"XDG_CONFIG_HOME":          filepath.Join(tmp, "config"),
		"XDG_CACHE_HOME":           filepath.Join(tmp, "cache"),
		"XDG_RUNTIME_DIR":          filepath.Join(tmp, "run"), // each test sees only its own daemons
		"MEMMINER_PALACE_PATH":     c.palace,
		"MEMMINER_EMBEDDING_MODEL": "lexical",
		// remember's file is memory.laptop.md whatever the host's name.
		"MEMMINER_MACHINE": "laptop",
	}
	return c
}

func (c *cli) run(args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb, func(k string) string { return c.env[k] })
	return c.scrub(out.String()), c.scrub(errb.String()), code
}

// ok runs a command that must succeed and returns its stdout.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	out, errs, code := c.run(args...)
	if code != 0 {
		c.t.Fatalf("memminer %s: exit %d\nstderr: %s", strings.Join(args, " "), code, errs)
	}
	return out
}

var (
	rfc3339  = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	duration = regexp.MustCompile(` in (<1ms|[0-9.]+(ns|µs|ms|s|m)+\b)`)
	seconds  = regexp.MustCompile(`"seconds": [0-9.e-]+`)
	noteID   = regexp.MustCompile(`"id": "[0-9a-f]{32}"`)
	size     = regexp.MustCompile(`\([0-9.]+ (B|KiB|MiB)\)|"palace_bytes": \d+`)
)

// scrub replaces what differs between runs: temp paths, times, sizes.
func (c *cli) scrub(s string) string {
	s = strings.ReplaceAll(s, c.palace, "$PALACE")
	s = strings.ReplaceAll(s, c.hive, "$HIVE")
	s = rfc3339.ReplaceAllString(s, "$$TIME")
	// Undated notes are dated by their file's mtime.
	s = strings.ReplaceAll(s, c.copied, "$MTIME_DATE")
	s = duration.ReplaceAllString(s, " in $$DURATION")
	s = seconds.ReplaceAllString(s, `"seconds": $$SECONDS`)
	s = size.ReplaceAllString(s, "$$SIZE")
	// Ids are stable, but a golden file should not change with every
	// change of how notes are split.
	s = noteID.ReplaceAllString(s, `"id": "$$ID"`)
	return s
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", "golden", name), got, *update)
}

func TestCLIGolden(t *testing.T) {
	c := newCLI(t)
	steps := []struct {
		golden string
		args   []string
	}{
		{"status-empty.txt", []string{"status"}},
		{"mine.txt", []string{"mine", c.hive}},
		{"mine-again.json", []string{"mine", c.hive, "--json"}},
		{"search.txt", []string{"search", "how is the web bundle built", "--results", "3"}},
		{"search-wing.json", []string{"search", "db-2", "--wing", "dwight", "-n", "2", "--json"}},
		{"status.txt", []string{"status"}},
		{"status.json", []string{"status", "--json"}},
	}
	for _, s := range steps {
		golden(t, s.golden, c.ok(s.args...))
	}
}

func TestCLIErrors(t *testing.T) {
	c := newCLI(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"search empty palace", []string{"search", "anything"}, exitError, "no notes yet; start by mining the hive"},
		{"empty query", []string{"search", "  "}, exitUsage, "search needs a QUERY"},
		{"no query", []string{"search"}, exitUsage, "search needs a QUERY"},
		{"bad results", []string{"search", "x", "--results", "0"}, exitUsage, "--results must be between 1 and 1000"},
		{"mine without path", []string{"mine"}, exitUsage, "mine needs a PATH, a markdown file or a directory, or a hive; no hive: pass --hive DIR"},
		{"mine two paths", []string{"mine", c.hive, c.hive}, exitUsage, "mine takes one PATH at most"},
		{"mine missing path", []string{"mine", filepath.Join(c.hive, "nope")}, exitError, "no such file or directory"},
		{"mine bad wing", []string{"mine", c.hive, "--wing", "../x"}, exitUsage, `wing id "../x" is not valid`},
		{"unknown command", []string{"frobnicate"}, exitUsage, "unknown command"},
		{"unknown flag", []string{"status", "--frob"}, exitUsage, "unknown flag"},
		{"unknown flag of capture, not a hook", []string{"capture", "--frob"}, exitUsage, "unknown flag: --frob"},
		{"unknown flag of pre-action, not a hook", []string{"pre-action", "--frob"}, exitUsage, "unknown flag: --frob"},
		{"unknown model", []string{"status", "--model", "nope"}, exitUsage, "unknown embedding model"},
		{"unknown model, empty palace", []string{"search", "x", "--model", "foo"}, exitUsage, `--model: unknown embedding model "foo" (want lexical`},
		{"unknown model, empty palace wake-up", []string{"wake-up", "--model", "foo"}, exitUsage, `--model: unknown embedding model "foo" (want lexical`},
		{"missing config", []string{"status", "--config", filepath.Join(c.hive, "none.yml")}, exitError, "none.yml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := c.run(tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr, tt.code, tt.stderr)
			}
		})
	}
	c.ok("mine", c.hive)
	c.serve(t)
	_, stderr, code := c.run("search", "x", "--wing", "nobody")
	if code != exitUsage || !strings.Contains(stderr, "known wings: angela, dwight, jim, pam") {
		t.Fatalf("unknown wing: exit %d, %q", code, stderr)
	}
}

func TestCLIHelp(t *testing.T) {
	c := newCLI(t)
	for _, cmd := range allCommands(newApp(nil, nil, nil).rootCmd()) {
		args := append(strings.Fields(cmd.CommandPath())[1:], "--help")
		out, _, code := c.run(args...)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("memminer %s: exit %d, output %q", strings.Join(args, " "), code, out)
		}
		if args[0] == "completion" && len(args) > 2 {
			continue // cobra's own text
		}
		for _, l := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(l); n > helpWidth {
				t.Errorf("memminer %s: a line of %d characters: %q", strings.Join(args, " "), n, l)
			}
		}
	}
}

func TestCLIRebuildsCorruptWing(t *testing.T) {
	c := newCLI(t)
	c.ok("mine", c.hive)
	if err := os.WriteFile(filepath.Join(c.palace, "wings", "pam.wing"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := c.run("search", "electron-vite", "--json")
	if code != 0 || !strings.Contains(stderr, "wing pam was damaged") || !strings.Contains(stderr, "rebuilt from markdown") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if !strings.Contains(out, `"wing": "pam"`) || !strings.Contains(out, "electron-vite") {
		t.Fatalf("rebuilt wing not searched: %s", out)
	}
	// Saved: the next command finds nothing to rebuild.
	if _, stderr, _ := c.run("status"); strings.Contains(stderr, "damaged") {
		t.Fatalf("damage reported again: %q", stderr)
	}
}

// TestCLIRepairsDirectoryForWingFile: a directory where a wing file
// should be made every search exit 1 (the rebuild could not be saved over
// it) and was never repaired. The first command to take the writer lock,
// a search saving its rebuild or a mine, names the damage, moves the
// directory aside within wings/ (its contents kept) and writes the wing.
func TestCLIRepairsDirectoryForWingFile(t *testing.T) {
	for _, args := range [][]string{
		{"search", "electron-vite", "--json"},
		{"mine", "HIVE"},
	} {
		t.Run(args[0], func(t *testing.T) {
			c := newCLI(t)
			c.ok("mine", c.hive)
			wing := filepath.Join(c.palace, "wings", "pam.wing")
			if err := os.Remove(wing); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(wing, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(wing, "keep.txt"), []byte("the user's"), 0o600); err != nil {
				t.Fatal(err)
			}
			args = slices.Clone(args)
			if args[1] == "HIVE" {
				args[1] = c.hive
			}
			out, stderr, code := c.run(args...)
			if code != 0 || !strings.Contains(stderr, "wing pam was damaged") ||
				!strings.Contains(stderr, "wings/pam.wing") || !strings.Contains(stderr, "a directory, not a wing file") ||
				!strings.Contains(stderr, "moved aside") || !strings.Contains(stderr, "rebuilt from markdown (") {
				t.Fatalf("%s: exit %d, stderr %q", args[0], code, stderr)
			}
			if args[0] == "search" && (!strings.Contains(out, `"wing": "pam"`) || !strings.Contains(out, "electron-vite")) {
				t.Fatalf("rebuilt wing not searched: %s", out)
			}
			if fi, err := os.Lstat(wing); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("wing file after %s: %v, %v", args[0], fi, err)
			}
			asides, _ := filepath.Glob(wing + ".damaged-*")
			if len(asides) != 1 {
				t.Fatalf("set aside: %v, want one", asides)
			}
			if data, err := os.ReadFile(filepath.Join(asides[0], "keep.txt")); err != nil || string(data) != "the user's" {
				t.Errorf("what the directory held: %q, %v", data, err)
			}
			out, stderr, code = c.run("status", "--json")
			if code != 0 || stderr != "" || !strings.Contains(out, `"pam"`) {
				t.Fatalf("status after the repair: exit %d, stderr %q\n%s", code, stderr, out)
			}
			out = c.ok("search", "electron-vite", "--json")
			if !strings.Contains(out, `"wing": "pam"`) {
				t.Errorf("search after the repair: %s", out)
			}
		})
	}
}

// TestCLIDamagedWingOnUnwritablePalace: when the palace cannot be written
// (a read-only disk; here its lock cannot be opened, which root cannot
// get around either), search, status and wake-up report the damaged wing
// (a garbage file, or a directory in its place), rebuild it in memory and
// serve every wing instead of failing, and leave the damage as it was.
func TestCLIDamagedWingOnUnwritablePalace(t *testing.T) {
	tests := []struct {
		name   string
		damage func(wing string) error
		cause  string
	}{
		{"garbage", func(wing string) error { return os.WriteFile(wing, []byte("garbage"), 0o600) }, "bad header"},
		{"directory", func(wing string) error {
			if err := os.Remove(wing); err != nil {
				return err
			}
			return os.Mkdir(wing, 0o700)
		}, "is a directory, not a wing file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			c.ok("mine", c.hive)
			wing := filepath.Join(c.palace, "wings", "pam.wing")
			if err := tt.damage(wing); err != nil {
				t.Fatal(err)
			}
			before, err := os.Lstat(wing)
			if err != nil {
				t.Fatal(err)
			}
			lock := filepath.Join(c.palace, "lock")
			if err := os.Remove(lock); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(lock, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				{"search", "electron-vite", "--json"},
				{"status", "--json"},
				{"wake-up", "--json"},
			} {
				out, stderr, code := c.run(args...)
				if code != 0 || !strings.Contains(stderr, "wing pam was damaged") || !strings.Contains(stderr, tt.cause) || !strings.Contains(stderr, "in memory") {
					t.Fatalf("%s: exit %d, stderr %q", args[0], code, stderr)
				}
				served := strings.Contains(out, `"pam"`)
				if args[0] != "search" { // the query matches pam's notes only
					served = served && strings.Contains(out, `"dwight"`)
				}
				if !served {
					t.Errorf("%s: not every wing served:\n%s", args[0], out)
				}
			}
			after, err := os.Lstat(wing)
			if err != nil || !os.SameFile(before, after) || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
				t.Errorf("the unwritable palace was written: %v, %v", after, err)
			}
		})
	}
}

func TestCLIConfigPrecedence(t *testing.T) {
	c := newCLI(t)
	cfgDir := filepath.Join(c.env["XDG_CONFIG_HOME"], "memminer")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	fromFile := filepath.Join(filepath.Dir(c.palace), "from-file")
	if err := os.WriteFile(filepath.Join(cfgDir, "config.yml"), []byte("palace: "+fromFile+"\nenabled: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	delete(c.env, "MEMMINER_PALACE_PATH")
	if out := c.ok("status", "--json"); !strings.Contains(out, fromFile) {
		t.Fatalf("config file ignored: %s", out)
	}
	c.env["MEMMINER_PALACE_PATH"] = c.palace
	if out := c.ok("status", "--json"); !strings.Contains(out, `"palace": "$PALACE"`) {
		t.Fatalf("env does not override file: %s", out)
	}
	flagDir := filepath.Join(filepath.Dir(c.palace), "from-flag")
	if out := c.ok("status", "--json", "--palace", flagDir); !strings.Contains(out, flagDir) {
		t.Fatalf("flag does not override env: %s", out)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "config.yml"), []byte("palcae: typo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := c.run("status"); code == 0 || !strings.Contains(stderr, "palcae") {
		t.Fatalf("typo in config accepted: %d %q", code, stderr)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestCLILostOutputFails: output that could not be written is an error,
// in text as in JSON.
func TestCLILostOutputFails(t *testing.T) {
	c := newCLI(t)
	c.ok("mine", c.hive)
	for _, args := range [][]string{{"status"}, {"search", "db-2"}, {"search", "db-2", "--json"}} {
		var errb bytes.Buffer
		code := run(context.Background(), args, failingWriter{}, &errb, func(k string) string { return c.env[k] })
		if code != exitError || !strings.Contains(errb.String(), "no space left") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// TestCLIRepairsManifestOnce: a reader rebuilds a corrupt manifest from the
// wing files and saves it, so the warning is not repeated; a dry run saves
// nothing.
func TestCLIRepairsManifestOnce(t *testing.T) {
	c := newCLI(t)
	c.ok("mine", c.hive)
	manifest := filepath.Join(c.palace, "manifest.json")
	if err := os.WriteFile(manifest, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := c.run("mine", "--dry-run", c.hive); code != 0 || !strings.Contains(stderr, "manifest unreadable") {
		t.Fatalf("dry run: exit %d, %q", code, stderr)
	}
	if b, _ := os.ReadFile(manifest); string(b) != "{not json" {
		t.Fatal("a dry run wrote the manifest")
	}
	if _, stderr, code := c.run("status"); code != 0 || !strings.Contains(stderr, "manifest unreadable") {
		t.Fatalf("status: exit %d, %q", code, stderr)
	}
	if _, stderr, _ := c.run("status"); strings.Contains(stderr, "manifest") {
		t.Fatalf("manifest not saved after the rebuild: %q", stderr)
	}
}

// TestCLIPartialReaderKeepsManifest: a search of one wing cannot rebuild a
// corrupt manifest of them all, so it leaves it for a full reader.
func TestCLIPartialReaderKeepsManifest(t *testing.T) {
	c := newCLI(t)
	c.ok("mine", c.hive)
	manifest := filepath.Join(c.palace, "manifest.json")
	if err := os.WriteFile(manifest, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok("search", "db-2", "--wing", "dwight")
	if b, _ := os.ReadFile(manifest); string(b) != "{" {
		t.Fatalf("a one-wing search rewrote the manifest:\n%s", b)
	}
	c.ok("status")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"angela", "dwight", "jim", "pam"} {
		if !strings.Contains(string(b), `"`+w+`"`) {
			t.Fatalf("rebuilt manifest lacks wing %s:\n%s", w, b)
		}
	}
}

// TestCLIAgentGlobs: the agents setting of the config file makes mine,
// conflicts, run and status treat the directories its globs match as
// agents, with and without the daemon: bots/kevin is wing kevin, bots/pam
// (whose wing id agents/pam has) is reported and not mined, and a bad
// pattern is refused naming its line.
func TestCLIAgentGlobs(t *testing.T) {
	c := newCLI(t)
	cfg := filepath.Join(c.env["XDG_CONFIG_HOME"], "memminer", "config.yml")
	testutil.WriteFile(t, cfg, "agents: [bots/*]\n")
	testutil.WriteFile(t, filepath.Join(c.hive, "bots", "kevin", "memory.md"), "- Kevin's famous chili needs onions.\n")
	testutil.WriteFile(t, filepath.Join(c.hive, "bots", "pam", "memory.md"), "- A forged kiln permit.\n")
	testutil.WriteFile(t, filepath.Join(c.hive, "bots", "kevin", "memory.sync-conflict-20240301-080000-ABCDEFG.md"), "- lost\n")
	const skipped = `memminer: skipped $HIVE/bots/pam: agent directory not mined: wing id "pam" is taken by agent directory agents/pam`

	out, stderr, code := c.run("mine", c.hive)
	if code != 0 || !strings.HasPrefix(out, "mined wings angela, dwight, jim, pam, kevin:") || !strings.Contains(stderr, skipped) {
		t.Fatalf("mine: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	if out := c.ok("search", "chili onions", "--wing", "kevin"); !strings.Contains(out, "famous chili") {
		t.Fatalf("wing kevin not searchable: %s", out)
	}
	if out, _, code := c.run("search", "forged kiln permit", "--json"); code != exitError || !strings.Contains(out, `"results": []`) {
		t.Fatalf("bots/pam was mined: exit %d, %s", code, out)
	}
	if _, stderr, code := c.run("conflicts", "--hive", c.hive, "--wing", "kevin", "--check"); code != exitConflict {
		t.Fatalf("conflicts --wing kevin --check without the daemon: exit %d, %s", code, stderr)
	}

	st := startRun(t, c, c.hive).idle(t, c)
	if len(st.Wings) != 5 {
		t.Fatalf("the daemon serves %d wings, want 5", len(st.Wings))
	}
	if out := c.ok("status"); !strings.Contains(out, `$HIVE/bots/pam: wing id "pam" is taken by agent directory agents/pam`) {
		t.Fatalf("status does not list bots/pam under errors:\n%s", out)
	}
	if _, stderr, code := c.run("mine", c.hive); code != 0 || !strings.Contains(stderr, skipped) {
		t.Fatalf("mine through the daemon: exit %d, stderr %s", code, stderr)
	}
	if _, stderr, code := c.run("conflicts", "--wing", "kevin", "--check"); code != exitConflict {
		t.Fatalf("conflicts --wing kevin --check through the daemon: exit %d, %s", code, stderr)
	}

	testutil.WriteFile(t, cfg, "hive: /h\nagents:\n  - bots/*\n  - /srv/bots/*\n")
	if _, stderr, code := c.run("status", "--no-daemon"); code != exitError || !strings.Contains(stderr, `line 4: agents: pattern "/srv/bots/*" is absolute`) {
		t.Fatalf("bad pattern: exit %d, %q", code, stderr)
	}
}

func TestCLIForget(t *testing.T) {
	c := newCLI(t)
	c.ok("mine", c.hive)
	// The hive still has agents/jim: forgetting it needs --force.
	c.env["MEMMINER_HIVE"] = c.hive
	if _, stderr, code := c.run("forget", "--wing", "jim"); code != exitError || !strings.Contains(stderr, "pass --force") {
		t.Fatalf("forget of a wing whose agent directory exists: exit %d, %q", code, stderr)
	}
	golden(t, "forget.txt", c.ok("forget", "--wing", "Jim", "--force"))
	if out := c.ok("status"); strings.Contains(out, "jim") {
		t.Fatalf("jim still in status:\n%s", out)
	}
	// Without --force once the directory left the hive.
	if err := os.Rename(filepath.Join(c.hive, "agents", "pam"), filepath.Join(c.hive, "pam-gone")); err != nil {
		t.Fatal(err)
	}
	c.ok("forget", "--wing", "pam")
	out, stderr, code := c.run("search", "x", "--wing", "pam")
	if code != exitUsage || !strings.Contains(stderr, `unknown wing "pam" (known wings: angela, dwight)`) {
		t.Fatalf("search of a forgotten wing: exit %d, %q %q", code, out, stderr)
	}
	for _, tt := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"forget"}, "forget needs --wing ID"},
		{[]string{"forget", "--wing", "../x"}, "is not valid"},
		{[]string{"forget", "--wing", "nobody"}, `unknown wing "nobody" (known wings: angela, dwight)`},
		{[]string{"forget", "dwight"}, "name the wing with --wing ID"},
	} {
		if _, stderr, code := c.run(tt.args...); code != exitUsage || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("memminer %s: exit %d, %q; want exit 2 and %q", strings.Join(tt.args, " "), code, stderr, tt.stderr)
		}
	}
}

// TestCLIForgetCreatesNoPalace: forgetting from a palace that does not
// exist is the unknown-wing error, and leaves no palace behind.
func TestCLIForgetCreatesNoPalace(t *testing.T) {
	c := newCLI(t)
	if _, stderr, code := c.run("forget", "--wing", "jim"); code != exitUsage || !strings.Contains(stderr, `unknown wing "jim": the palace has no wings yet`) {
		t.Fatalf("forget from no palace: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(c.palace); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("forget created the palace: %v", err)
	}
}

func TestCLIMineNeedsWing(t *testing.T) {
	c := newCLI(t)
	dir := filepath.Dir(c.palace)
	readme := filepath.Join(dir, "project", "README.md")
	binary := filepath.Join(dir, "bin", "tool")
	testutil.WriteFile(t, readme, "# A project\n\nNot an agent's memory.\n")
	testutil.WriteFile(t, binary, "\x7fELF\x00\x00")
	for _, path := range []string{readme, filepath.Dir(readme), filepath.Dir(c.hive)} {
		_, stderr, code := c.run("mine", path)
		if code != exitUsage || !strings.Contains(stderr, "pass --wing ID") {
			t.Errorf("mine %s: exit %d, %q", path, code, stderr)
		}
	}
	if out, stderr, code := c.run("mine", binary, "--wing", "bin"); code != 0 || !strings.Contains(stderr, "skipped") || !strings.HasPrefix(out, "mined nothing: ") {
		t.Fatalf("mine of a binary: exit %d, %q, %q; want it to say it mined nothing", code, out, stderr)
	}
	if out := c.ok("status"); !strings.Contains(out, "initialized: false") {
		t.Fatalf("skipped files made a wing:\n%s", out)
	}
}

// TestCLIFallsBackWhenTheDaemonDiesMidAnswer: a daemon that dies while
// answering (here a socket that reads the request, sends half an answer
// and hangs up) leaves search, status, wake-up and conflicts to read the
// palace themselves: the output is that of --no-daemon.
func TestCLIFallsBackWhenTheDaemonDiesMidAnswer(t *testing.T) {
	c := newCLI(t)
	c.ok("mine", c.hive)
	testutil.HangUpServer(t, daemon.SocketPath(c.palace),
		"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 999\r\n\r\n{\"wi")
	for _, args := range [][]string{
		{"search", "electron-vite"},
		{"status", "--json"},
		{"wake-up"},
		{"conflicts", "--json"},
	} {
		want, wantErr, wantCode := c.run(append([]string{"--no-daemon"}, args...)...)
		got, gotErr, gotCode := c.run(args...)
		if got != want || gotErr != wantErr || gotCode != wantCode {
			t.Errorf("memminer %s with a daemon dying mid-answer:\n%s%s(exit %d)\nwant, as with --no-daemon:\n%s%s(exit %d)",
				strings.Join(args, " "), got, gotErr, gotCode, want, wantErr, wantCode)
		}
	}
}

// TestCLIReadsAroundAStoppedDaemon: a daemon that accepts and never
// answers (stopped with SIGSTOP: the kernel still accepts on its socket)
// leaves the read commands to read the palace themselves: the output is
// that of --no-daemon, plus one warning naming the daemon's pid, and
// saying it is stopped where the system tells (Linux).
func TestCLIReadsAroundAStoppedDaemon(t *testing.T) {
	c := newCLI(t)
	c.ok("mine", c.hive)
	socket := daemon.SocketPath(c.palace)
	testutil.SilentServer(t, socket)
	defer func(d time.Duration) { daemonAnswerTimeout = d }(daemonAnswerTimeout)
	daemonAnswerTimeout = time.Millisecond
	registryDir := registry.Dir(func(k string) string { return c.env[k] })

	type daemonProcess struct {
		name    string
		pid     func(t *testing.T) int // the pid the registry records
		stopped bool                   // as the registry tells
		warning string                 // after the pid and the bound
	}
	processes := []daemonProcess{
		// This process: alive, not stopped.
		{"stuck", func(*testing.T) int { return os.Getpid() }, false,
			"memminer: warning: the daemon (pid %[1]d) serving this palace did not answer within %[2]s (stuck?); reading the palace directly\n"},
	}
	if stoppedProcess != nil {
		processes = append(processes, daemonProcess{"stopped", stoppedProcess, true,
			"memminer: warning: the daemon (pid %[1]d) serving this palace is stopped and did not answer within %[2]s (kill -CONT %[1]d resumes it); reading the palace directly\n"})
	}
	for _, p := range processes {
		t.Run(p.name, func(t *testing.T) {
			pid := p.pid(t)
			unregister, err := registry.Register(registryDir, registry.Record{PID: pid, Palace: c.palace, Hive: c.hive, Socket: socket, Started: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			defer unregister()
			testutil.WaitFor(t, "the registry telling the daemon's state", func() bool {
				recs, err := registry.List(context.Background(), registryDir)
				return err == nil && len(recs) == 1 && recs[0].Stopped == p.stopped
			})
			warning := fmt.Sprintf(p.warning, pid, daemonAnswerTimeout)
			for _, args := range [][]string{
				{"search", "electron-vite"},
				{"search", "--json", "electron-vite"},
				{"status", "--json"},
				{"wake-up"},
				{"conflicts", "--json"},
			} {
				want, wantErr, wantCode := c.run(append([]string{"--no-daemon"}, args...)...)
				got, gotErr, gotCode := c.run(args...)
				if got != want || gotErr != warning+wantErr || gotCode != wantCode {
					t.Errorf("memminer %s with a daemon that does not answer:\n%s%s(exit %d)\nwant, as with --no-daemon after the warning:\n%s%s%s(exit %d)",
						strings.Join(args, " "), got, gotErr, gotCode, want, warning, wantErr, wantCode)
				}
				if args[0] == "search" && (gotCode != 0 || !strings.Contains(got, "electron-vite")) {
					t.Errorf("memminer %s with a daemon that does not answer: exit %d, %q; want the palace's results", strings.Join(args, " "), gotCode, got)
				}
			}
			// service-status reports on the daemon, so it says it did not answer.
			if out, _, _ := c.run("service-status"); !strings.Contains(out, "daemon:      not answering: the daemon on "+c.scrub(socket)+" accepted /status and did not answer within "+daemonAnswerTimeout.String()+"\n") {
				t.Errorf("service-status with a daemon that does not answer:\n%s", out)
			}
		})
	}
}

// stoppedProcess, where the registry can tell a stopped process (Linux),
// starts a process, stops it with SIGSTOP until the test ends and returns
// its pid.
var stoppedProcess func(t *testing.T) int

// TestCLIMineAdvice: mine's errors get the CLI's advice (which flag to
// pass), the same whether the daemon mined or this process did.
func TestCLIMineAdvice(t *testing.T) {
	c := newCLI(t)
	bad := filepath.Join(filepath.Dir(c.palace), "Bad Name")
	testutil.WriteFile(t, filepath.Join(bad, "memory.md"), "- a fact\n")
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"mine", c.hive, "--agent", "claude"}, exitError, "an agent name needs a wing; a hive is mined one wing per agent: pass --wing with --agent"},
		{[]string{"mine", bad}, exitError, `the directory name gives no usable wing id: wing id "Bad Name" is not valid`},
		{[]string{"mine", filepath.Dir(c.hive)}, exitUsage, "so no wing follows from it; pass --wing ID to mine it into wing ID"},
	}
	check := func(mode string) {
		t.Helper()
		for _, tt := range tests {
			_, stderr, code := c.run(tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.msg) {
				t.Errorf("%s: memminer %s: exit %d, %q; want %d, %q", mode, strings.Join(tt.args, " "), code, stderr, tt.code, tt.msg)
			}
		}
		if _, stderr, _ := c.run("mine", bad); !strings.HasSuffix(strings.TrimSpace(stderr), "; pass --wing") {
			t.Errorf("%s: mine of a directory whose name is no wing id: %q, want the --wing advice", mode, stderr)
		}
	}
	check("direct")
	r := startRun(t, c, c.hive, "--no-syncthing", "--mine-interval", "1h")
	check("daemon")
	r.stop(t)
}

// An unknown --wing is worded one way by every command that takes one.
func TestUnknownWingOneWording(t *testing.T) {
	c := newCLI(t)
	c.ok("mine", c.hive)
	c.serve(t)
	want := `memminer: --wing: unknown wing "nobody" (known wings: angela, dwight, jim, pam)` + "\n"
	for _, args := range [][]string{
		{"search", "x", "--wing", "nobody"},
		{"wake-up", "--wing", "nobody"},
		{"conflicts", "--wing", "nobody"},
		{"forget", "--wing", "nobody"},
	} {
		_, stderr, code := c.run(args...)
		if first, _, _ := strings.Cut(stderr, "Run '"); code != exitUsage || first != want {
			t.Errorf("memminer %s: exit %d, %q; want %q", strings.Join(args, " "), code, first, want)
		}
	}
}

// JSON names a note's file the same from every working directory:
// source relative to the hive, path absolute; conflicts give absolute paths.
func TestJSONSourceIsStable(t *testing.T) {
	c := newCLI(t)
	c.ok("mine", c.hive)
	c.serve(t)
	testutil.WriteFile(t, filepath.Join(c.hive, "agents", "pam", "memory.sync-conflict-20261201-120000-ABCDEFG.md"), "- a copy\n")
	var outs []string
	for _, dir := range []string{c.hive, filepath.Join(c.hive, "agents", "pam"), filepath.Dir(c.palace)} {
		t.Chdir(dir)
		outs = append(outs, c.ok("search", "web bundle", "--wing", "pam", "-n", "1", "--json")+c.ok("wake-up", "--wing", "pam", "--json")+
			c.ok("conflicts", "--hive", c.hive, "--json"))
	}
	for _, o := range outs[1:] {
		if o != outs[0] {
			t.Fatalf("JSON differs by working directory:\n%s\n---\n%s", outs[0], o)
		}
	}
	if !strings.Contains(outs[0], `"source": "agents/pam/memory.md"`) || !strings.Contains(outs[0], `"path": "$HIVE/agents/pam/memory.md"`) ||
		!strings.Contains(outs[0], `"path": "$HIVE/agents/pam/memory.sync-conflict-20261201-120000-ABCDEFG.md"`) {
		t.Fatalf("source and path:\n%s", outs[0])
	}
}

// TestCLIEmptyPalaceJSON: on a palace without notes, search --json and
// wake-up --json print the keys they print on a mined one, exit 1, and
// say the same thing on stderr.
func TestCLIEmptyPalaceJSON(t *testing.T) {
	c := newCLI(t)
	cmds := []struct {
		golden string
		args   []string
	}{
		{"search-empty.json", []string{"search", "db-2", "--json"}},
		{"wake-up-empty.json", []string{"wake-up", "--json"}},
	}
	const said = "memminer: the palace at $PALACE has no notes yet; start by mining the hive: memminer mine path/to/hive (or one agent: memminer mine hive/agents/<id>)\n"
	empty := make([]string, len(cmds))
	for i, cmd := range cmds {
		out, stderr, code := c.run(cmd.args...)
		empty[i] = out
		if code != exitError || stderr != said {
			t.Fatalf("%s: exit %d, stderr %q; want %d and %q", cmd.args[0], code, stderr, exitError, said)
		}
		golden(t, cmd.golden, out)
	}
	c.ok("mine", c.hive)
	for i, cmd := range cmds {
		if got, want := jsonKeys(t, empty[i]), jsonKeys(t, c.ok(cmd.args...)); !slices.Equal(got, want) {
			t.Errorf("%s on an empty palace: keys %v, want %v", cmd.args[0], got, want)
		}
	}
}

func jsonKeys(t *testing.T, s string) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, s)
	}
	return slices.Sorted(maps.Keys(m))
}
