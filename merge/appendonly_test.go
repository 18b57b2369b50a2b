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
