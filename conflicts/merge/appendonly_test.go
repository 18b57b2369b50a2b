package merge

import (
	"fmt"
	"strings"
	"testing"
)

// TestAppendOnlyWithoutBase is issue 23's fifth case: the file kept
// growing on this side (six dated notes since the split, each mined), so
// the palace's five contents no longer reach back to the common ancestor;
// the copy added two notes worded like this side's. Against the oldest
// content left (unconfirmed) the copy's notes looked like other versions
// of this side's and the merge needed review; told that this side only
// ever added, the merge is a clean union with every note of both.
func TestAppendOnlyWithoutBase(t *testing.T) {
	const head = "# Memory\n\n## Deploys\n\n- 2026-11-30: deployed api v1 to staging\n"
	day := func(side string, i int) string {
		return fmt.Sprintf("- 2026-12-%02d: deployed api v%d to production from %s\n", i+1, i+2, side)
	}
	content := func(n int) string {
		var b strings.Builder
		b.WriteString(head)
		for i := range n {
			b.WriteString(day("the server", i))
		}
		return b.String()
	}
	ours := content(6)
	var bases []Base
	for n := 6; n >= 2; n-- { // newest first, as the palace keeps them
		bases = append(bases, *baseOf(t, content(n)))
	}
	theirs := head + day("the laptop", 0) + day("the laptop", 1)

	res, err := Merge(Input{Bases: bases, Ours: []byte(ours), Theirs: []byte(theirs), Device: "laptop", Date: "2026-12-04"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsReview {
		t.Fatalf("without AppendOnly the merge was clean; the test no longer shows the case:\n%s", res.Merged)
	}

	res, err = Merge(Input{Bases: bases, Ours: []byte(ours), Theirs: []byte(theirs), Device: "laptop", Date: "2026-12-04", AppendOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.NeedsReview || !res.AppendOnly || len(res.FromTheirs) != 2 || len(res.Removed)+len(res.ProposedRemovals) != 0 {
		t.Fatalf("merge %+v", res)
	}
	for _, line := range strings.SplitAfter(ours+theirs, "\n") {
		if !strings.Contains(string(res.Merged), line) {
			t.Errorf("merged file lacks %q:\n%s", line, res.Merged)
		}
	}
	if strings.Contains(string(res.Merged), "(conflict:") {
		t.Errorf("additions marked as conflicts:\n%s", res.Merged)
	}
}

// TestAppendOnlyTruncatedCopy: a copy cut mid-line (a sync interrupted)
// holds the start of one of the file's notes; in an append-only union
// that fragment is not a note of its own, and every note of both sides
// stays (review: "- g base fac" was appended).
func TestAppendOnlyTruncatedCopy(t *testing.T) {
	var b strings.Builder
	b.WriteString("# g\n\n## Notes\n")
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "- g base fact %d about topic%d\n", i, i)
	}
	ours := b.String()
	cut := strings.Index(ours, "- g base fact 6") + len("- g base fac")
	theirs := ours[:cut]
	res, err := Merge(Input{Ours: []byte(ours), Theirs: []byte(theirs), Device: "laptop", Date: "2026-12-08", AppendOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.FromTheirs) != 0 || string(res.Merged) != ours {
		t.Errorf("took %d notes from the truncated copy; merged:\n%s", len(res.FromTheirs), res.Merged)
	}
	// A real addition after a truncated note is still taken.
	res, err = Merge(Input{Ours: []byte(ours), Theirs: []byte(theirs + "t 6\n- g new fact from the laptop\n"), Device: "laptop", Date: "2026-12-08", AppendOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Merged), "- g new fact from the laptop") {
		t.Errorf("the copy's new note was lost:\n%s", res.Merged)
	}
}
