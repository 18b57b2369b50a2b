package markdown

import (
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// linkRefs is goldmark's transformer that linkRefTransformer hands the
// windows to (a test counts what it is given).
var linkRefs parser.ParagraphTransformer = parser.LinkReferenceParagraphTransformer

// linkRefWindow is how many lines of a paragraph goldmark's link reference
// transformer is given at once.
const linkRefWindow = 64

// linkRefTransformer is goldmark's LinkReferenceParagraphTransformer made
// linear. goldmark's removes each definition it finds by copying every
// line after it, so a paragraph of n definitions takes time in n²: 100,000
// lines of "[a]: b" (600 KB) took 16 s, and a memory file is anyone's
// input. This one gives goldmark's a window of the paragraph's lines at a
// time, as a paragraph of its own put before the node: the definitions it
// finds are inserted before the window, as they would be before the
// node, and the window goes when it held nothing else. Definitions are
// only ever found at a paragraph's start, so the first window that keeps
// a line ends the search: what it kept and every line after it is the
// paragraph. A window ends before a line that starts with '[', so a
// definition whose title is on the next lines is not cut from it.
type linkRefTransformer struct{}

func (linkRefTransformer) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	if lines.Len() <= linkRefWindow {
		linkRefs.Transform(node, reader, pc)
		return
	}
	parent := node.Parent()
	src := reader.Source()
	rest := lines.Sliced(0, lines.Len())
	for first := true; ; first = false {
		n := windowEnd(rest, src)
		window := ast.NewParagraph()
		seg := text.NewSegments()
		seg.AppendAll(rest[:n])
		window.SetLines(seg)
		if first {
			window.SetBlankPreviousLines(node.HasBlankPreviousLines())
		}
		parent.InsertBefore(parent, node, window)
		linkRefs.Transform(window, reader, pc)
		rest = rest[n:]
		if window.Parent() != nil {
			// A line that is no definition: the paragraph from here.
			kept := window.Lines()
			parent.RemoveChild(parent, window)
			kept.AppendAll(rest)
			node.SetLines(kept)
			return
		}
		if len(rest) == 0 {
			parent.RemoveChild(parent, node)
			return
		}
	}
}

// windowEnd is how many of lines the next window holds: linkRefWindow,
// or more up to a line that starts (after up to three spaces) with '[',
// or all of them.
func windowEnd(lines []text.Segment, src []byte) int {
	n := min(linkRefWindow, len(lines))
	for n < len(lines) && !startsLabel(lines[n].Value(src)) {
		n++
	}
	return n
}

// startsLabel reports whether line starts, after up to three spaces, with
// '[': what a link reference definition starts with.
func startsLabel(line []byte) bool {
	for i := 0; i < len(line) && i <= 3; i++ {
		switch line[i] {
		case '[':
			return true
		case ' ':
			continue
		}
		return false
	}
	return false
}
