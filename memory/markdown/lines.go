package markdown

import (
	"bytes"
	"sort"
	"strings"
)

// stripListItem removes the list marker at byte markerAt of the first line
// and the item's content indentation from the following lines.
func stripListItem(lines []string, markerAt int) {
	if len(lines) == 0 || markerAt < 0 || markerAt >= len(lines[0]) {
		return
	}
	first := lines[0]
	i := markerAt
	if c := first[i]; c == '-' || c == '+' || c == '*' {
		i++
	} else {
		for i < len(first) && first[i] >= '0' && first[i] <= '9' {
			i++
		}
		if i < len(first) && (first[i] == '.' || first[i] == ')') {
			i++
		}
	}
	markerEndCol := column(first[:i], 0)
	j := i
	for j < len(first) && (first[j] == ' ' || first[j] == '\t') {
		j++
	}
	contentCol := markerEndCol + 1
	if j < len(first) {
		if w := column(first[i:j], markerEndCol) - markerEndCol; w >= 1 && w <= 4 {
			contentCol = markerEndCol + w
		}
	}
	lines[0] = first[j:]
	for k := 1; k < len(lines); k++ {
		lines[k] = stripColumns(lines[k], contentCol)
	}
}

// column returns the column reached after s when it starts at column col;
// tabs advance to the next multiple of four.
func column(s string, col int) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\t' {
			col += 4 - col%4
		} else if s[i] < 0x80 || s[i] >= 0xC0 {
			col++
		}
	}
	return col
}

// stripColumns removes leading spaces and tabs from s while they start
// before column n.
func stripColumns(s string, n int) string {
	col, i := 0, 0
	for i < len(s) && col < n {
		switch s[i] {
		case ' ':
			col++
		case '\t':
			col += 4 - col%4
		default:
			return s[i:]
		}
		i++
	}
	return s[i:]
}

// dedent removes the longest run of leading whitespace that all non-blank
// lines share. Blank lines must already be empty.
func dedent(lines []string) {
	prefix := ""
	set := false
	for _, l := range lines {
		if l == "" {
			continue
		}
		ws := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if !set {
			prefix, set = ws, true
			continue
		}
		n := 0
		for n < len(prefix) && n < len(ws) && prefix[n] == ws[n] {
			n++
		}
		prefix = prefix[:n]
		if prefix == "" {
			return
		}
	}
	if prefix == "" {
		return
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, prefix)
	}
}

// lineIndex maps byte offsets to lines. Lines end at '\n' (as in goldmark);
// a '\r' before it is part of the line and trimmed later.
type lineIndex struct {
	starts []int
	size   int
}

func newLineIndex(src []byte) lineIndex {
	starts := make([]int, 1, bytes.Count(src, []byte{'\n'})+1)
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return lineIndex{starts: starts, size: len(src)}
}

// count returns the number of lines; a final newline starts an empty line.
func (li lineIndex) count() int { return len(li.starts) }

// start returns the byte offset where line l starts.
func (li lineIndex) start(l int) int { return li.starts[l] }

// lineOf returns the 0-based line holding byte offset off.
func (li lineIndex) lineOf(off int) int {
	return sort.Search(len(li.starts), func(i int) bool { return li.starts[i] > off }) - 1
}

// line returns line l of src without its '\n'.
func (li lineIndex) line(src []byte, l int) []byte {
	end := li.size
	if l+1 < len(li.starts) {
		end = li.starts[l+1] - 1
	}
	return src[li.starts[l]:end]
}
