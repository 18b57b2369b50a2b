package udiff

import (
	"fmt"
	"strings"
	"testing"
)

// memoryFile returns an n-line memory file; with edit set, every 97th line
// is changed and every 89th removed, so the diff has work in the middle,
// not only a common prefix and suffix.
func memoryFile(n int, edit bool) []byte {
	var b strings.Builder
	for i := range n {
		switch {
		case edit && i%97 == 50:
			fmt.Fprintf(&b, "- 2026-12-04: changed note %d about the deploy\n", i)
		case edit && i%89 == 40:
		default:
			fmt.Fprintf(&b, "- 2026-12-01: note %d about service %d and its port %d\n", i, i%37, 8000+i)
		}
	}
	return []byte(b.String())
}

func BenchmarkDiff10000(b *testing.B) {
	a, c := memoryFile(10000, false), memoryFile(10000, true)
	b.ReportAllocs()
	for b.Loop() {
		if Diff("a", "b", a, c) == "" {
			b.Fatal("no diff")
		}
	}
}

// TestDiffLongFile checks a diff of two 10,000-line files applies back:
// a patched with the diff is b.
func TestDiffLongFile(t *testing.T) {
	a, c := memoryFile(10000, false), memoryFile(10000, true)
	got, err := patch(string(a), Diff("a", "b", a, c))
	if err != nil {
		t.Fatal(err)
	}
	if got != string(c) {
		t.Fatal("the diff does not turn a into b")
	}
}

// patch applies a unified diff of whole lines, each ending in "\n", checking
// every context and removed line against a.
func patch(a, diff string) (string, error) {
	old := strings.SplitAfter(a, "\n")
	var out []string
	at := 0
	for _, l := range strings.SplitAfter(diff, "\n") {
		switch {
		case l == "", strings.HasPrefix(l, "--- "), strings.HasPrefix(l, "+++ "):
		case strings.HasPrefix(l, "@@ -"):
			var from int
			if _, err := fmt.Sscanf(l, "@@ -%d", &from); err != nil {
				return "", err
			}
			for ; at < from-1; at++ {
				out = append(out, old[at])
			}
		case l[0] == '+':
			out = append(out, l[1:])
		case l[0] == ' ' || l[0] == '-':
			if at >= len(old) || old[at] != l[1:] {
				return "", fmt.Errorf("line %d is not %q", at+1, l[1:])
			}
			if l[0] == ' ' {
				out = append(out, old[at])
			}
			at++
		default:
			return "", fmt.Errorf("bad diff line %q", l)
		}
	}
	return strings.Join(append(out, old[at:]...), ""), nil
}
