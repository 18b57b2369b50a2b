package conflicts

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/syncthing/sttest"
)

const mergeBase = "# Memory\n\n## Build\n\n- run make before pushing\n- CI runs on two cores\n"

// mergeFixture is a hive with one agent whose memory.md was mined at
// mergeBase, then changed to ours; copies are added by the test.
type mergeFixture struct {
	dir, hive, memory, palaceDir string
	p                            *palace.Palace
}

func newMergeFixture(t *testing.T, ours string) *mergeFixture {
	t.Helper()
	return newMergeHistory(t, mergeBase, ours)
}

// newMergeHistory is a hive with one agent whose memory.md was mined at
// each of contents in turn, as the daemon mines every write.
func newMergeHistory(t *testing.T, contents ...string) *mergeFixture {
	t.Helper()
	f := &mergeFixture{dir: t.TempDir()}
	f.hive = filepath.Join(f.dir, "hive")
	agent := filepath.Join(f.hive, "agents", "dwight")
	if err := os.MkdirAll(agent, 0o755); err != nil {
		t.Fatal(err)
	}
	f.memory = filepath.Join(agent, "memory.md")
	f.palaceDir = filepath.Join(f.dir, "palace")
	ctx := context.Background()
	p, err := palace.Open(ctx, f.palaceDir, palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	f.p = p
	for _, content := range contents {
		writeFile(t, f.memory, content)
		if _, err := mine.Mine(ctx, p, f.hive, mine.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// copyOf adds a conflict copy made at stamp (YYYYMMDD-HHMMSS) and returns
// its conflict.
func (f *mergeFixture) copyOf(t *testing.T, stamp, content string) Conflict {
	t.Helper()
	path := filepath.Join(filepath.Dir(f.memory), "memory.sync-conflict-"+stamp+"-ABCDEFG.md")
	writeFile(t, path, content)
	return Conflict{Path: path, Original: f.memory, Wing: "dwight", Device: "ABCDEFG", DeviceName: "laptop"}
}

func (f *mergeFixture) merge(cs []Conflict, apply, accept bool) MergeReport {
	return MergeCopies(context.Background(), f.p, cs, MergeOptions{Apply: apply, AcceptConflicts: accept, PalaceDir: f.palaceDir, Now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)})
}

func TestMergeCopiesDryRunChangesNothing(t *testing.T) {
	ours := mergeBase + "- ours: lint with vet\n"
	f := newMergeFixture(t, ours)
	c := f.copyOf(t, "20261201-101500", mergeBase+"- theirs: tests need -race\n")
	rep := f.merge([]Conflict{c}, false, false)
	if len(rep.Merges) != 1 {
		t.Fatalf("%d merges", len(rep.Merges))
	}
	m := rep.Merges[0]
	if m.Status != StatusClean || !m.AppendOnly || m.Applied || len(m.FromCopy) != 1 || m.Kept != 3 {
		t.Errorf("merge %+v", m)
	}
	if !strings.Contains(m.Diff, "+- theirs: tests need -race\n") {
		t.Errorf("diff:\n%s", m.Diff)
	}
	if got := testutil.ReadFile(t, f.memory); got != ours {
		t.Errorf("dry run changed the file:\n%s", got)
	}
	if _, err := os.Stat(c.Path); err != nil {
		t.Errorf("dry run removed the copy: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.palaceDir, MergedDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dry run kept contents: %v", err)
	}
}

func TestMergeCopiesApplyKeepsBothContents(t *testing.T) {
	ours := mergeBase + "- ours: lint with vet\n"
	theirs := mergeBase + "- theirs: tests need -race\n"
	f := newMergeFixture(t, ours)
	c := f.copyOf(t, "20261201-101500", theirs)
	// An expired backup is pruned, a recent one kept.
	old := filepath.Join(f.palaceDir, MergedDir, "2026-10-01-memory.sync-conflict-x.md")
	recent := filepath.Join(f.palaceDir, MergedDir, "2026-11-20-memory.sync-conflict-y.md")
	for _, d := range []string{old, recent} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	rep := f.merge([]Conflict{c}, true, false)
	m := rep.Merges[0]
	if m.Status != StatusClean || !m.Applied || m.Error != nil {
		t.Fatalf("merge %+v", m)
	}
	if got, want := testutil.ReadFile(t, f.memory), ours+"- theirs: tests need -race\n"; got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(c.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("copy still there: %v", err)
	}
	want := filepath.Join(f.palaceDir, MergedDir, "2026-12-01-"+filepath.Base(c.Path))
	if m.Backup == nil || *m.Backup != want {
		t.Errorf("backup %v, want %s", m.Backup, want)
	}
	if got := testutil.ReadFile(t, filepath.Join(want, filepath.Base(c.Path))); got != theirs {
		t.Errorf("kept copy %q", got)
	}
	if got := testutil.ReadFile(t, filepath.Join(want, "memory.md")); got != ours {
		t.Errorf("kept previous content %q", got)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("expired backup not pruned: %v", err)
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("recent backup pruned: %v", err)
	}
}

func TestMergeCopiesNeedingReviewWriteOnlyWhenAccepted(t *testing.T) {
	ours := strings.Replace(mergeBase, "two cores", "four cores", 1)
	theirs := strings.Replace(mergeBase, "two cores", "eight cores", 1)
	f := newMergeFixture(t, ours)
	c := f.copyOf(t, "20261201-101500", theirs)

	m := f.merge([]Conflict{c}, true, false).Merges[0]
	if m.Status != StatusNeedsReview || m.Applied || (m.Error == nil || !strings.Contains(*m.Error, ErrNeedsReview.Error())) || len(m.Conflicts) != 1 {
		t.Fatalf("merge %+v", m)
	}
	if testutil.ReadFile(t, f.memory) != ours {
		t.Error("a merge needing review was written without --accept-conflicts")
	}
	if _, err := os.Stat(c.Path); err != nil {
		t.Fatalf("copy removed: %v", err)
	}

	m = f.merge([]Conflict{c}, true, true).Merges[0]
	if m.Status != StatusNeedsReview || !m.Applied {
		t.Fatalf("merge %+v", m)
	}
	want := strings.Replace(mergeBase, "- CI runs on two cores\n",
		"- CI runs on four cores\n- CI runs on eight cores (conflict: from the copy of laptop, 2026-12-01)\n", 1)
	if got := testutil.ReadFile(t, f.memory); got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
}

func TestMergeCopiesInTimeOrder(t *testing.T) {
	f := newMergeFixture(t, mergeBase+"- ours\n")
	later := f.copyOf(t, "20261201-120000", mergeBase+"- later copy\n")
	earlier := f.copyOf(t, "20261201-090000", mergeBase+"- earlier copy\n")
	for _, apply := range []bool{false, true} {
		rep := f.merge([]Conflict{later, earlier}, apply, false)
		if len(rep.Merges) != 2 || rep.Merges[0].Copy != earlier.Path || rep.Merges[1].Copy != later.Path {
			t.Fatalf("apply %v: merges %+v", apply, rep.Merges)
		}
		// The second merge starts from the first's result.
		last := rep.Merges[1]
		if !strings.Contains(last.Diff, " - earlier copy\n+- later copy\n") {
			t.Errorf("apply %v: second diff:\n%s", apply, last.Diff)
		}
	}
	if got, want := testutil.ReadFile(t, f.memory), mergeBase+"- ours\n- earlier copy\n- later copy\n"; got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
}

func TestMergeCopiesLeavesOtherFilesAlone(t *testing.T) {
	f := newMergeFixture(t, mergeBase)
	notes := filepath.Join(filepath.Dir(f.memory), "notes.txt")
	writeFile(t, notes, "x\n")
	cp := filepath.Join(filepath.Dir(f.memory), "notes.sync-conflict-20261201-101500-ABCDEFG.txt")
	writeFile(t, cp, "y\n")
	rep := f.merge([]Conflict{{Path: cp, Original: notes, Wing: "dwight"}}, true, true)
	if m := rep.Merges[0]; m.Status != StatusNotMemory || m.Applied {
		t.Errorf("merge %+v", m)
	}
	if _, err := os.Stat(cp); err != nil {
		t.Errorf("copy of a non-memory file removed: %v", err)
	}
}

func TestMergeCopiesRefusesWhatIsNotText(t *testing.T) {
	f := newMergeFixture(t, mergeBase)
	c := f.copyOf(t, "20261201-101500", "bad \xff byte\n")
	m := f.merge([]Conflict{c}, true, true).Merges[0]
	if m.Status != StatusFailed || (m.Error == nil || !strings.Contains(*m.Error, "not UTF-8")) || m.Applied {
		t.Errorf("merge %+v", m)
	}
	if _, err := os.Stat(c.Path); err != nil {
		t.Errorf("copy removed: %v", err)
	}
}

func TestMergeWithoutBaseIsAUnion(t *testing.T) {
	f := newMergeFixture(t, mergeBase)
	// A file the palace never mined.
	other := filepath.Join(filepath.Dir(f.memory), "people.md")
	writeFile(t, other, "- Ana owns the palace\n")
	cp := filepath.Join(filepath.Dir(f.memory), "people.sync-conflict-20261201-101500-ABCDEFG.md")
	writeFile(t, cp, "- Bo writes the docs\n")
	m := f.merge([]Conflict{{Path: cp, Original: other, Wing: "dwight"}}, true, false).Merges[0]
	if m.ThreeWay || m.Status != StatusClean || !m.Applied {
		t.Fatalf("merge %+v", m)
	}
	if got := testutil.ReadFile(t, other); got != "- Ana owns the palace\n- Bo writes the docs\n" {
		t.Errorf("file %q", got)
	}
}

func TestSelect(t *testing.T) {
	l := List{Conflicts: []Conflict{{Path: "/h/a/memory.sync-conflict-1.md", Original: "/h/a/memory.md"}, {Path: "/h/b/x.sync-conflict-2.md", Original: "/h/b/x.md"}}}
	got, err := Select(l, []string{"/h/a/memory.md", "/h/a/memory.sync-conflict-1.md"})
	if err != nil || len(got) != 1 || got[0].Original != "/h/a/memory.md" {
		t.Errorf("Select = %+v, %v", got, err)
	}
	var nc *NoCopyError
	if _, err := Select(l, []string{"/h/c/memory.md"}); !errors.As(err, &nc) || nc.Paths[0] != "/h/c/memory.md" || !errors.Is(err, ErrNoCopy) {
		t.Errorf("Select of an unknown path: %v", err)
	}
	if got, _ := Select(l, nil); len(got) != 2 {
		t.Errorf("Select of nothing = %+v", got)
	}
}

// TestAutoMerge: with AutoMerge the daemon merges a clean copy as soon as
// it finds it and alerts "merged"; a copy that needs review stays and is
// alerted "open".
func TestAutoMerge(t *testing.T) {
	ours := mergeBase + "- ours: lint with vet\n"
	a := startAutoMerge(t, ours, Options{})
	clean := a.copyPath("20261201-101500")
	writeFile(t, clean, mergeBase+"- theirs: tests need -race\n")
	a.r.list(t, "") // the walk made for a request finds the copy
	testutil.WaitFor(t, "the merged alert", func() bool { return len(hookRuns(t, a.out)) == 1 })
	run := hookRuns(t, a.out)[0]
	if run[EnvAction] != ActionMerged || run[EnvPath] != clean {
		t.Fatalf("alert %v", run)
	}
	if got, want := testutil.ReadFile(t, a.memory), ours+"- theirs: tests need -race\n"; got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(clean); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("copy still there: %v", err)
	}
	if l := a.r.list(t, ""); len(l.Conflicts) != 0 {
		t.Fatalf("still listed: %+v", l)
	}
	kept, err := os.ReadDir(filepath.Join(a.r.d.Palace().Dir(), MergedDir))
	if err != nil || len(kept) != 1 {
		t.Fatalf("kept contents %v, %v", kept, err)
	}

	review := a.reviewCopy(t)
	before := testutil.ReadFile(t, a.memory)
	a.r.list(t, "")
	testutil.WaitFor(t, "the open alert", func() bool { return len(hookRuns(t, a.out)) == 2 })
	if run := hookRuns(t, a.out)[1]; run[EnvAction] != ActionOpen || run[EnvPath] != review {
		t.Fatalf("alert %v", run)
	}
	if testutil.ReadFile(t, a.memory) != before {
		t.Fatal("a merge needing review was written")
	}
	if l := a.r.list(t, ""); len(l.Conflicts) != 1 || l.Conflicts[0].Path != review {
		t.Fatalf("listed: %+v", l)
	}
}

// TestAutoMergeLeavesCopiesToTheDeviceTheyName: with Syncthing, a copy
// naming another device is that device's to merge; if it has not done so
// within AutoMergeWait, the copy is alerted as open, and nothing is
// written here.
func TestAutoMergeLeavesCopiesToTheDeviceTheyName(t *testing.T) {
	node, _ := sttest.StartPair(t)
	hv := filepath.Join(t.TempDir(), "hive")
	memory := filepath.Join(hv, "agents", "dwight", "memory.md")
	ours := mergeBase + "- ours\n"
	writeFile(t, memory, ours)
	out := filepath.Join(t.TempDir(), "hook.jsonl")
	comp := syncthingComponent(t, node, Options{AutoMerge: true, AutoMergeWait: 50 * time.Millisecond, Command: hookCommand(t, out)})
	r := startDaemon(t, filepath.Join(t.TempDir(), "palace"), hv, comp, 0, newLogRecorder(t).logger())
	testutil.WaitFor(t, "the first scan", func() bool { return r.scans.Load() > 0 })

	other := "AAAAAAA"
	if node.Short() == other {
		other = "BBBBBBB"
	}
	cp := filepath.Join(filepath.Dir(memory), "memory.sync-conflict-20261201-101500-"+other+".md")
	writeFile(t, cp, mergeBase+"- theirs\n")
	r.list(t, "")
	testutil.WaitFor(t, "the open alert", func() bool { return len(hookRuns(t, out)) == 1 })
	if run := hookRuns(t, out)[0]; run[EnvAction] != ActionOpen || run[EnvPath] != cp {
		t.Fatalf("alert %v", run)
	}
	if testutil.ReadFile(t, memory) != ours {
		t.Fatal("merged a copy naming another device")
	}
	if _, err := os.Stat(cp); err != nil {
		t.Fatalf("copy removed: %v", err)
	}
}
