package conflicts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memminer/memminer/conflicts/merge"
	"github.com/memminer/memminer/internal/testutil"
)

// facts are notes that share few words, as real ones do.
var facts = []string{
	"Deploy with make deploy from the release branch",
	"The primary database is db-2",
	"CI runs on two cores and takes nine minutes",
	"Ana owns the palace format",
	"Tokens rotate every Monday morning",
	"Staging mirrors production nightly",
	"Never push to main without review",
	"Logs ship to the central collector",
	"Backups restore in about forty seconds",
	"The API key lives in the vault",
	"Bo writes user documentation",
}

// elevenNotes is a memory file of the first n facts under frontmatter.
func elevenNotes(n int) string {
	var b strings.Builder
	b.WriteString("---\nagent: dwight\n---\n# Memory\n\n")
	for i := range n {
		fmt.Fprintf(&b, "- %s\n", facts[i])
	}
	return b.String()
}

// issueHistory is issue 23's file as mined: 11 notes, then one deleted,
// then one appended.
func issueHistory() (full, deleted, appended string) {
	full = elevenNotes(11)
	lines := strings.SplitAfter(full, "\n")
	deleted = strings.Join(append(append([]string{}, lines[:8]...), lines[9:]...), "")
	return full, deleted, deleted + "- Deploys go through the staging cluster first\n"
}

// TestEmptyOrTruncatedCopyDeletesNothing is issue 23's repro: an 11-note
// file mined, a note deleted and mined, one appended and mined; then an
// empty (or truncated) conflict copy. The merge is clean and adds nothing,
// removes nothing, keeps the frontmatter (before, it removed 10 of the 11
// notes); the removals are proposed, and only AcceptRemovals carries them
// out.
func TestEmptyOrTruncatedCopyDeletesNothing(t *testing.T) {
	full, deleted, appended := issueHistory()
	for _, tc := range []struct {
		name, copy string
		proposed   int
	}{
		{"empty", "", 10},
		{"truncated", appended[:len(appended)/2], 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newMergeHistory(t, full, deleted, appended)
			c := f.copyOf(t, "20261204-120000", tc.copy)

			m := f.merge([]Conflict{c}, false, false).Merges[0]
			if m.Status != StatusClean || len(m.Removed) != 0 || len(m.FromCopy) != 0 || m.Diff != "" {
				t.Fatalf("dry run: %+v", m)
			}
			if len(m.ProposedRemovals) == 0 || tc.proposed > 0 && len(m.ProposedRemovals) != tc.proposed {
				t.Errorf("proposed removals %d, want %d", len(m.ProposedRemovals), tc.proposed)
			}
			if tc.name == "empty" && !m.ProposedFrontmatter {
				t.Error("the empty copy's loss of the frontmatter is not proposed")
			}
			m = f.merge([]Conflict{c}, true, false).Merges[0]
			if !m.Applied {
				t.Fatalf("apply: %+v", m)
			}
			if got := testutil.ReadFile(t, f.memory); got != appended {
				t.Fatalf("the merge changed the file:\n%s", got)
			}
		})
	}

	t.Run("accepted by a person", func(t *testing.T) {
		f := newMergeHistory(t, full, deleted, appended)
		c := f.copyOf(t, "20261204-120000", "")
		dry := MergeCopies(context.Background(), f.p, []Conflict{c}, MergeOptions{}).Merges[0]
		if dry.Review == nil {
			t.Fatalf("the dry run names no review: %+v", dry)
		}
		m := MergeCopies(context.Background(), f.p, []Conflict{c}, MergeOptions{Apply: true, AcceptRemovals: true, Reviewed: []string{*dry.Review}, PalaceDir: f.palaceDir})
		if got := m.Merges[0]; !got.Applied || len(got.Removed) != 10 || len(got.ProposedRemovals) != 0 {
			t.Fatalf("merge %+v", got)
		}
		if got, want := testutil.ReadFile(t, f.memory), "# Memory\n\n- Deploys go through the staging cluster first\n"; got != want {
			t.Fatalf("file after accepted removals:\n%s\nwant:\n%s", got, want)
		}
	})
}

// TestRemovalsReviewedOneByOne: a person's reviews carry out the removals
// they name and no other: one note's review removes that note, the
// frontmatter's the frontmatter; a review of what the copy no longer
// proposes removes nothing and the copy is not merged.
func TestRemovalsReviewedOneByOne(t *testing.T) {
	full, deleted, appended := issueHistory()
	body := strings.TrimPrefix(appended, "---\nagent: dwight\n---\n")
	tests := []struct {
		name string
		// reviewed picks the reviews passed back from the dry run.
		reviewed func(dry CopyMerge) []string
		want     func(dry CopyMerge) string
		removed  int
		applied  bool
	}{
		{
			name:     "one note",
			reviewed: func(dry CopyMerge) []string { return []string{dry.ProposedRemovals[1].Review} },
			want: func(dry CopyMerge) string {
				return strings.Replace(appended, "- "+dry.ProposedRemovals[1].Text+"\n", "", 1)
			},
			removed: 1, applied: true,
		},
		{
			name: "two notes and the frontmatter",
			reviewed: func(dry CopyMerge) []string {
				return []string{dry.ProposedRemovals[0].Review, *dry.FrontmatterReview, dry.ProposedRemovals[3].Review}
			},
			want: func(dry CopyMerge) string {
				out := strings.Replace(body, "- "+dry.ProposedRemovals[0].Text+"\n", "", 1)
				return strings.Replace(out, "- "+dry.ProposedRemovals[3].Text+"\n", "", 1)
			},
			removed: 2, applied: true,
		},
		{
			name: "a note's review of another copy",
			reviewed: func(dry CopyMerge) []string {
				return []string{*review([]byte("another copy"), []merge.Note{dry.ProposedRemovals[0].Note}, false)}
			},
			want: func(CopyMerge) string { return appended },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newMergeHistory(t, full, deleted, appended)
			c := f.copyOf(t, "20261204-120000", "")
			dry := MergeCopies(context.Background(), f.p, []Conflict{c}, MergeOptions{}).Merges[0]
			if len(dry.ProposedRemovals) < 4 || dry.FrontmatterReview == nil || slices.ContainsFunc(dry.ProposedRemovals, func(r Removal) bool { return r.Review == *dry.Review }) {
				t.Fatalf("the dry run's reviews: %+v", dry)
			}
			m := MergeCopies(context.Background(), f.p, []Conflict{c}, MergeOptions{Apply: true, AcceptRemovals: true, Reviewed: tt.reviewed(dry), PalaceDir: f.palaceDir}).Merges[0]
			if m.Applied != tt.applied || len(m.Removed) != tt.removed || m.Applied == errors.Is(m.err, ErrNotReviewed) {
				t.Fatalf("merge: applied %v, removed %d, error %v; want %v, %d", m.Applied, len(m.Removed), m.err, tt.applied, tt.removed)
			}
			if got, want := testutil.ReadFile(t, f.memory), tt.want(dry); got != want {
				t.Errorf("file:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// waitMined waits until the daemon has mined content as the file's latest.
func waitMined(t *testing.T, r *running, wing, path, content string) {
	t.Helper()
	sum := sha256.Sum256([]byte(content))
	want := hex.EncodeToString(sum[:])
	testutil.WaitFor(t, "the daemon to mine "+filepath.Base(path), func() bool {
		r.comp.mu.Lock()
		h := r.comp.host
		r.comp.mu.Unlock()
		if h == nil || h.Palace() == nil {
			return false
		}
		src, ok := h.Palace().Source(wing, path)
		return ok && src.Hash == want
	})
}

// TestAutoMergeOnlyAdds: run --auto-merge merges issue 23's empty copy
// (the file mined with 11 notes, one deleted, one appended) without
// removing anything: 11 notes before, 11 after (it used to leave 1).
func TestAutoMergeOnlyAdds(t *testing.T) {
	full, deleted, appended := issueHistory()
	a := startAutoMerge(t, full, Options{})
	for _, c := range []string{full, deleted, appended} {
		writeFile(t, a.memory, c)
		waitMined(t, a.r, "dwight", a.memory, c)
	}

	cp := a.copyPath("20261204-120000")
	writeFile(t, cp, "")
	a.r.list(t, "")
	testutil.WaitFor(t, "the alert", func() bool { return len(hookRuns(t, a.out)) == 1 })
	if got := testutil.ReadFile(t, a.memory); got != appended {
		t.Fatalf("the automatic merge changed the file:\n%s", got)
	}
	if run := hookRuns(t, a.out)[0]; run[EnvAction] != ActionMerged {
		t.Fatalf("alert %v", run)
	}
	if _, err := os.Stat(cp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("copy: %v", err)
	}
}

// TestAppendOnlyMergesWithoutBase is issue 23's fifth case through the
// palace: six notes written (and mined) on this side since the split, so
// the five contents the palace keeps no longer reach the common ancestor,
// and two notes worded alike in the copy. The merge used to need review;
// the palace has seen the file lose no note, so both sides only added and
// the merge is clean, every note of both in the file.
func TestAppendOnlyMergesWithoutBase(t *testing.T) {
	head := "# Memory\n\n## Deploys\n\n- 2026-11-30: deployed api v1 to staging\n"
	day := func(side string, i int) string {
		return fmt.Sprintf("- 2026-12-%02d: deployed api v%d to production from %s\n", i+1, i+2, side)
	}
	history := []string{head}
	for i := range 6 {
		history = append(history, history[len(history)-1]+day("the server", i))
	}
	f := newMergeHistory(t, history...)
	ours := history[len(history)-1]
	c := f.copyOf(t, "20261204-120000", head+day("the laptop", 0)+day("the laptop", 1))
	m := f.merge([]Conflict{c}, true, false).Merges[0]
	if m.Status != StatusClean || !m.AppendOnly || !m.Applied || len(m.FromCopy) != 2 || len(m.Conflicts) != 0 {
		t.Fatalf("merge %+v", m)
	}
	got := testutil.ReadFile(t, f.memory)
	if want := ours + day("the laptop", 0) + day("the laptop", 1); got != want {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
}
