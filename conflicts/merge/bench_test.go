package merge

import (
	"fmt"
	"strings"
	"testing"
)

// longFile returns a memory file of n one-line notes, the i-th of them
// changed (as a person rewrites a fact) when changed(i).
func longFile(n int, changed func(int) bool) []byte {
	var b strings.Builder
	b.WriteString("# Memory\n\n")
	for i := range n {
		if changed(i) {
			fmt.Fprintf(&b, "- 2026-12-04: note %d now says the deploy runs on port %d\n", i, 9000+i)
			continue
		}
		fmt.Fprintf(&b, "- 2026-12-01: note %d about service %d on port %d\n", i, i%37, 8000+i)
	}
	return []byte(b.String())
}

// BenchmarkMerge10000 merges two sides of a 10,000-note file that each
// changed notes all over it against the base they share.
func BenchmarkMerge10000(b *testing.B) {
	const n = 10000
	base := baseOf(b, string(longFile(n, func(int) bool { return false })))
	ours := longFile(n, func(i int) bool { return i%101 == 7 })
	theirs := longFile(n, func(i int) bool { return i%103 == 11 })
	in := Input{Bases: []Base{*base}, Ours: ours, Theirs: theirs, Device: "laptop", Date: "2026-12-04"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Merge(in); err != nil {
			b.Fatal(err)
		}
	}
}
