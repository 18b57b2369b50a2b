package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// Keys that name a file: relative to the hive (or, for wake-up's file,
// to the agent directory), or absolute.
var (
	relativeKeys = map[string]bool{"source": true, "sources": true, "file": true}
	absoluteKeys = map[string]bool{"path": true, "paths": true, "original": true, "roots": true}
)

// checkFileNames fails unless every file-naming value in the JSON doc
// follows the rule: source and file relative, path absolute.
func checkFileNames(t *testing.T, name, doc string) {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", name, err, doc)
	}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(k, x)
			}
		case []any:
			for _, x := range v {
				walk(key, x)
			}
		case string:
			abs := filepath.IsAbs(v)
			switch {
			case v == "":
			case relativeKeys[key] && abs:
				t.Errorf("%s: %q is %q, want it relative to the hive", name, key, v)
			case absoluteKeys[key] && !abs:
				t.Errorf("%s: %q is %q, want it absolute", name, key, v)
			}
		}
	}
	walk("", v)
}

// TestJSONNamesFilesOneWay runs every command that prints JSON naming
// files with and without a configured hive, with and without a daemon,
// from two working directories: source (and remember's file) is relative
// to the hive and path absolute, the same each time.
func TestJSONNamesFilesOneWay(t *testing.T) {
	commands := []struct {
		args      []string
		needsHive bool
	}{
		{args: []string{"search", "web bundle", "--wing", "pam", "-n", "2", "--json"}},
		{args: []string{"wake-up", "--wing", "pam", "--tokens", "300", "--json"}},
		{args: []string{"index", "--json"}},
		{args: []string{"conflicts", "--json"}},
		{args: []string{"status", "--json"}},
		{args: []string{"forget", "--wing", "pam", "--dry-run", "--force", "--json"}},
		{args: []string{"mine", "$HIVE", "--dry-run", "--json"}},
		// A fact pam holds already: remember answers with the note holding it.
		{args: []string{"remember", "--wing", "pam", "--json", "The web bundle is built with electron-vite; run `npm run build:web`, output lands in `out/web`."}, needsHive: true},
	}
	// direct holds each command's scrubbed output without a daemon, to
	// compare with the daemon's.
	direct := map[string]string{}
	for _, hiveSet := range []bool{false, true} {
		for _, served := range []bool{false, true} {
			t.Run(fmt.Sprintf("hive set %v, daemon %v", hiveSet, served), func(t *testing.T) {
				c := newCLI(t)
				testutil.WriteFile(t, filepath.Join(c.hive, "agents", "dwight", "memory.sync-conflict-20261201-120000-ABCDEFG.md"), "- a copy\n")
				testutil.WriteFile(t, filepath.Join(c.hive, "agents", "pam", "bad.md"), "not \xff utf-8\n")
				if hiveSet {
					c.env["MEMMINER_HIVE"] = c.hive
				}
				if served {
					r := startRun(t, c, c.hive)
					r.idle(t, c)
				} else {
					c.ok("mine", c.hive)
				}
				for _, cmd := range commands {
					if cmd.needsHive && !hiveSet {
						continue
					}
					args := make([]string, len(cmd.args))
					for i, a := range cmd.args {
						args[i] = strings.ReplaceAll(a, "$HIVE", c.hive)
					}
					name := cmd.args[0]
					var outs []string
					for _, dir := range []string{filepath.Join(c.hive, "agents", "pam"), filepath.Dir(c.palace)} {
						t.Chdir(dir)
						outs = append(outs, c.stdout(args...))
					}
					scrub := func(s string) string { return uptimeRe.ReplaceAllString(c.scrub(s), "$${1}$$UPTIME") }
					if a, b := scrub(outs[0]), scrub(outs[1]); a != b {
						t.Errorf("%s: JSON differs by working directory:\n%s\n---\n%s", name, a, b)
					}
					checkFileNames(t, name, outs[0])
					key := fmt.Sprint(hiveSet, cmd.args)
					if !served {
						direct[key] = scrub(outs[0])
					} else if got := scrub(outs[0]); name != "status" && got != direct[key] {
						t.Errorf("%s: JSON differs with the daemon:\n%s\n--- without\n%s", name, got, direct[key])
					}
					if name == "index" {
						checkIndexNames(t, c, outs[0])
					}
				}
			})
		}
	}
}

// checkIndexNames checks index --json names each memory file as search
// does: source agents/<wing>/memory.md, path absolute.
func checkIndexNames(t *testing.T, c *cli, doc string) {
	t.Helper()
	var x struct {
		Wings []struct {
			Wing  string
			Files []struct{ Source, Path string }
		}
	}
	if err := json.Unmarshal([]byte(doc), &x); err != nil {
		t.Fatal(err)
	}
	for _, w := range x.Wings {
		for _, f := range w.Files {
			rel := "agents/" + w.Wing + "/memory.md"
			if f.Source != rel || f.Path != filepath.Join(c.hive, filepath.FromSlash(rel)) {
				t.Errorf("index: wing %s file is source %q, path %q; want %s, and it under $HIVE", w.Wing, f.Source, f.Path, rel)
			}
		}
	}
}

// TestIndexAfterCopiedHive: a hive mined, copied elsewhere and mined
// there lists each file once, at its new place, with its notes; the copy
// left behind is not listed with 0 notes.
func TestIndexAfterCopiedHive(t *testing.T) {
	c := newCLI(t)
	c.ok("mine", c.hive)
	copied := filepath.Join(filepath.Dir(c.hive), "copied-hive")
	testutil.CopyDir(t, c.hive, copied)
	c.ok("mine", copied)
	c.hive = copied
	var x struct {
		Wings []struct {
			Wing  string
			Files []struct {
				Source, Path string
				Notes        int
			}
		}
	}
	if err := json.Unmarshal([]byte(c.stdout("index", "--json")), &x); err != nil {
		t.Fatal(err)
	}
	for _, w := range x.Wings {
		if len(w.Files) != 1 || w.Files[0].Notes == 0 || w.Files[0].Path != filepath.Join(copied, "agents", w.Wing, "memory.md") {
			t.Errorf("wing %s lists %+v; want its memory.md in the copy, with its notes", w.Wing, w.Files)
		}
	}
	checkIndexNames(t, c, c.stdout("index", "--json"))
}
