package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memminer/memminer/embed/uselite"
)

// realModelCache is the cache holding the converted built-in model, as
// scripts/test fetches it; without CI the test skips when it is missing.
func realModelCache(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("MEMMINER_TEST_MODEL_CACHE")
	if dir == "" {
		if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
			dir = filepath.Join(x, "memminer", "models")
		} else if d, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(d, "memminer", "models")
		}
	}
	path, err := uselite.ConvertedPath(uselite.Options{CacheDir: dir})
	if err == nil {
		_, err = os.Stat(path)
	}
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("no converted model in %s (run memminer model fetch)", dir)
		}
		t.Fatalf("the built-in model is missing under CI: %v", err)
	}
	return dir
}

func TestModelStatusAndVerify(t *testing.T) {
	c := newCLI(t)
	cache := filepath.Join(filepath.Dir(c.palace), "models")
	c.env["MEMMINER_MODEL_CACHE"] = cache
	scrub := func(s string) string { return strings.ReplaceAll(s, cache, "$CACHE") }

	golden(t, "model-status-lexical.txt", c.ok("model", "status"))
	keys := func(args ...string) []string {
		var m map[string]any
		if err := json.Unmarshal([]byte(c.ok(args...)), &m); err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(m))
	}
	// Every key of docs/model.md, whatever the model and its state.
	want := []string{"built_in", "bytes", "cached", "checksum", "dim", "error", "model", "ok", "package", "path", "self_test_cosine", "spec"}
	if got := keys("model", "status", "--json"); !slices.Equal(got, want) {
		t.Errorf("lexical model status keys %v, want %v", got, want)
	}
	delete(c.env, "MEMMINER_EMBEDDING_MODEL") // the built-in model
	golden(t, "model-status-missing.txt", scrub(c.ok("model", "status")))
	if got := keys("model", "status", "--json"); !slices.Equal(got, want) {
		t.Errorf("missing model status keys %v, want %v", got, want)
	}
	out, stderr, code := c.run("model", "verify")
	if code != exitError || !strings.Contains(out, "run memminer model fetch") || !strings.Contains(stderr, "failed verification") {
		t.Fatalf("verify without a model: exit %d, %q %q", code, out, stderr)
	}

	// A damaged file fails its checksum; status says so and still exits 0.
	path, err := uselite.ConvertedPath(uselite.Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("MMUSEL01 not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := c.ok("model", "status", "--json"); !strings.Contains(out, `"checksum": "failed"`) || !strings.Contains(out, `"ok": false`) {
		t.Fatalf("status of a damaged model: %s", out)
	}
	if _, _, code := c.run("model", "verify"); code != exitError {
		t.Fatalf("verify of a damaged model: exit %d", code)
	}

	t.Run("real model", func(t *testing.T) {
		c.env["MEMMINER_MODEL_CACHE"] = realModelCache(t)
		var r modelReport
		if err := json.Unmarshal([]byte(c.ok("model", "verify", "--json")), &r); err != nil {
			t.Fatal(err)
		}
		if !r.OK || r.Checksum != "ok" || r.Dim == nil || *r.Dim != 512 || r.SelfTestCosine == nil || *r.SelfTestCosine < uselite.MinSelfTestCosine || r.Model != uselite.ModelID {
			t.Fatalf("verify of the real model: %+v", r)
		}
	})
}

func TestGroupsNeedASubcommand(t *testing.T) {
	c := newCLI(t)
	tests := []struct {
		args   []string
		stderr string
	}{
		{[]string{"model"}, "memminer: model needs a subcommand: fetch, status, verify"},
		{[]string{"model", "tcsh"}, `memminer: unknown model subcommand "tcsh" (want: fetch, status, verify)`},
		{[]string{"completion"}, "memminer: completion needs a subcommand: bash, fish, powershell, zsh"},
		{[]string{"completion", "tcsh"}, `memminer: unknown completion subcommand "tcsh" (want: bash, fish, powershell, zsh)`},
		{[]string{"help", "serch"}, `unknown help topic "serch" (want: capture, completion, conflicts,`},
		{[]string{"help", "model", "tcsh"}, `unknown help topic "model tcsh" (want: capture, completion,`},
	}
	for _, tt := range tests {
		if _, stderr, code := c.run(tt.args...); code != exitUsage || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("memminer %s: exit %d, %q; want 2 and %q", strings.Join(tt.args, " "), code, stderr, tt.stderr)
		}
	}
	if out := c.ok("help", "model", "status"); !strings.Contains(out, "memminer model status [flags]") {
		t.Fatalf("help model status: %.200s", out)
	}
	if out := c.ok("completion", "bash"); !strings.Contains(out, "bash completion") {
		t.Fatalf("completion bash: %.80s", out)
	}
}
