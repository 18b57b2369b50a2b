package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/markdown"
	"github.com/memminer/memminer/memory/memfile"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/service/api"
)

var (
	textNoteID = regexp.MustCompile(`note [0-9a-f]{32}`)
	addedDate  = regexp.MustCompile(`\((added|superseded) \d{4}-\d\d-\d\d\)`)
	hashRe     = regexp.MustCompile(`[0-9a-f]{64}`)
	bareID     = regexp.MustCompile(`[0-9a-f]{32}`)
)

func scrubRemember(s string) string {
	s = textNoteID.ReplaceAllString(s, "note $$ID")
	s = addedDate.ReplaceAllString(s, "($1 $$DATE)")
	s = hashRe.ReplaceAllString(s, "$$HASH")
	return bareID.ReplaceAllString(s, "$$ID")
}

// rememberSteps runs the remember steps every test of the command shares
// and returns their transcript: exit code, stdout and stderr of each.
func rememberSteps(t *testing.T, c *cli) string {
	t.Helper()
	var b strings.Builder
	step := func(args ...string) string {
		var out, errb bytes.Buffer
		code := run(t.Context(), args, &out, &errb, func(k string) string { return c.env[k] })
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = strconv.Quote(a)
		}
		fmt.Fprintf(&b, "$ memminer %s\nexit %d\n%s%s\n", strings.Join(quoted, " "), code, c.scrub(out.String()), c.scrub(errb.String()))
		return out.String()
	}
	step("remember", "--wing", "dwight", "The beet harvest starts in the second week of October")
	step("search", "when does the beet harvest start", "--wing", "dwight", "-n", "1")
	step("remember", "--wing", "dwight", "the beet harvest starts in the second week of October")
	step("remember", "--wing", "kevin", "--heading", "Snacks", "--tag", "food", "--tag", "office", "M&Ms are in the second vending machine")
	out := step("remember", "--wing", "kevin", "--json", "Chili is brought on the first Friday")
	var res struct {
		ID, Hash string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("remember --json: %v: %s", err, out)
	}
	step("remember", "--wing", "kevin", "--supersedes", res.ID, "Chili is brought on the last Friday of the month")
	step("search", "chili friday", "--wing", "kevin")
	// A reference that names no note is refused naming the flag.
	step("remember", "--wing", "kevin", "--supersedes", "nosuch", "Chili is brought on a Monday")
	step("remember", "--wing", "kevin", "--supersedes", res.ID, "Chili is brought on a Monday")
	step("remember", "--wing", "kevin", "--supersedes", "memory.md:999", "Chili is brought on a Monday")
	step("remember", "--wing", "kevin", "--expect-hash", res.Hash, "Oscar handles the accounts payable")
	// An open conflict copy blocks the write; --force writes past it.
	testutil.WriteFile(t, filepath.Join(c.hive, "agents", "kevin", "memory.sync-conflict-20261201-101010-ABCDEFG.md"), "- lost\n")
	step("remember", "--wing", "kevin", "Toby sits by the annex door")
	step("remember", "--wing", "kevin", "--force", "Toby sits by the annex door")
	if err := os.Remove(filepath.Join(c.hive, "agents", "kevin", "memory.sync-conflict-20261201-101010-ABCDEFG.md")); err != nil {
		t.Fatal(err)
	}
	// A new fact that reads like an old one is written, with a hint.
	step("remember", "--wing", "kevin", "Toby sits by the kitchen door")
	step("remember", "--wing", "kevin", "--json", "Toby does not sit by the kitchen door")
	step("remember", "--wing", "kevin")
	step("remember", "--wing", "kevin", "   ")
	step("remember", "--wing", "kevin", "a\x00b")
	step("remember", "--wing", "../etc", "x")
	step("remember", "no wing given")
	return scrubRemember(b.String())
}

func TestRememberGolden(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	c.ok("mine", c.hive)
	c.serve(t)
	golden(t, "remember.txt", rememberSteps(t, c))
	// Notes without --heading go under ## Notes, not into the Snacks
	// section that ended the file.
	want := remember.OwnedFileStart + "# kevin's memory\n\n## Snacks\n- M&Ms are in the second vending machine #food #office (added $DATE)\n\n## Notes\n- Chili is brought on the first Friday (added $DATE) (superseded $DATE)\n- Chili is brought on the last Friday of the month (added $DATE)\n- Toby sits by the annex door (added $DATE)\n- Toby sits by the kitchen door (added $DATE)\n- Toby does not sit by the kitchen door (added $DATE)\n"
	if got := scrubRemember(testutil.ReadFile(t, filepath.Join(c.hive, "agents", "kevin", "memory.laptop.md"))); got != want {
		t.Errorf("kevin's memory.laptop.md =\n%s\nwant\n%s", got, want)
	}
}

// TestRememberSameWithDaemon runs the steps through a daemon: the output
// is the same as without one.
func TestRememberSameWithDaemon(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	r := startRun(t, c, c.hive)
	r.idle(t, c)
	got := rememberSteps(t, c)
	r.stop(t)
	testutil.Golden(t, filepath.Join("testdata", "golden", "remember.txt"), got, false)
}

func TestRememberStdinAndFile(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	c.env["MEMMINER_WING"] = "pam"
	path := filepath.Join(c.hive, "agents", "pam", "memory.laptop.md")
	// CRLF and no final newline: kept byte for byte.
	before := strings.ReplaceAll("# Pam on the laptop\n\n- Plants need light\n", "\n", "\r\n")
	before = strings.TrimRight(before, "\r\n")
	testutil.WriteFile(t, path, before)

	var out, errb strings.Builder
	code := runStdin(c, strings.NewReader("Reception desk plants\nare watered on Mondays\n"), &out, &errb, "remember", "--stdin", "--json")
	if code != 0 {
		t.Fatalf("remember --stdin: exit %d: %s", code, errb.String())
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"wing", "file", "line", "id", "hash", "added", "duplicate_of", "superseded"} {
		if _, ok := res[k]; !ok {
			t.Errorf("remember --json lacks %q: %s", k, out.String())
		}
	}
	after := testutil.ReadFile(t, path)
	if !strings.HasPrefix(after, before) {
		t.Fatalf("bytes of the file changed")
	}
	added := after[len(before):]
	if !regexp.MustCompile(`^\r\n\r\n## Notes\r\n- Reception desk plants\r\n  are watered on Mondays \(added \d{4}-\d\d-\d\d\)$`).MatchString(added) {
		t.Errorf("appended %q", added)
	}
	if res["hash"] != memfile.Hash([]byte(after)) {
		t.Errorf("hash %v is not the file's", res["hash"])
	}
	if code := runStdin(c, strings.NewReader("x"), &out, &errb, "remember", "--stdin", "also args"); code != exitUsage {
		t.Errorf("--stdin with TEXT: exit %d", code)
	}
}

// TestRememberConflictBlocks checks that an open conflict copy stops the
// write (exit 3, nothing written) and --force writes past it, saying so.
func TestRememberConflictBlocks(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	path := filepath.Join(c.hive, "agents", "pam", "memory.laptop.md")
	testutil.WriteFile(t, filepath.Join(c.hive, "agents", "pam", "memory.sync-conflict-20261201-101010-ABCDEFG.md"), "- lost\n")
	before := snapshotDir(t, filepath.Dir(path))
	_, errs, code := c.run("remember", "--wing", "pam", "Angela's cats are named after saints")
	if code != exitConflict || !strings.Contains(errs, "agents/pam/memory.sync-conflict-20261201-101010-ABCDEFG.md") || !strings.Contains(errs, "memminer conflicts --wing pam") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if snapshotDir(t, filepath.Dir(path)) != before {
		t.Fatal("written despite the conflict")
	}
	out, errs, code := c.run("remember", "--wing", "pam", "--force", "Angela's cats are named after saints")
	if code != 0 || !strings.Contains(errs, "wrote past the open conflict copy") || !strings.HasPrefix(out, "remembered in agents/pam/memory.laptop.md:") {
		t.Fatalf("--force: exit %d, %q, %q", code, out, errs)
	}
}

// snapshotDir is every file of dir with its content.
func snapshotDir(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s %q\n", e.Name(), data)
	}
	return b.String()
}

func runStdin(c *cli, stdin *strings.Reader, out, errb *strings.Builder, args ...string) int {
	out.Reset()
	errb.Reset()
	old := os.Stdin
	defer func() { os.Stdin = old }()
	r, w, err := os.Pipe()
	if err != nil {
		c.t.Fatal(err)
	}
	go func() {
		_, _ = stdin.WriteTo(w)
		w.Close()
	}()
	os.Stdin = r
	defer r.Close()
	return run(c.t.Context(), args, out, errb, func(k string) string { return c.env[k] })
}

// TestRememberConcurrent runs two processes that remember 200 notes each
// (200 memminer commands one after another) into one file at once, without and with the daemon: every
// note is in the file once, in the palace, and no other byte changed.
func TestRememberConcurrent(t *testing.T) {
	for _, withDaemon := range []bool{false, true} {
		t.Run(fmt.Sprintf("daemon=%v", withDaemon), func(t *testing.T) {
			c := newCLI(t)
			c.env["MEMMINER_HIVE"] = c.hive
			// Without the daemon the two writers take turns on the palace
			// lock, 400 times: on a loaded machine one can wait longer than
			// the default lock_timeout for its turn. That is a slow test,
			// not a failure, so they may wait until the test's deadline.
			c.env["MEMMINER_LOCK_TIMEOUT"] = time.Until(testutil.WaitDeadline(t)).String()
			// The notes go to the machine's file; memory.md keeps its own.
			main := testutil.ReadFile(t, filepath.Join(c.hive, "agents", "jim", "memory.md"))
			path := filepath.Join(c.hive, "agents", "jim", "memory.laptop.md")
			// A note without --heading goes under ## Notes.
			before := remember.OwnedFileStart + "# jim's memory\n\n## Notes\n"
			if withDaemon {
				r := startRun(t, c, c.hive)
				r.idle(t, c)
			}
			const writers, notes = 2, 200
			var wg sync.WaitGroup
			errs := make(chan error, writers)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// One process remembers all its notes, one memminer
					// command after another (see repeatMain).
					cmd := exec.Command(os.Args[0], "remember", "--wing", "jim", "--allow-duplicate", fmt.Sprintf("writer %d wrote note %%d", w))
					cmd.Env = []string{"MEMMINER_TEST_REPEAT=" + strconv.Itoa(notes)}
					for k, v := range c.env {
						cmd.Env = append(cmd.Env, k+"="+v)
					}
					if out, err := cmd.CombinedOutput(); err != nil {
						errs <- fmt.Errorf("writer %d: %v: %s", w, err, out)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			after := testutil.ReadFile(t, path)
			if !strings.HasPrefix(after, before) {
				t.Fatal("bytes of the file before the notes changed")
			}
			for w := range writers {
				for n := range notes {
					line := fmt.Sprintf("- writer %d wrote note %d (added ", w, n)
					if k := strings.Count(after, line); k != 1 {
						t.Errorf("%q is in the file %d times", line, k)
					}
				}
			}
			if got := strings.Count(after[len(before):], "\n"); got != writers*notes {
				t.Errorf("%d lines appended, want %d", got, writers*notes)
			}
			// Every note is in the palace.
			doc, err := markdown.Parse([]byte(main), markdown.MemoryOptions())
			if err != nil {
				t.Fatal(err)
			}
			var st api.Status
			raw, _ := c.runRaw("status", "--json")
			if err := json.Unmarshal([]byte(raw), &st); err != nil {
				t.Fatal(err)
			}
			jim := -1
			for _, w := range st.Wings {
				if w.ID == "jim" {
					jim = w.Notes
				}
			}
			if jim != len(doc.Notes)+writers*notes {
				t.Errorf("wing jim has %d notes, want %d", jim, len(doc.Notes)+writers*notes)
			}
			out := c.ok("search", "writer 1 wrote note 199", "--wing", "jim", "-n", "1")
			if !strings.Contains(out, "writer 1 wrote note 199") {
				t.Errorf("the last note is not searchable: %s", out)
			}
		})
	}
}

// repeatMain runs the memminer command line of this process n times, in
// process, replacing %d in its last argument with 0…n-1, and exits with the
// first failure's code: one process that writes many notes, without paying
// for a process start per note.
func repeatMain(n string) {
	count, err := strconv.Atoi(n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "MEMMINER_TEST_REPEAT:", err)
		os.Exit(2)
	}
	args := os.Args[1:]
	for i := range count {
		a := slices.Clone(args)
		a[len(a)-1] = strings.ReplaceAll(a[len(a)-1], "%d", strconv.Itoa(i))
		if code := run(context.Background(), a, io.Discard, os.Stderr, os.Getenv); code != 0 {
			fmt.Fprintf(os.Stderr, "memminer %s: exit %d\n", strings.Join(a, " "), code)
			os.Exit(code)
		}
	}
	os.Exit(0)
}

// TestRememberTwiceInSmallWing writes one fact twice into a wing of one
// other note: the second is the first's duplicate, with and without the
// daemon.
func TestRememberTwiceInSmallWing(t *testing.T) {
	for _, withDaemon := range []bool{false, true} {
		t.Run(fmt.Sprintf("daemon=%v", withDaemon), func(t *testing.T) {
			c := newCLI(t)
			c.env["MEMMINER_HIVE"] = c.hive
			testutil.WriteFile(t, filepath.Join(c.hive, "agents", "jim", "memory.md"), "- seed\n")
			path := filepath.Join(c.hive, "agents", "jim", "memory.laptop.md")
			if withDaemon {
				r := startRun(t, c, c.hive)
				r.idle(t, c)
				defer r.stop(t)
			}
			c.ok("remember", "--wing", "jim", "The quokka count is 12")
			out := c.ok("remember", "--wing", "jim", "The quokka count is 12")
			if !strings.HasPrefix(out, "already remembered: agents/jim/memory.laptop.md:7") {
				t.Errorf("second remember: %q", out)
			}
			if got := testutil.ReadFile(t, path); strings.Count(got, "quokka") != 1 {
				t.Errorf("memory.md = %q", got)
			}
		})
	}
}

// TestRememberHiveFromPalace: without --hive, remember finds the wing's
// directory from the palace that mined it; a wing it has not mined still
// needs the hive.
func TestRememberHiveFromPalace(t *testing.T) {
	c := newCLI(t)
	delete(c.env, "MEMMINER_HIVE")
	c.ok("mine", c.hive)
	out, stderr, code := c.run("remember", "--wing", "dwight", "The toner order goes out on Mondays")
	if code != 0 || !strings.Contains(out, "remembered in agents/dwight/") {
		t.Fatalf("remember without --hive of a mined wing: exit %d\n%s%s", code, out, stderr)
	}
	if out := c.ok("search", "toner order", "--wing", "dwight"); !strings.Contains(out, "toner order goes out on Mondays") {
		t.Fatalf("the note is not found: %s", out)
	}
	if _, stderr, code := c.run("remember", "--wing", "toby", "Fact"); code != exitUsage || !strings.Contains(stderr, "no hive:") {
		t.Fatalf("remember without --hive of a wing never mined: exit %d, %s", code, stderr)
	}
}
