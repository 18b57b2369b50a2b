package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

// newPackCLI is a CLI whose hive is the pack fixture, testdata/packhive:
// wing ops (fresh), wing legacy (its notes and file from 2020), the packs
// deploy (warns of the stale file) and migrate (block_stale), mined.
func newPackCLI(t *testing.T) *cli {
	t.Helper()
	tmp := t.TempDir()
	c := newCLIAt(t, tmp, filepath.Join(tmp, "hive"))
	testutil.CopyDir(t, filepath.Join("testdata", "packhive"), c.hive)
	old := time.Date(2020, 2, 1, 12, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(c.hive, "agents", "legacy", "memory.md"), old, old); err != nil {
		t.Fatal(err)
	}
	c.env["MEMMINER_HIVE"] = c.hive
	c.env["MEMMINER_USER"] = "tester"
	c.ok("mine", c.hive)
	return c
}

// cmdLog runs memminer commands and records each one's exit code,
// stdout and stderr, scrubbed.
type cmdLog struct {
	t *testing.T
	c *cli
	b strings.Builder
}

func (tr *cmdLog) step(args ...string) (stdout string, code int) {
	tr.t.Helper()
	var out, errb bytes.Buffer
	code = run(tr.t.Context(), args, &out, &errb, func(k string) string { return tr.c.env[k] })
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = strconv.Quote(a)
	}
	fmt.Fprintf(&tr.b, "$ memminer %s\nexit %d\n%s%s\n", strings.Join(quoted, " "), code, tr.c.scrub(out.String()), tr.c.scrub(errb.String()))
	return out.String(), code
}

func packSteps(t *testing.T, c *cli) string {
	tr := &cmdLog{t: t, c: c}
	tr.step("pack", "--list")
	tr.step("pack", "deploy")
	tr.step("pack", "deploy", "--json")
	tr.step("pack", "deploy", "--tokens", "70")
	if _, code := tr.step("pack", "migrate"); code != exitStale {
		t.Errorf("pack migrate (block_stale, stale file): exit %d, want %d", code, exitStale)
	}
	for i := range 3 {
		tr.step("pack", "deploy", "--mark", "bad", "--note", fmt.Sprintf("missed the rollback rule (%d)", i+1))
	}
	tr.step("pack", "deploy")
	tr.step("pack", "--list", "--json")
	tr.step("pack", "deploy", "--mark", "reviewed")
	tr.step("pack", "--list")
	tr.step("pack", "deploy", "--mark", "great")
	tr.step("pack", "nosuch")
	return tr.b.String()
}

// TestPackGolden renders the fixture's packs, text and JSON, marks one bad
// three times (review needed), then reviewed; with and without the
// daemon, the same cmdLog.
func TestPackGolden(t *testing.T) {
	withAndWithoutDaemon(t, "pack.txt", packSteps, func(t *testing.T, c *cli) {
		log := testutil.ReadFile(t, filepath.Join(c.hive, "packs", "deploy.marks"))
		if n := strings.Count(log, " bad tester: missed the rollback rule"); n != 3 {
			t.Errorf("deploy.marks has %d bad marks, want 3:\n%s", n, log)
		}
	})
}

// withAndWithoutDaemon runs steps on the pack fixture without a daemon
// and with one, checks their transcript against the same golden file, and
// then what check checks.
func withAndWithoutDaemon(t *testing.T, name string, steps func(*testing.T, *cli) string, check func(*testing.T, *cli)) {
	for _, withDaemon := range []bool{false, true} {
		t.Run(fmt.Sprintf("daemon=%v", withDaemon), func(t *testing.T) {
			c := newPackCLI(t)
			if withDaemon {
				startRun(t, c, c.hive).idle(t, c)
			}
			testutil.Golden(t, filepath.Join("testdata", "golden", name), steps(t, c), *update && !withDaemon)
			check(t, c)
		})
	}
}

// TestPackReviewNeededEverywhere: three bad marks in a row show in status
// and wake-up too, and an edit of the pack clears them.
func TestPackReviewNeededEverywhere(t *testing.T) {
	c := newPackCLI(t)
	for range 3 {
		c.ok("pack", "deploy", "--mark", "bad")
	}
	if out := c.ok("status"); !strings.Contains(out, "packs:       review needed: deploy (memminer pack --list)\n") {
		t.Errorf("status does not say deploy needs review:\n%s", out)
	}
	if out := c.ok("status", "--json"); !strings.Contains(out, `"packs_review_needed": [`+"\n"+`    "deploy"`) {
		t.Errorf("status --json:\n%s", out)
	}
	if out := c.ok("wake-up"); !strings.HasPrefix(out, "## Attention\n- pack deploy needs review: 3 bad marks in a row (memminer pack deploy)\n") {
		t.Errorf("wake-up:\n%s", out)
	}
	// Editing the pack (its review_date, say) clears the flag.
	path := filepath.Join(c.hive, "packs", "deploy.md")
	data := testutil.ReadFile(t, path)
	later := time.Now().Add(2 * time.Second)
	testutil.WriteFile(t, path, strings.Replace(data, "stale_after: 90d\n", "stale_after: 90d\nreview_date: 2099-01-01\n", 1))
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if out := c.ok("pack", "deploy"); strings.Contains(out, "REVIEW NEEDED") {
		t.Errorf("pack still needs review after an edit:\n%s", out)
	}
	if out := c.ok("wake-up"); strings.Contains(out, "needs review") {
		t.Errorf("wake-up still says review needed:\n%s", out)
	}
}

// TestPackMalformed: a malformed pack is an error naming its line, and
// nothing is rendered.
func TestPackMalformed(t *testing.T) {
	c := newPackCLI(t)
	tests := []struct{ content, want string }{
		{"---\nuse:\n  - wing:ops\n  - color:red\n---\nx\n", "packs/bad.md:4: entry \"color:red\": unknown kind \"color\""},
		{"---\nuse:\n  - wing:ops\nstale_after: soon\n---\n", "packs/bad.md:4: stale_after: \"soon\" is not a length of time"},
		{"---\nuse: [wing:ops\n---\n", "packs/bad.md:"},
		{"---\nuses:\n  - wing:ops\n---\n", "packs/bad.md:2: unknown key \"uses\""},
		{"---\navoid:\n  - status:stale\n---\n", "packs/bad.md:2: use: lists nothing"},
		{"---\nuse:\n  - status:approved\n---\n", "packs/bad.md:3: entry \"status:approved\": status: is for avoid"},
		{"no frontmatter\n", "packs/bad.md:1: a pack starts with frontmatter"},
		{"---\nuse:\n  - wing:ops\n", "packs/bad.md:1: the frontmatter opened here is never closed"},
		{"---\nuse:\n  - file:../../etc/passwd\n---\n", "packs/bad.md:3: entry \"file:../../etc/passwd\": a file is named relative to the hive"},
	}
	for _, tt := range tests {
		testutil.WriteFile(t, filepath.Join(c.hive, "packs", "bad.md"), tt.content)
		out, errs, code := c.run("pack", "bad")
		if code != exitError || out != "" || !strings.Contains(errs, tt.want) {
			t.Errorf("pack of %q: exit %d, stdout %q, stderr %q; want exit 1 and %q", tt.content, code, out, errs, tt.want)
		}
	}
	if out := c.ok("pack", "--list"); !strings.Contains(out, "bad  MALFORMED: packs/bad.md:") {
		t.Errorf("pack --list does not show the malformed pack:\n%s", out)
	}
}

// TestPackUnknownWing: a pack whose wing: entry names no wing fails as
// search --wing does (exit 2, the known wings), not "no notes match".
func TestPackUnknownWing(t *testing.T) {
	c := newPackCLI(t)
	testutil.WriteFile(t, filepath.Join(c.hive, "packs", "typo.md"), "---\nuse:\n  - wing:nosuch\n---\nx\n")
	_, searchErr, searchCode := c.run("search", "rollback", "--wing", "nosuch")
	out, errs, code := c.run("pack", "typo")
	if code != exitUsage || code != searchCode || out != "" || !strings.Contains(errs, "wing:nosuch") || !strings.Contains(errs, "known wings: legacy, ops") {
		t.Errorf("pack typo: exit %d, stdout %q, stderr %q; search --wing nosuch: exit %d, %s", code, out, errs, searchCode, searchErr)
	}
}

// TestPackNew: pack new writes a pack pack reads, and never replaces one.
func TestPackNew(t *testing.T) {
	c := newPackCLI(t)
	out := c.ok("pack", "new", "office", "--use", "wing:ops", "--use", "query:coffee machine", "--avoid", "tag:deploy", "--avoid", "status:superseded", "--stale-after", "30d", "--body", "Keep the office running.")
	if out != "wrote packs/office.md: 2 use, 2 avoid; say the task it is for in its body\n" {
		t.Errorf("pack new: %q", out)
	}
	want := "---\nuse:\n  - \"wing:ops\"\n  - \"query:coffee machine\"\navoid:\n  - \"tag:deploy\"\n  - \"status:superseded\"\nstale_after: 30d\n---\n\nKeep the office running.\n"
	if got := testutil.ReadFile(t, filepath.Join(c.hive, "packs", "office.md")); got != want {
		t.Errorf("office.md =\n%s\nwant\n%s", got, want)
	}
	rendered := c.ok("pack", "office")
	if !strings.Contains(rendered, "The coffee machine on floor three is broken") || strings.Contains(rendered, "#deploy") {
		t.Errorf("pack office:\n%s", rendered)
	}
	for _, args := range [][]string{
		{"pack", "new", "office", "--use", "wing:ops"},
		{"pack", "new", "Bad/Name", "--use", "wing:ops"},
		{"pack", "new", "x", "--use", "color:red"},
		{"pack", "new", "x", "--avoid", "tag:x"},
		{"pack", "new", "x", "--use", "wing:ops", "--stale-after", "soon"},
	} {
		if _, errs, code := c.run(args...); code != exitUsage {
			t.Errorf("%v: exit %d (%s), want %d", args, code, errs, exitUsage)
		}
	}
	if got := testutil.ReadFile(t, filepath.Join(c.hive, "packs", "office.md")); got != want {
		t.Errorf("office.md changed by a refused pack new:\n%s", got)
	}
}
