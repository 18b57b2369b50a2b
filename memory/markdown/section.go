package markdown

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// parseSection parses the body from byte start of the source to the end
// of a section: to the first heading after size bytes that starts a line,
// at column 0, after a blank line, or to the end of the source. It returns
// where the section ends and its syntax tree.
//
// The tree of a section is the tree of the same lines within the whole
// body: a blank line closes every paragraph, HTML block of types 6 and 7
// and block quote, and then a heading at column 0 closes every list
// (whose tightness therefore does not change) and indented code, and
// every block inside those. Only fenced code and HTML blocks of types 1
// to 5 at the top level can run on past such a heading; a section that
// would end inside one is made longer.
func (p *parseState) parseSection(start, size int) (int, ast.Node) {
	for ; ; size *= 2 {
		end := sectionEnd(p.src, start, size)
		root := markdownParser().Parse(text.NewReader(p.src[start:end]))
		if end == len(p.src) || !p.openAtEnd(root, start, end) {
			return end, root
		}
	}
}

// sectionEnd returns the offset of the first line at or after from+size
// that starts with an ATX heading's "#" and follows a blank line, or the
// end of src.
func sectionEnd(src []byte, from, size int) int {
	for at := from + size; at < len(src); {
		i := bytes.Index(src[at:], []byte("\n#"))
		if i < 0 {
			break
		}
		line := at + i + 1
		at = line
		prev := bytes.LastIndexByte(src[:line-1], '\n') + 1
		if prev >= from && isBlankLine(src[prev:line-1]) && isATXStart(src[line:]) {
			return line
		}
	}
	return len(src)
}

// isBlankLine reports whether line (without its '\n') holds only spaces,
// tabs and a carriage return: blank for CommonMark and goldmark alike.
func isBlankLine(line []byte) bool {
	return len(bytes.Trim(line, " \t\r")) == 0
}

// isATXStart reports whether b starts with 1 to 6 '#' and then a space,
// a tab or the end of the line.
func isATXStart(b []byte) bool {
	n := 0
	for n < len(b) && b[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(b) || strings.IndexByte(" \t\r\n", b[n]) >= 0)
}

// openAtEnd reports whether the last top-level block of the section from
// byte start to end of the source is fenced code or an HTML block of
// types 1 to 5 still open at the section's end, which the next lines
// might continue.
func (p *parseState) openAtEnd(root ast.Node, start, end int) bool {
	last := p.lines.lineOf(end - 1)
	switch n := root.LastChild().(type) {
	case *ast.FencedCodeBlock:
		lines := n.Lines()
		// Every line after an open fence is its content, blank ones too.
		return lines.Len() > 0 && p.lines.lineOf(start+lines.At(lines.Len()-1).Start) >= last
	case *ast.HTMLBlock:
		return n.HTMLBlockType <= ast.HTMLBlockType5 && !n.HasClosure()
	}
	return false
}
