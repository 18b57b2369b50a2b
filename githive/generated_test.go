package githive_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/githive"
	"github.com/memminer/memminer/githive/gittest"
	"github.com/memminer/memminer/memory/markdown"
)

// genSide edits the base notes at random: removes some, changes some
// (appending a word) and adds new ones; it returns the side's notes and
// what it did to each base note ("kept", "removed", "changed").
func genSide(r *rand.Rand, base []string, tag string) (notes []string, did map[string]string, added []string) {
	did = map[string]string{}
	for i, n := range base {
		switch r.IntN(6) {
		case 0:
			did[n] = "removed"
		case 1:
			did[n] = "changed"
			notes = append(notes, n+" "+tag+" edit")
		default:
			did[n] = "kept"
			notes = append(notes, n)
		}
		if r.IntN(5) == 0 {
			a := fmt.Sprintf("note %s%d added by %s", tag, i, tag)
			added = append(added, a)
			notes = append(notes, a)
		}
	}
	return notes, did, added
}

func render(notes []string) string {
	var b strings.Builder
	b.WriteString("# Memory\n\n## Facts\n\n")
	for _, n := range notes {
		b.WriteString("- " + n + "\n")
	}
	return b.String()
}

// TestMergeFileGenerated merges 300 generated pairs of edits of one file
// and checks the no-loss rules on each: every note a side added or
// changed is in the result, a note only one side removed (the other kept
// it) is gone, a note both kept is there once, and no marker is a note.
func TestMergeFileGenerated(t *testing.T) {
	gittest.Require(t) // a merge that cannot be laid out falls back to git
	const marker = " (conflict: from the copy of the other side of the Git merge, 2026-12-04)"
	byLines, conflicted := 0, 0
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		var base []string
		for i := range 3 + r.IntN(10) {
			base = append(base, fmt.Sprintf("fact number %d about beets and bears", i))
		}
		ours, od, oa := genSide(r, base, "o")
		theirs, td, ta := genSide(r, base, "t")
		got, out := mergeFiles(t, render(base), render(ours), render(theirs), "agents/dwight/memory.md")
		if out.Method == githive.ByLines {
			byLines++
		}
		if !out.Clean {
			conflicted++
		}
		doc, err := markdown.Parse([]byte(got), markdown.MemoryOptions())
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		for _, n := range doc.Notes {
			if strings.Contains(n.Text, "<<<<<<<") || strings.Contains(n.Text, ">>>>>>>") || strings.Contains(n.Text, "=======") {
				t.Errorf("seed %d: a marker is a note: %q", seed, n.Text)
			}
			count[strings.TrimSuffix(n.Text, marker)]++
		}
		fail := func(format string, args ...any) {
			t.Errorf("seed %d (%s): %s\nbase:\n%s\nours:\n%s\ntheirs:\n%s\nmerged:\n%s", seed, out.Method, fmt.Sprintf(format, args...), render(base), render(ours), render(theirs), got)
		}
		for _, a := range append(oa, ta...) {
			if count[a] != 1 {
				fail("added note %q is there %d times", a, count[a])
			}
		}
		for _, n := range base {
			o, th := od[n], td[n]
			switch {
			case o == "changed" && count[n+" o edit"] != 1:
				fail("our change of %q is missing", n)
			case th == "changed" && count[n+" t edit"] != 1:
				fail("their change of %q is missing", n)
			case o == "kept" && th == "kept" && count[n] != 1:
				fail("%q, kept by both, is there %d times", n, count[n])
			case (o == "removed" && th == "kept" || o == "kept" && th == "removed") && count[n] != 0:
				fail("%q, removed by one side only, is still there", n)
			}
		}
	}
	t.Logf("%d of 300 left conflicts marked, %d merged line by line", conflicted, byLines)
}

// BenchmarkMergeFile merges a memory file of 300 and of 5,000 notes both
// sides appended to and edited, as a git pull runs the driver.
func BenchmarkMergeFile(b *testing.B) {
	for _, n := range []int{300, 5000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchMergeFile(b, n) })
	}
}

func benchMergeFile(b *testing.B, n int) {
	var base []string
	for i := range n {
		base = append(base, fmt.Sprintf("fact number %d about beets, bears and Battlestar Galactica", i))
	}
	ours := append(append([]string(nil), base...), "ours adds this")
	theirs := append(append([]string(nil), base...), "theirs adds that")
	ours[n/50] += " (edited here)"
	theirs[n*4/5] += " (edited there)"
	dir := b.TempDir()
	write := func(name, content string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
		return p
	}
	bp, tp := write("base", render(base)), write("theirs", render(theirs))
	for b.Loop() {
		op := write("ours", render(ours))
		out, err := githive.MergeFile(context.Background(), bp, op, tp, "agents/dwight/memory.md", time.Now())
		if err != nil || !out.Clean || out.Method != githive.ByNotes {
			b.Fatalf("%+v, %v", out, err)
		}
	}
}
