package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/githive/gittest"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/service/api"
)

// gitHives makes a bare repository holding a hive with dwight's memory
// file and clones it n times, with git's environment set for this process
// and a `memminer` on PATH that is this test binary (the merge driver Git
// runs). It returns the clones, each with its own palace.
func gitHives(t *testing.T, n int) []*cli {
	t.Helper()
	gittest.Require(t)
	tmp := t.TempDir()
	gittest.Setenv(t, tmp)
	bin := filepath.Join(tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	shim := fmt.Sprintf("#!/bin/sh\nMEMMINER_TEST_MAIN=1 exec %q \"$@\"\n", os.Args[0])
	if err := os.WriteFile(filepath.Join(bin, "memminer"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	bare := filepath.Join(tmp, "hive.git")
	gittest.Git(t, tmp, nil, "init", "-q", "--bare", bare)
	seed := filepath.Join(tmp, "seed")
	gittest.Git(t, tmp, nil, "clone", "-q", bare, seed)
	writeMemory(t, seed, "# Dwight\n\n## Facts\n\n- Beets are the best crop.\n- Bears eat beets.\n")
	gittest.Git(t, seed, nil, "add", "-A")
	gittest.Git(t, seed, nil, "commit", "-q", "-m", "seed")
	gittest.Git(t, seed, nil, "push", "-q", "origin", "main")
	var clones []*cli
	for i := range n {
		dir := filepath.Join(tmp, fmt.Sprintf("clone%d", i))
		gittest.Git(t, tmp, nil, "clone", "-q", bare, dir)
		c := newCLIAt(t, filepath.Join(tmp, fmt.Sprintf("home%d", i)), dir)
		c.env["PATH"] = os.Getenv("PATH")
		clones = append(clones, c)
	}
	return clones
}

func memoryPath(dir string) string { return filepath.Join(dir, "agents", "dwight", "memory.md") }

func writeMemory(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(memoryPath(dir)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(memoryPath(dir), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readMemory(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(memoryPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestGitMergeDriver: two clones append different notes to dwight's
// memory.md (by hand: remember writes each machine's own file, which
// never needs a merge) and one pulls: the driver merges them, every note once. Then both
// change the same note: Git reports the conflict, the file holds both
// versions between markers, conflicts --check exits 3 and remember
// refuses.
func TestGitMergeDriver(t *testing.T) {
	cs := gitHives(t, 2)
	a, b := cs[0], cs[1]
	golden(t, "git-setup.txt", a.ok("git", "setup", "--hive", a.hive))
	if out := a.ok("git", "setup", "--hive", a.hive); !strings.Contains(out, "already set up") {
		t.Fatalf("second setup: %s", out)
	}
	gittest.Git(t, a.hive, nil, "add", ".gitattributes")
	gittest.Git(t, a.hive, nil, "commit", "-q", "-m", "memminer git setup")
	gittest.Git(t, a.hive, nil, "push", "-q")
	gittest.Git(t, b.hive, nil, "pull", "-q")
	b.ok("git", "setup", "--hive", b.hive)

	writeMemory(t, a.hive, readMemory(t, a.hive)+"- Schrute Farms has a bed and breakfast.\n")
	writeMemory(t, b.hive, readMemory(t, b.hive)+"- Battlestar Galactica is the best show.\n")
	for _, c := range cs {
		gittest.Git(t, c.hive, nil, "commit", "-q", "-am", "remember")
	}
	gittest.Git(t, b.hive, nil, "push", "-q")
	gittest.Git(t, a.hive, nil, "pull", "-q")
	merged := readMemory(t, a.hive)
	for _, note := range []string{"Beets are the best crop.", "Bears eat beets.", "Schrute Farms has a bed", "Battlestar Galactica is"} {
		if strings.Count(merged, note) != 1 {
			t.Errorf("%q is in the merged file %d times, want once:\n%s", note, strings.Count(merged, note), merged)
		}
	}
	if hive.HasConflictMarkers([]byte(merged)) {
		t.Fatalf("a clean merge left markers:\n%s", merged)
	}
	if _, _, code := a.run("conflicts", "--hive", a.hive, "--wing", "dwight", "--check"); code != 0 {
		t.Fatalf("conflicts --check after a clean merge: exit %d", code)
	}

	gittest.Git(t, a.hive, nil, "push", "-q")
	gittest.Git(t, b.hive, nil, "pull", "-q")
	writeMemory(t, a.hive, strings.Replace(readMemory(t, a.hive), "Bears eat beets.", "Bears eat beets and honey.", 1))
	writeMemory(t, b.hive, strings.Replace(readMemory(t, b.hive), "Bears eat beets.", "Bears eat beets every day.", 1))
	for _, c := range cs {
		gittest.Git(t, c.hive, nil, "commit", "-q", "-am", "bears")
	}
	gittest.Git(t, b.hive, nil, "push", "-q")
	out, err := gittest.Try(a.hive, nil, "pull", "-q")
	if err == nil || !strings.Contains(out, "CONFLICT") {
		t.Fatalf("git pull of a note changed on both sides: %v\n%s", err, out)
	}
	conflicted := readMemory(t, a.hive)
	for _, want := range []string{"<<<<<<< ours\n- Bears eat beets and honey.\n=======\n- Bears eat beets every day. (conflict: from the copy of the other side of the Git merge, ", ">>>>>>> theirs\n", "Schrute Farms", "Battlestar"} {
		if !strings.Contains(conflicted, want) {
			t.Errorf("the conflicted file lacks %q:\n%s", want, conflicted)
		}
	}
	checkMarkersAreConflicts(t, a)
}

// checkMarkersAreConflicts checks that dwight's file with conflict
// markers is an open conflict everywhere memminer looks.
func checkMarkersAreConflicts(t *testing.T, c *cli) {
	t.Helper()
	stdout, _, code := c.run("conflicts", "--hive", c.hive, "--wing", "dwight", "--check", "--json")
	if code != exitConflict {
		t.Fatalf("conflicts --check with markers: exit %d, want %d\n%s", code, exitConflict, stdout)
	}
	var l struct {
		Conflicts []struct {
			Path    string `json:"path"`
			Markers bool   `json:"markers"`
		} `json:"conflicts"`
	}
	if err := json.Unmarshal([]byte(stdout), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Conflicts) != 1 || !l.Conflicts[0].Markers || !strings.HasSuffix(l.Conflicts[0].Path, "/agents/dwight/memory.md") {
		t.Fatalf("conflicts: %s", stdout)
	}
	before := readMemory(t, c.hive)
	if _, stderr, code := c.run("remember", "--hive", c.hive, "--wing", "dwight", "Mose lives on the farm."); code != exitConflict || !strings.Contains(stderr, "open conflict") || !strings.Contains(stderr, "resolve the Git conflict in it") {
		t.Fatalf("remember past conflict markers: exit %d\n%s", code, stderr)
	}
	if readMemory(t, c.hive) != before {
		t.Fatal("remember wrote past conflict markers")
	}
	// Mining reads both sides once each and never the markers.
	c.ok("mine", c.hive)
	stdout = c.ok("search", "bears beets", "--json")
	if strings.Contains(stdout, "<<<<<<<") || strings.Contains(stdout, ">>>>>>>") {
		t.Fatalf("markers were mined:\n%s", stdout)
	}
	if !strings.Contains(stdout, "in a Git conflict") {
		t.Fatalf("the notes between the markers are not marked as in conflict:\n%s", stdout)
	}
}

// TestGitRawMarkers: a clone without the driver merges line by line; the
// markers Git leaves are conflicts all the same.
func TestGitRawMarkers(t *testing.T) {
	cs := gitHives(t, 2)
	a, b := cs[0], cs[1]
	writeMemory(t, a.hive, readMemory(t, a.hive)+"- Angela has cats.\n")
	writeMemory(t, b.hive, readMemory(t, b.hive)+"- Kevin makes chili.\n")
	for _, c := range cs {
		gittest.Git(t, c.hive, nil, "commit", "-q", "-am", "append")
	}
	gittest.Git(t, b.hive, nil, "push", "-q")
	if out, err := gittest.Try(a.hive, nil, "pull", "-q"); err == nil {
		t.Fatalf("git's line merge of two appends did not conflict:\n%s", out)
	}
	if !strings.Contains(readMemory(t, a.hive), "<<<<<<< HEAD") {
		t.Fatalf("no raw markers:\n%s", readMemory(t, a.hive))
	}
	checkMarkersAreConflicts(t, a)
	stdout, _, _ := a.run("conflicts", "--hive", a.hive)
	golden(t, "conflicts-markers.txt", stdout)
	stdout, _, _ = a.run("conflicts", "merge", "--hive", a.hive)
	golden(t, "conflicts-merge-markers.txt", stdout)
}

// TestGitCommitAndHistory: run --git-commit commits what remember writes,
// with the wing as author, and nothing else; show --history lists it.
func TestGitCommitAndHistory(t *testing.T) {
	c := gitHives(t, 1)[0]
	stray := filepath.Join(c.hive, "agents", "dwight", "draft.md")
	if err := os.WriteFile(stray, []byte("- not memminer's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startRun(t, c, c.hive, "--git-commit")
	c.ok("remember", "--hive", c.hive, "--wing", "dwight", "Michael's birthday is in March.")
	log := gittest.Git(t, c.hive, nil, "log", "-1", "--format=%an <%ae>|%s", "--name-only")
	want := "dwight <dwight@memminer.invalid>|remember: Michael's birthday is in March.\n\nagents/dwight/memory.laptop.md\n"
	if log != want {
		t.Fatalf("last commit:\n%s\nwant:\n%s", log, want)
	}
	if st := gittest.Git(t, c.hive, nil, "status", "--porcelain"); st != "?? agents/dwight/draft.md\n" {
		t.Fatalf("git status after the commit: %q", st)
	}
	// A conflict merge the daemon writes is committed too, under the wing.
	copyPath := filepath.Join(c.hive, "agents", "dwight", "memory.sync-conflict-20261204-101010-ABCDEFG.md")
	if err := os.WriteFile(copyPath, []byte(readMemory(t, c.hive)+"- Mose grows beets too.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.ok("conflicts", "merge", "--apply")
	if log := gittest.Git(t, c.hive, nil, "log", "-1", "--format=%an|%s"); log != "dwight|merge: the conflict copy from ABCDEFG\n" {
		t.Fatalf("commit of the merge: %q", log)
	}
	if !strings.Contains(readMemory(t, c.hive), "- Mose grows beets too.") {
		t.Fatalf("the merge did not bring the copy's note:\n%s", readMemory(t, c.hive))
	}

	testutil.WaitFor(t, "the daemon to mine the merge", func() bool {
		out, _, code := c.run("show", "agents/dwight/memory.md:7", "--hive", c.hive)
		return code == 0 && strings.Contains(out, "Mose grows beets too.")
	})
	stdout := c.ok("search", "birthday", "--json")
	if !strings.Contains(stdout, "birthday is in March") {
		t.Fatalf("search: %s", stdout)
	}
	stdout = c.ok("show", "1", "--hive", c.hive, "--history", "--json")
	var shown struct {
		Text    string `json:"text"`
		History []struct {
			Author  string `json:"author"`
			Subject string `json:"subject"`
		} `json:"history"`
		Before, After *api.NeighbourNote
	}
	if err := json.Unmarshal([]byte(stdout), &shown); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(shown.Text, "Michael's birthday is in March.") || len(shown.History) != 1 ||
		shown.History[0].Author != "dwight" || shown.History[0].Subject != "remember: Michael's birthday is in March." {
		t.Fatalf("show 1 --history: %s", stdout)
	}
	// The note is alone in the machine's file; memory.md's keep their
	// neighbours.
	stdout = c.ok("show", "agents/dwight/memory.md:6", "--hive", c.hive, "--json")
	shown.Before, shown.After = nil, nil
	if err := json.Unmarshal([]byte(stdout), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.Before == nil || shown.Before.Text != "Beets are the best crop." || shown.After == nil || shown.After.Text != "Mose grows beets too." {
		t.Fatalf("neighbours: %s", stdout)
	}
	stdout = c.ok("show", "agents/dwight/memory.md:6", "--hive", c.hive, "--history")
	if !strings.Contains(stdout, "Bears eat beets.") || !strings.Contains(stdout, "history (1 commit):") || !strings.Contains(stdout, "seed") {
		t.Fatalf("show FILE:LINE --history:\n%s", stdout)
	}
}

// TestGitOutsideARepo: git setup and run --git-commit refuse a hive that
// is not in a Git work tree, saying to git init it.
func TestGitOutsideARepo(t *testing.T) {
	gittest.Require(t)
	c := newCLI(t)
	gittest.Setenv(t, filepath.Dir(c.hive))
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(c.hive))
	for _, args := range [][]string{{"git", "setup", "--hive", c.hive}, {"run", "--hive", c.hive, "--git-commit"}} {
		_, stderr, code := c.run(args...)
		if code == 0 || !strings.Contains(stderr, "is not in a Git repository; run git init there first") {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
	}
	if _, stderr, code := c.run("git", "merge-file", "a", "b"); code != exitUsage || !strings.Contains(stderr, "BASE OURS THEIRS PATH") {
		t.Errorf("merge-file with two arguments: exit %d\n%s", code, stderr)
	}
}

// TestGitMergeFileIgnoresConfig: the driver merges even when the config
// file does not load.
func TestGitMergeFileIgnoresConfig(t *testing.T) {
	c := newCLI(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "config.yml")
	files := map[string]string{"base": "- a\n", "ours": "- a\n- b\n", "theirs": "- a\n- c\n", "config.yml": "wnig: [\n"}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.env["XDG_CONFIG_HOME"] = dir
	if _, stderr, code := c.run("--config", bad, "status"); code == 0 {
		t.Fatalf("the bad config loads: %s", stderr)
	}
	c.ok("--config", bad, "git", "merge-file", filepath.Join(dir, "base"), filepath.Join(dir, "ours"), filepath.Join(dir, "theirs"), "agents/dwight/memory.md")
	if got, _ := os.ReadFile(filepath.Join(dir, "ours")); string(got) != "- a\n- b\n- c\n" {
		t.Fatalf("merged %q", got)
	}
}
