package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/recall/catalog"
)

// indexOut scrubs what differs between runs from index output.
func indexOut(c *cli, args ...string) string {
	c.t.Helper()
	return scrubRemember(c.ok(args...))
}

func TestIndexGolden(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	c.ok("mine", c.hive)
	c.serve(t)
	md := indexOut(c, "index")
	golden(t, "index.md", md)
	golden(t, "index.json", indexOut(c, "index", "--json"))
	if strings.Contains(indexOut(c, "index", "--json"), `"text"`) {
		t.Error("index --json carries note text")
	}

	// --write: the same Markdown, written once.
	if out := c.ok("index", "--write"); !strings.HasPrefix(out, "wrote ") {
		t.Errorf("index --write: %q", out)
	}
	path := filepath.Join(c.hive, catalog.FileName)
	if got := scrubRemember(c.scrub(testutil.ReadFile(t, path))); got != md {
		t.Errorf("INDEX.md differs from index's output:\n%s", got)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(path, old, old)
	if out := c.ok("index", "--write"); !strings.HasSuffix(out, "is current\n") {
		t.Errorf("index --write of an unchanged catalog: %q", out)
	}
	if info, _ := os.Stat(path); !info.ModTime().Equal(old) {
		t.Error("an unchanged INDEX.md was rewritten")
	}

	// Never mined as memory.
	before := c.ok("status", "--json")
	c.ok("mine", c.hive)
	if after := c.ok("status", "--json"); notesLine(after) != notesLine(before) {
		t.Errorf("mining the hive with INDEX.md changed the notes: %s → %s", notesLine(before), notesLine(after))
	}
	if _, errs, code := c.run("index", "--json", "--write"); code != exitUsage {
		t.Errorf("--json --write: exit %d %s", code, errs)
	}
}

func notesLine(statusJSON string) string {
	for _, l := range strings.Split(statusJSON, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), `"notes"`) {
			return l
		}
	}
	return ""
}

// TestIndexThroughDaemon checks that the daemon answers index as the CLI
// does, and that run --index keeps INDEX.md current.
func TestIndexThroughDaemon(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	r := startRun(t, c, c.hive, "--index")
	r.idle(t, c)
	sameAsGolden(t, "index.md", indexOut(c, "index"))
	path := filepath.Join(c.hive, catalog.FileName)
	testutil.WaitFor(t, "INDEX.md", func() bool { _, err := os.Stat(path); return err == nil })
	c.ok("remember", "--wing", "pam", "--heading", "Plants", "The reception ficus needs water on Mondays")
	testutil.WaitFor(t, "INDEX.md to list the new heading", func() bool {
		data, _ := os.ReadFile(path)
		return strings.Contains(string(data), "Plants: 1")
	})
	if got, want := scrubRemember(c.scrub(testutil.ReadFile(t, path))), indexOut(c, "index"); got != want {
		t.Errorf("INDEX.md is not the current catalog:\n%s\nwant\n%s", got, want)
	}
}

func sameAsGolden(t *testing.T, name, got string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join("testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("through the daemon, index differs from %s:\n%s", name, got)
	}
}
