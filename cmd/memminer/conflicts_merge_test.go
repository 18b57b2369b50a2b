package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/internal/testutil"
)

// mergeHive writes agents/jim/memory.md at seed, mines it, changes it to
// ours and mines again, as a daemon would have; then writes copies.
func mergeHive(t *testing.T, c *cli, ours string, copies map[string]string) string {
	t.Helper()
	memory := filepath.Join(c.hive, "agents", "jim", "memory.md")
	if err := os.MkdirAll(filepath.Dir(memory), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{mergeSeed, ours} {
		if err := os.WriteFile(memory, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		c.ok("mine", c.hive)
	}
	for name, content := range copies {
		if err := os.WriteFile(filepath.Join(filepath.Dir(memory), name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return memory
}

const (
	cleanCopy  = "memory.sync-conflict-20261115-101500-ABCDEFG.md"
	reviewCopy = "memory.sync-conflict-20261116-101500-ABCDEFG.md"
)

// TestConflictsMerge: the dry run prints what each merge would do and the
// diff, changes nothing, and says the same with and without the daemon;
// --apply writes the clean merge only.
func TestConflictsMerge(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	ours := mergeSeed + "- The printer code is 4471.\n"
	memory := mergeHive(t, c, ours, map[string]string{
		cleanCopy: mergeSeed + "- Jim's desk moved next to the window.\n",
	})
	c.serve(t)

	out, errs, code := c.run("conflicts", "merge")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	golden(t, "conflicts-merge.txt", out)
	if data, _ := os.ReadFile(memory); string(data) != ours {
		t.Fatalf("the dry run changed the file:\n%s", data)
	}

	// The same through the daemon.
	r := startRun(t, c, c.hive)
	if got, _, _ := c.run("conflicts", "merge"); got != out {
		t.Fatalf("through the daemon:\n%s\nwithout:\n%s", got, out)
	}
	r.stop(t)

	var rep conflicts.MergeReport
	js, code := c.runRaw("conflicts", "merge", "--json", memory)
	if err := json.Unmarshal([]byte(js), &rep); err != nil || code != 0 {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, js)
	}
	if len(rep.Merges) != 1 || rep.Merges[0].Status != conflicts.StatusClean || len(rep.Merges[0].FromCopy) != 1 {
		t.Fatalf("--json: %+v", rep)
	}
	// Every key of docs/conflicts.md, null when it does not apply (a dry
	// run keeps no backup and has no error).
	var raw struct {
		Merges []map[string]any `json:"merges"`
	}
	if err := json.Unmarshal([]byte(js), &raw); err != nil {
		t.Fatal(err)
	}
	want := []string{"append_only", "applied", "backup", "base_confirmed", "base_mined", "conflicts", "copy", "device", "diff", "error",
		"from_copy", "frontmatter", "frontmatter_review", "kept", "original", "proposed_frontmatter", "proposed_removals", "removed", "review", "status", "three_way", "wing"}
	if got := slices.Sorted(maps.Keys(raw.Merges[0])); !slices.Equal(got, want) || raw.Merges[0]["backup"] != nil || raw.Merges[0]["error"] != nil {
		t.Errorf("--json merge keys %v, want %v with backup and error null: %s", got, want, js)
	}

	out, errs, code = c.run("conflicts", "merge", "--apply", "--wing", "jim")
	if code != 0 {
		t.Fatalf("--apply: exit %d: %s\n%s", code, errs, out)
	}
	if !strings.Contains(out, "merged; the copy is removed. Kept the copy and the file's previous content in $PALACE/merged/") {
		t.Fatalf("--apply:\n%s", out)
	}
	if data, _ := os.ReadFile(memory); string(data) != ours+"- Jim's desk moved next to the window.\n" {
		t.Fatalf("merged file:\n%s", data)
	}
	if out := c.ok("conflicts", "merge"); out != "no open conflicts to merge\n" {
		t.Fatalf("after the merge:\n%s", out)
	}
}

// TestConflictsMergeNeedsReview: a note both sides changed makes the
// merge need review: exit 3, and --apply writes it only with
// --accept-conflicts.
func TestConflictsMergeNeedsReview(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	ours := strings.Replace(mergeSeed, "9:30", "9:45", 1)
	memory := mergeHive(t, c, ours, map[string]string{
		reviewCopy: strings.Replace(mergeSeed, "9:30", "10:00", 1),
	})
	for _, args := range [][]string{{"conflicts", "merge"}, {"conflicts", "merge", "--apply"}} {
		out, _, code := c.run(args...)
		if code != exitConflict {
			t.Fatalf("%v: exit %d, want %d\n%s", args, code, exitConflict, out)
		}
		if !strings.Contains(out, "conflict (changed on both sides") {
			t.Fatalf("%v:\n%s", args, out)
		}
		if data, _ := os.ReadFile(memory); string(data) != ours {
			t.Fatalf("%v wrote the file:\n%s", args, data)
		}
	}
	out, _, code := c.run("conflicts", "merge", "--apply", "--accept-conflicts")
	if code != exitConflict || !strings.Contains(out, "merged; the copy is removed") {
		t.Fatalf("--accept-conflicts: exit %d\n%s", code, out)
	}
	want := strings.Replace(ours, "- Stand-up is at 9:45.\n", "- Stand-up is at 9:45.\n- Stand-up is at 10:00. (conflict: from the copy of ABCDEFG, 2026-11-16)\n", 1)
	if data, _ := os.ReadFile(memory); string(data) != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
}

func TestConflictsMergeUsage(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	mergeHive(t, c, mergeSeed, nil)
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"conflicts", "merge", "--accept-conflicts"}, 2, "--accept-conflicts goes with --apply"},
		{[]string{"conflicts", "merge", "--wing", "jim", "x.md"}, 2, "give --wing or paths, not both"},
		{[]string{"conflicts", "merge", "--wing", "nobody"}, 2, "nobody"},
		{[]string{"conflicts", "merge", filepath.Join(c.hive, "agents", "jim", "memory.md")}, 1, "no open conflict copy"},
	}
	for _, tt := range tests {
		_, errs, code := c.run(tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d with %q", tt.args, code, errs, tt.code, tt.msg)
		}
	}
}

// removalsHistory is a hive whose jim/memory.md the palace saw lose a
// note and gain one: a base both sides confirm. It returns the file and
// its content.
func removalsHistory(t *testing.T) (c *cli, memory, ours string) {
	t.Helper()
	c = newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	memory, ours = writeRemovalsHistory(t, c)
	return c, memory, ours
}

// writeRemovalsHistory gives c's hive removalsHistory's jim/memory.md.
func writeRemovalsHistory(t *testing.T, c *cli) (memory, ours string) {
	t.Helper()
	memory = filepath.Join(c.hive, "agents", "jim", "memory.md")
	if err := os.MkdirAll(filepath.Dir(memory), 0o755); err != nil {
		t.Fatal(err)
	}
	ours = mergeSeed + "- The printer code is 4471.\n"
	for _, content := range []string{mergeSeed + "- Lunch is at noon in the kitchen.\n", mergeSeed, ours} {
		if err := os.WriteFile(memory, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		c.ok("mine", c.hive)
	}
	return memory, ours
}

// TestConflictsMergeKeepsRemovals: an empty conflict copy of a file whose
// history confirms the base merges cleanly and removes nothing; the
// notes it would remove are listed as proposed, and only --apply
// --accept-removals --reviewed removes them.
func TestConflictsMergeKeepsRemovals(t *testing.T) {
	c, memory, _ := removalsHistory(t)
	if err := os.WriteFile(filepath.Join(filepath.Dir(memory), cleanCopy), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := c.run("conflicts", "merge")
	if code != 0 || !strings.Contains(out, "the copy removed 2 notes; they are kept (--accept-removals removes them):\n    ? Jim > Office: The printer is on the second floor.\n") ||
		!strings.Contains(out, "takes 0 from the copy, removes 0\n") {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	if _, errs, code := c.run("conflicts", "merge", "--accept-removals"); code != 2 || !strings.Contains(errs, "--accept-removals goes with --apply") {
		t.Fatalf("--accept-removals without --apply: exit %d %s", code, errs)
	}
	review := reviewRe.FindStringSubmatch(out)
	if review == nil {
		t.Fatalf("the dry run prints no review:\n%s", out)
	}
	if _, errs, code := c.run("conflicts", "merge", "--apply", "--accept-removals"); code != 2 || !strings.Contains(errs, "--reviewed REVIEW") {
		t.Fatalf("--accept-removals without --reviewed: exit %d %s", code, errs)
	}
	out, errs, code = c.run("conflicts", "merge", "--apply", "--accept-removals", "--reviewed", review[1])
	if code != 0 || !strings.Contains(out, "removes 2\n") {
		t.Fatalf("--apply --accept-removals: exit %d: %s\n%s", code, errs, out)
	}
	if data, _ := os.ReadFile(memory); string(data) != "# Jim\n\n## Office\n\n- The printer code is 4471.\n" {
		t.Fatalf("file:\n%s", data)
	}
}

// reviewRe finds the review the dry run prints for a copy's removals.
var reviewRe = regexp.MustCompile(`review ([0-9a-f]{16}): to carry these removals out`)

// TestConflictsMergeOneRemovalByItsReview: the dry run prints each
// removal's own review when a copy proposes several; --reviewed with one
// of them removes that note and keeps the other proposed.
func TestConflictsMergeOneRemovalByItsReview(t *testing.T) {
	c, memory, ours := removalsHistory(t)
	if err := os.WriteFile(filepath.Join(filepath.Dir(memory), cleanCopy), []byte(twoRemovals), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := c.run("conflicts", "merge")
	one := regexp.MustCompile(`\? Jim > Office: Stand-up is at 9:30\.\n      review ([0-9a-f]{16}) removes this one alone\n`).FindStringSubmatch(out)
	if code != 0 || one == nil || strings.Count(out, "removes this one alone") != 2 {
		t.Fatalf("exit %d, want a review for each removal: %s\n%s", code, errs, out)
	}
	out, errs, code = c.run("conflicts", "merge", "--apply", "--accept-removals", "--reviewed", one[1])
	if code != 0 || !strings.Contains(out, "removes 1\n") || !strings.Contains(out, "the copy removed 1 note; it is kept") {
		t.Fatalf("--apply --reviewed one removal's: exit %d: %s\n%s", code, errs, out)
	}
	if data, want := testutil.ReadFile(t, memory), strings.Replace(ours, "- Stand-up is at 9:30.\n", "", 1); data != want {
		t.Fatalf("file:\n%s\nwant:\n%s", data, want)
	}
}

// TestConflictsMergeAppliesTheReviewedRemovals: --accept-removals is
// bound to the proposal the dry run showed: a copy that changed since
// (it now removes more notes) is not merged, and nothing is removed.
func TestConflictsMergeAppliesTheReviewedRemovals(t *testing.T) {
	c, memory, ours := removalsHistory(t)
	copyPath := filepath.Join(filepath.Dir(memory), cleanCopy)
	// The copy the person reviews removes one note.
	if err := os.WriteFile(copyPath, []byte(strings.Replace(mergeSeed, "- Stand-up is at 9:30.\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := c.ok("conflicts", "merge")
	review := reviewRe.FindStringSubmatch(out)
	if review == nil || !strings.Contains(out, "the copy removed 1 note;") {
		t.Fatalf("dry run:\n%s", out)
	}
	// It is replaced by one that removes every note.
	if err := os.WriteFile(copyPath, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := c.run("conflicts", "merge", "--apply", "--accept-removals", "--reviewed", review[1])
	if code != 1 || !strings.Contains(out, "not reviewed as they are now") {
		t.Fatalf("apply of a changed copy: exit %d: %s\n%s", code, errs, out)
	}
	if data, _ := os.ReadFile(memory); string(data) != ours {
		t.Fatalf("the file changed:\n%s", data)
	}
	if _, err := os.Stat(copyPath); err != nil {
		t.Fatalf("the copy is gone: %v", err)
	}
}

// TestConflictsMergeApplySearchable: the notes a merge writes are in the
// very next search, with and without the daemon, as a remembered note is.
// Without a daemon the merge once opened the palace read-only and never
// mined, so a search right after still gave the old answer.
func TestConflictsMergeApplySearchable(t *testing.T) {
	for _, withDaemon := range []bool{false, true} {
		t.Run(map[bool]string{false: "no daemon", true: "daemon"}[withDaemon], func(t *testing.T) {
			c := newCLI(t)
			c.env["MEMMINER_HIVE"] = c.hive
			memory := mergeHive(t, c, mergeSeed+"- The printer code is 4471.\n", map[string]string{
				cleanCopy: mergeSeed + "- Jim's desk moved next to the window.\n",
			})
			if withDaemon {
				startRun(t, c, c.hive).idle(t, c)
			}
			mout, errs, code := c.run("conflicts", "merge", "--apply")
			if code != 0 {
				t.Fatalf("merge --apply: exit %d: %s", code, errs)
			}
			if errs != "" {
				t.Fatalf("merge --apply said on stderr: %s\n%s", errs, mout)
			}
			var res struct {
				Results []struct {
					Path string `json:"path"`
					Text string `json:"text"`
				} `json:"results"`
			}
			out, errs, code := c.run("search", "desk window", "--json")
			if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
				t.Fatalf("search: exit %d, %v\n%s%s", code, err, out, errs)
			}
			for _, h := range res.Results {
				if h.Path == c.scrub(memory) && strings.Contains(h.Text, "window") {
					return
				}
			}
			t.Fatalf("the merged note is not found in %s:\n%s", memory, out)
		})
	}
}
