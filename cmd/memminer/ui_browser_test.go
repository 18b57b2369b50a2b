package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// browserTools finds node, Debian's Chromium and playwright-core (as
// .ci/setup-ui-browser.sh installs them): missing, the test fails under
// CI and is skipped otherwise.
func browserTools(t *testing.T) (node, chromium, modules string) {
	t.Helper()
	dir := os.Getenv("MEMMINER_UI_BROWSER_DIR")
	if dir == "" {
		if cache, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(cache, "memminer", "ui-browser")
		}
	}
	modules = filepath.Join(dir, "node_modules")
	node, nerr := exec.LookPath("node")
	chromium, cerr := exec.LookPath("chromium")
	_, perr := os.Stat(filepath.Join(modules, "playwright-core", "package.json"))
	if nerr != nil || cerr != nil || perr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node, chromium or playwright-core missing (%v; %v; %v); run .ci/setup-ui-browser.sh", nerr, cerr, perr)
		}
		t.Skip("node, chromium or playwright-core missing; run .ci/setup-ui-browser.sh")
	}
	return node, chromium, modules
}

// startUI runs memminer ui for c until the test ends and returns the URL
// it printed first.
func startUI(t *testing.T, c *cli) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int)
	stderr := &syncBuffer{}
	go func() {
		code := run(ctx, []string{"ui", "--listen", "127.0.0.1:0"}, pw, stderr, func(k string) string { return c.env[k] })
		pw.Close()
		done <- code
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("memminer ui: exit %d: %s", code, stderr)
		}
	})
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatalf("memminer ui printed no URL: %v %s", lines.Err(), stderr)
	}
	go io.Copy(io.Discard, pr)
	return lines.Text()
}

// TestUIInBrowser opens the URL memminer ui prints in headless Chromium,
// approves an inbox item, applies a conflict merge with one of its two
// proposed removals ticked and the other not, and marks a pack reviewed,
// as a person would, and checks the files: the page's script, its token
// header and the approval work end to end, and a note holding markup runs
// nothing. The pages' screenshots are the test's artifacts (go test
// -artifacts keeps them).
func TestUIInBrowser(t *testing.T) {
	node, chromium, modules := browserTools(t)
	c := newPackCLI(t)
	c.ok("remember", "--wing", "ops", "--confidence", "hypothesis", "The load balancer drops idle connections after ten minutes")
	c.ok("remember", "--wing", "ops", "--risk", "high", hostile)
	memory, ours := writeRemovalsHistory(t, c)
	removed := strings.Replace(ours, "- Stand-up is at 9:30.\n", "", 1)
	copyPath := filepath.Join(filepath.Dir(memory), cleanCopy)
	if err := os.WriteFile(copyPath, []byte(twoRemovals), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		c.ok("pack", "deploy", "--mark", "bad")
	}
	url := startUI(t, c)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
		t.Fatalf("first line %q: want the URL with its token", url)
	}
	shots := t.ArtifactDir()
	ctx, cancel := testutil.WaitContext(t)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "ui-browser.cjs"), url, shots, chromium)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("browser: %v\n%s", err, stderr.String())
	}
	var got struct {
		Errors, Dialogs            []string
		OverviewURL, OverviewTitle string
		PendingBefore              int
		PendingAfter               int
		Texts, Flash               []string
		Proposed, MergeFlash       []string
		PackFlash, Hits            []string
		NoteText                   string
		ActivityLines              int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if strings.Contains(got.OverviewURL, "token=") || got.OverviewTitle != "Overview · memminer" {
		t.Errorf("overview at %q titled %q: want the page, the token out of the URL", got.OverviewURL, got.OverviewTitle)
	}
	if len(got.Errors) > 0 || len(got.Dialogs) > 0 {
		t.Errorf("the page ran into errors %q or opened dialogs %q", got.Errors, got.Dialogs)
	}
	if got.PendingBefore != 2 || got.PendingAfter != 1 || len(got.Texts) != 2 || got.Texts[1] != hostile {
		t.Errorf("pending %d then %d, texts %q", got.PendingBefore, got.PendingAfter, got.Texts)
	}
	if len(got.Flash) != 1 || !strings.HasPrefix(got.Flash[0], "approved agents/ops/inbox.md:3 into agents/ops/memory.laptop.md:") {
		t.Errorf("the page said %q", got.Flash)
	}
	mem := testutil.ReadFile(t, filepath.Join(c.hive, "agents", "ops", "memory.laptop.md"))
	if !strings.Contains(mem, "- The load balancer drops idle connections after ten minutes (status: approved ") || !strings.Contains(mem, " by tester) — checked in the browser") {
		t.Errorf("memory.laptop.md:\n%s", mem)
	}
	if strings.Join(got.Proposed, "|") != "The printer is on the second floor.|Stand-up is at 9:30." || len(got.MergeFlash) != 1 || !strings.HasPrefix(got.MergeFlash[0], "merged into agents/jim/memory.md, removing 1 note;") {
		t.Errorf("conflicts: proposed %q, then the page said %q", got.Proposed, got.MergeFlash)
	}
	if data := testutil.ReadFile(t, memory); data != removed {
		t.Errorf("jim/memory.md after the merge with one removal ticked and one not:\n%s\nwant\n%s", data, removed)
	}
	if _, err := os.Stat(copyPath); err == nil {
		t.Errorf("the copy %s is still there", copyPath)
	}
	if len(got.PackFlash) != 1 || got.PackFlash[0] != "marked pack deploy reviewed (0 good, 3 bad)" {
		t.Errorf("packs: the page said %q", got.PackFlash)
	}
	if log := testutil.ReadFile(t, filepath.Join(c.hive, "packs", "deploy.marks")); !strings.Contains(log, " reviewed tester: rewrote the use list\n") {
		t.Errorf("deploy.marks:\n%s", log)
	}
	if len(got.Hits) == 0 || !strings.HasPrefix(got.Hits[0], "The load balancer drops idle connections after ten minutes (status: approved ") {
		t.Errorf("memory: the search shows %q, want the approved note first", got.Hits)
	}
	if len(got.Hits) > 0 && got.NoteText != got.Hits[0] {
		t.Errorf("the first hit's page shows %q, want %q", got.NoteText, got.Hits[0])
	}
	if got.ActivityLines == 0 {
		t.Errorf("the activity page draws no line of notes")
	}
	t.Logf("screenshots in %s", shots)
}
