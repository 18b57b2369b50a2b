package conflicts

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

// autoMerging is a daemon with AutoMerge (and opts) over a hive whose
// agent dwight's memory.md holds content; its alerts go to out.
type autoMerging struct {
	memory, out string
	r           *running
	comp        *Component
}

func startAutoMerge(t *testing.T, content string, opts Options) *autoMerging {
	t.Helper()
	hv := filepath.Join(t.TempDir(), "hive")
	a := &autoMerging{memory: filepath.Join(hv, "agents", "dwight", "memory.md"), out: filepath.Join(t.TempDir(), "hook.jsonl")}
	writeFile(t, a.memory, content)
	opts.AutoMerge, opts.Command = true, hookCommand(t, a.out)
	a.comp = newComponent(t, opts)
	a.r = startDaemon(t, filepath.Join(t.TempDir(), "palace"), hv, a.comp, 0, newLogRecorder(t).logger())
	testutil.WaitFor(t, "the first scan", func() bool { return a.r.scans.Load() > 0 })
	return a
}

// copyPath is the path of a conflict copy of the memory file made at stamp.
func (a *autoMerging) copyPath(stamp string) string {
	return filepath.Join(filepath.Dir(a.memory), "memory.sync-conflict-"+stamp+"-ABCDEFG.md")
}

// reviewCopy changes a note here (waiting for the daemon to mine it) and
// makes a copy changing it otherwise: a merge that needs a person.
func (a *autoMerging) reviewCopy(t *testing.T) string {
	t.Helper()
	edited := strings.Replace(testutil.ReadFile(t, a.memory), "two cores", "four cores", 1)
	writeFile(t, a.memory, edited)
	waitMined(t, a.r, "dwight", a.memory, edited)
	review := a.copyPath("20261201-111500")
	writeFile(t, review, strings.Replace(mergeBase, "two cores", "eight cores", 1))
	return review
}

// TestAutoMergeRetriesACopyThatChanged: the copy changes while it is
// merged ("the conflict copy changed while it was merged"); the automatic
// merge used to give up there and leave the copy open for a person. It is
// retried with backoff, status says it is retrying, and once the copy
// holds still it merges, every note of both versions of the copy in the
// file, alerted as merged.
func TestAutoMergeRetriesACopyThatChanged(t *testing.T) {
	// Restored after the daemon (started below) stops.
	t.Cleanup(func() { testHookMerged = func(Conflict) {} })
	ours := mergeBase + "- ours: lint with vet\n"
	a := startAutoMerge(t, ours, Options{AutoMergeRetry: 20 * time.Millisecond, AutoMergeMaxRetry: 20 * time.Millisecond})
	cp := a.copyPath("20261201-101500")
	first := mergeBase + "- theirs: tests need -race\n"
	second := first + "- theirs: and -count=1\n"
	var calls atomic.Int32
	testHookMerged = func(c Conflict) {
		if c.Path == cp && calls.Add(1) == 1 {
			writeFile(t, cp, second) // Syncthing writes the copy again
		}
	}

	writeFile(t, cp, first)
	a.r.list(t, "") // the walk for the request finds the copy and merges it
	testutil.WaitFor(t, "the merged alert", func() bool { return len(hookRuns(t, a.out)) == 1 })
	if run := hookRuns(t, a.out)[0]; run[EnvAction] != ActionMerged {
		t.Fatalf("alert %v", run)
	}
	if got, want := testutil.ReadFile(t, a.memory), ours+"- theirs: tests need -race\n- theirs: and -count=1\n"; got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(cp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("copy: %v", err)
	}
	if calls.Load() < 2 {
		t.Fatalf("merged in %d attempts", calls.Load())
	}
}

// TestAutoMergeRetriesACopyThatReappears: Syncthing brings the copy back
// (with more in it) right after its merge removed it. The merge used to
// count as done and the copy stayed open; it is merged again.
func TestAutoMergeRetriesACopyThatReappears(t *testing.T) {
	// Restored after the daemon (started below) stops.
	t.Cleanup(func() { testHookRemoved = func(Conflict) {} })
	ours := mergeBase + "- ours: lint with vet\n"
	a := startAutoMerge(t, ours, Options{AutoMergeRetry: 20 * time.Millisecond, AutoMergeMaxRetry: 20 * time.Millisecond})
	cp := a.copyPath("20261201-101500")
	first := mergeBase + "- theirs: tests need -race\n"
	again := first + "- theirs: and -count=1\n"
	var calls atomic.Int32
	testHookRemoved = func(c Conflict) {
		if c.Path == cp && calls.Add(1) == 1 {
			writeFile(t, cp, again)
		}
	}

	writeFile(t, cp, first)
	a.r.list(t, "")
	want := ours + "- theirs: tests need -race\n- theirs: and -count=1\n"
	// No request walks the hive from here on: the retry alone merges it.
	testutil.WaitFor(t, "the reappeared copy merged", func() bool {
		_, err := os.Stat(cp)
		return errors.Is(err, os.ErrNotExist) && testutil.ReadFile(t, a.memory) == want
	})
	testutil.WaitFor(t, "the merged alert", func() bool { return len(hookRuns(t, a.out)) == 1 })
	if run := hookRuns(t, a.out)[0]; run[EnvAction] != ActionMerged {
		t.Fatalf("alert %v", run)
	}
}

// TestAutoMergeStatusSaysWhich: while a merge is retried, the listed
// conflict and the component's status say "retrying" and why; a copy
// whose merge needs review says "needs_person", and so does its alert.
func TestAutoMergeStatusSaysWhich(t *testing.T) {
	// Restored after the daemon (started below) stops.
	t.Cleanup(func() { testHookMerged = func(Conflict) {} })
	a := startAutoMerge(t, mergeBase+"- ours\n", Options{AutoMergeRetry: time.Hour})
	cp := a.copyPath("20261201-101500")
	changing := mergeBase + "- theirs\n"
	var n atomic.Int32
	testHookMerged = func(c Conflict) {
		if c.Path == cp {
			writeFile(t, cp, changing+strings.Repeat("- again\n", int(n.Add(1)))) // never holds still
		}
	}

	writeFile(t, cp, changing)
	a.r.list(t, "")
	testutil.WaitFor(t, "the retry", func() bool { return a.comp.Snapshot().AutoMerge.Retrying == 1 })
	l := a.r.list(t, "")
	if len(l.Conflicts) != 1 || l.Conflicts[0].AutoMerge == nil || l.Conflicts[0].AutoMerge.State != AutoMergeRetrying ||
		!strings.Contains(l.Conflicts[0].AutoMerge.Reason, ErrCopyChanged.Error()) || l.Conflicts[0].AutoMerge.NextAttempt == nil {
		t.Fatalf("listed %+v", l.Conflicts)
	}
	if len(hookRuns(t, a.out)) != 0 {
		t.Fatalf("alerted while retrying: %v", hookRuns(t, a.out))
	}

	a.reviewCopy(t)
	a.r.list(t, "")
	testutil.WaitFor(t, "the open alert", func() bool { return len(hookRuns(t, a.out)) == 1 })
	run := hookRuns(t, a.out)[0]
	if run[EnvAction] != ActionOpen || !strings.Contains(run[EnvJSON], `"auto_merge":{"state":"needs_person","reason":"the merge needs review: 1 conflict"`) {
		t.Fatalf("alert %v", run)
	}
	if st := a.comp.Snapshot().AutoMerge; st.NeedsPerson != 1 || st.Retrying != 1 || !st.Enabled {
		t.Fatalf("status %+v", st)
	}
}

// TestAutoMergeAfterRestart: a copy the registry held open when the
// daemon stopped (found by a daemon without --auto-merge, say) is merged
// when a daemon with AutoMerge starts, although it is not alerted as new.
func TestAutoMergeAfterRestart(t *testing.T) {
	hv := filepath.Join(t.TempDir(), "hive")
	memory := filepath.Join(hv, "agents", "dwight", "memory.md")
	ours := mergeBase + "- ours\n"
	writeFile(t, memory, ours)
	pal := filepath.Join(t.TempDir(), "palace")
	first := startDaemon(t, pal, hv, newComponent(t, Options{}), 0, newLogRecorder(t).logger())
	testutil.WaitFor(t, "the first scan", func() bool { return first.scans.Load() > 0 })
	cp := filepath.Join(filepath.Dir(memory), "memory.sync-conflict-20261201-101500-ABCDEFG.md")
	writeFile(t, cp, mergeBase+"- theirs\n")
	if l := first.list(t, ""); len(l.Conflicts) != 1 {
		t.Fatalf("listed %+v", l)
	}
	first.stop(t)

	out := filepath.Join(t.TempDir(), "hook.jsonl")
	second := startDaemon(t, pal, hv, newComponent(t, Options{AutoMerge: true, Command: hookCommand(t, out)}), 0, newLogRecorder(t).logger())
	testutil.WaitFor(t, "the merged alert", func() bool { return len(hookRuns(t, out)) == 1 })
	if run := hookRuns(t, out)[0]; run[EnvAction] != ActionMerged {
		t.Fatalf("alert %v", run)
	}
	if got := testutil.ReadFile(t, memory); got != ours+"- theirs\n" {
		t.Fatalf("file:\n%s", got)
	}
	if l := second.list(t, ""); len(l.Conflicts) != 0 {
		t.Fatalf("still listed %+v", l)
	}
}
