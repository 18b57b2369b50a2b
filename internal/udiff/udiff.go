// Package udiff renders the unified diff of two texts, line by line, as
// diff -u prints it (three lines of context).
package udiff

import (
	"fmt"
	"strings"
)

// context is how many unchanged lines surround each change.
const context = 3

// Diff returns the unified diff turning a into b, with fromName and toName
// in its header; "" when they are equal. A last line without a line break
// is marked as diff marks it.
func Diff(fromName, toName string, a, b []byte) string {
	if string(a) == string(b) {
		return ""
	}
	al, bl := lines(string(a)), lines(string(b))
	ops := script(al, bl)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", fromName, toName)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from context lines before this change to context lines
		// after the last change that is within 2*context of the next.
		start := max(i-context, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*context {
				end = min(end+context, len(ops))
				break
			}
			end = run
		}
		writeHunk(&out, ops[start:end])
		i = end
	}
	return out.String()
}

type op struct {
	kind   byte // ' ', '-', '+'
	text   string
	ai, bi int // 0-based line in a and b where the op stands
}

func writeHunk(out *strings.Builder, ops []op) {
	aStart, bStart := ops[0].ai, ops[0].bi
	aLen, bLen := 0, 0
	for _, o := range ops {
		if o.kind != '+' {
			aLen++
		}
		if o.kind != '-' {
			bLen++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", span(aStart, aLen), span(bStart, bLen))
	for _, o := range ops {
		out.WriteByte(o.kind)
		if strings.HasSuffix(o.text, "\n") {
			out.WriteString(o.text)
		} else {
			out.WriteString(o.text + "\n\\ No newline at end of file\n")
		}
	}
}

// span renders a hunk range: a 1-based start, and the length unless it is
// 1; an empty range names the line before it.
func span(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// lines splits s after each line break, keeping the breaks.
func lines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// script returns the edit script from a to b along a longest common
// subsequence of lines; common prefix and suffix are taken first.
func script(a, b []string) []op {
	var ops []op
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		ops = append(ops, op{' ', a[pre], pre, pre})
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(am), len(bm)
	table := make([][]int32, n+1)
	for i := range table {
		table[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if am[i] == bm[j] {
				table[i][j] = table[i+1][j+1] + 1
			} else {
				table[i][j] = max(table[i+1][j], table[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && am[i] == bm[j]:
			ops = append(ops, op{' ', am[i], pre + i, pre + j})
			i++
			j++
		case j == m || i < n && table[i+1][j] >= table[i][j+1]:
			ops = append(ops, op{'-', am[i], pre + i, pre + j})
			i++
		default:
			ops = append(ops, op{'+', bm[j], pre + i, pre + j})
			j++
		}
	}
	for k := suf; k > 0; k-- {
		ops = append(ops, op{' ', a[len(a)-k], len(a) - k, len(b) - k})
	}
	return ops
}
