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

// TestAutoMergeRetriesACopyThatChanged: the copy changes while it is
// merged ("the conflict copy changed while it was merged"); the automatic
// merge used to give up there and leave the copy open for a person. It is
// retried with backoff, status says it is retrying, and once the copy
// holds still it merges, every note of both versions of the copy in the
// file, alerted as merged.
func TestAutoMergeRetriesACopyThatChanged(t *testing.T) {
	hv := filepath.Join(t.TempDir(), "hive")
	memory := filepath.Join(hv, "agents", "dwight", "memory.md")
	ours := mergeBase + "- ours: lint with vet\n"
	writeFile(t, memory, ours)
	cp := filepath.Join(filepath.Dir(memory), "memory.sync-conflict-20261201-101500-ABCDEFG.md")
	first := mergeBase + "- theirs: tests need -race\n"
	second := first + "- theirs: and -count=1\n"

	var calls atomic.Int32
	testHookMerged = func(c Conflict) {
		if c.Path != cp {
			return
		}
		if calls.Add(1) == 1 {
			writeFile(t, cp, second) // Syncthing writes the copy again
		}
	}
	t.Cleanup(func() { testHookMerged = func(Conflict) {} })

	out := filepath.Join(t.TempDir(), "hook.jsonl")
	comp := newComponent(t, Options{AutoMerge: true, Command: hookCommand(t, out), AutoMergeRetry: 20 * time.Millisecond, AutoMergeMaxRetry: 20 * time.Millisecond})
	r := startDaemon(t, filepath.Join(t.TempDir(), "palace"), hv, comp, 0, newLogRecorder(t).logger())
	testutil.WaitFor(t, "the first scan", func() bool { return r.scans.n.Load() > 0 })

	writeFile(t, cp, first)
	r.list(t, "") // the walk for the request finds the copy and merges it
	testutil.WaitFor(t, "the merged alert", func() bool { return len(hookRuns(t, out)) == 1 })
	if run := hookRuns(t, out)[0]; run[EnvAction] != ActionMerged {
		t.Fatalf("alert %v", run)
	}
	if got, want := testutil.ReadFile(t, memory), ours+"- theirs: tests need -race\n- theirs: and -count=1\n"; got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(cp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("copy: %v", err)
	}
	if calls.Load() < 2 {
		t.Fatalf("merged in %d attempts", calls.Load())
	}
}

// TestAutoMergeStatusSaysWhich: while a merge is retried, the listed
// conflict and the component's status say "retrying" and why; a copy
// whose merge needs review says "needs_person", and so does its alert.
func TestAutoMergeStatusSaysWhich(t *testing.T) {
	hv := filepath.Join(t.TempDir(), "hive")
	memory := filepath.Join(hv, "agents", "dwight", "memory.md")
	writeFile(t, memory, mergeBase+"- ours\n")
	cp := filepath.Join(filepath.Dir(memory), "memory.sync-conflict-20261201-101500-ABCDEFG.md")
	changing := mergeBase + "- theirs\n"
	var n atomic.Int32
	testHookMerged = func(c Conflict) {
		if c.Path == cp {
			writeFile(t, cp, changing+strings.Repeat("- again\n", int(n.Add(1)))) // never holds still
		}
	}
	t.Cleanup(func() { testHookMerged = func(Conflict) {} })

	out := filepath.Join(t.TempDir(), "hook.jsonl")
	comp := newComponent(t, Options{AutoMerge: true, Command: hookCommand(t, out), AutoMergeRetry: time.Hour})
	r := startDaemon(t, filepath.Join(t.TempDir(), "palace"), hv, comp, 0, newLogRecorder(t).logger())
	testutil.WaitFor(t, "the first scan", func() bool { return r.scans.n.Load() > 0 })
	writeFile(t, cp, changing)
	r.list(t, "")
	testutil.WaitFor(t, "the retry", func() bool { return comp.Snapshot().AutoMerge.Retrying == 1 })
	l := r.list(t, "")
	if len(l.Conflicts) != 1 || l.Conflicts[0].AutoMerge == nil || l.Conflicts[0].AutoMerge.State != AutoMergeRetrying ||
		!strings.Contains(l.Conflicts[0].AutoMerge.Reason, ErrCopyChanged.Error()) || l.Conflicts[0].AutoMerge.NextAttempt == nil {
		t.Fatalf("listed %+v", l.Conflicts)
	}
	if len(hookRuns(t, out)) != 0 {
		t.Fatalf("alerted while retrying: %v", hookRuns(t, out))
	}

	// A note changed here and, differently, in a copy.
	edited := strings.Replace(mergeBase, "two cores", "four cores", 1) + "- ours\n"
	writeFile(t, memory, edited)
	waitMined(t, r, "dwight", memory, edited)
	review := filepath.Join(filepath.Dir(memory), "memory.sync-conflict-20261201-111500-ABCDEFG.md")
	writeFile(t, review, strings.Replace(mergeBase, "two cores", "eight cores", 1))
	r.list(t, "")
	testutil.WaitFor(t, "the open alert", func() bool { return len(hookRuns(t, out)) == 1 })
	run := hookRuns(t, out)[0]
	if run[EnvAction] != ActionOpen || !strings.Contains(run[EnvJSON], `"auto_merge":{"state":"needs_person","reason":"the merge needs review: 1 conflict"`) {
		t.Fatalf("alert %v", run)
	}
	if st := comp.Snapshot().AutoMerge; st.NeedsPerson != 1 || st.Retrying != 1 || !st.Enabled {
		t.Fatalf("status %+v", st)
	}
}
