package markdown

import (
	"bytes"
	"strings"
	"unicode"

	"github.com/yuin/goldmark/ast"
)

// blockKind tells how a block's lines become note text.
type blockKind int

const (
	kindBlock    blockKind = iota // paragraph, code, quote, HTML…
	kindListItem                  // top-level list item: marker stripped
	kindTable                     // GFM table: each row is a block boundary
)

// block is a candidate note: a run of source lines owned by one or more
// top-level AST nodes.
type block struct {
	kind    blockKind
	start   int // first line, 0-based
	end     int // last line, inclusive
	heading string
	nodes   []ast.Node
}

// segment is the start of a top-level element; owner is the index of the
// block it belongs to, or -1 for headings and thematic breaks.
type segment struct {
	start int
	owner int
}

// outline is the heading path where a parse has got to.
type outline struct {
	headings []headingEntry
	path     string
}

// collect turns the top-level nodes of a section of the body into blocks
// with heading paths and line ranges, and lists the headings. path is the
// heading path at the section's start, and is moved on to its end; next
// is the line after the section.
func (p *parseState) collect(root ast.Node, body []byte, path *outline, next int) ([]block, []Heading) {
	var (
		blocks   []block
		found    []Heading
		segs     []segment
		attachTo = -1 // block that a following code block joins
	)
	add := func(kind blockKind, n ast.Node, start int) int {
		blocks = append(blocks, block{kind: kind, start: start, heading: path.path, nodes: []ast.Node{n}})
		segs = append(segs, segment{start: start, owner: len(blocks) - 1})
		return len(blocks) - 1
	}
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		start, ok := p.startLine(n)
		switch n := n.(type) {
		case *ast.Heading:
			text := headingText(n, body)
			if ok {
				segs = append(segs, segment{start: start, owner: -1})
				found = append(found, Heading{Level: n.Level, Text: text, Line: start + 1})
			}
			path.headings = pushHeading(path.headings, n.Level, text)
			path.path = joinHeadings(path.headings)
			attachTo = -1
		case *ast.ThematicBreak:
			if ok {
				segs = append(segs, segment{start: start, owner: -1})
			}
			attachTo = -1
		case *ast.List:
			attachTo = -1
			for item := n.FirstChild(); item != nil; item = item.NextSibling() {
				if s, ok := p.startLine(item); ok {
					attachTo = add(kindListItem, item, s)
				}
			}
		case *ast.Paragraph:
			attachTo = -1
			if !ok {
				continue
			}
			// A GFM table is a block of its own: code after it stands
			// alone, and lines of prose before it are a paragraph.
			switch t := tableStart(p, n); {
			case t < 0:
				attachTo = add(kindBlock, n, start)
			case t == 0:
				add(kindTable, n, start)
			default:
				add(kindBlock, n, start)
				add(kindTable, n, start+t)
			}
		case *ast.FencedCodeBlock, *ast.CodeBlock:
			if !ok {
				continue
			}
			if attachTo >= 0 {
				blocks[attachTo].nodes = append(blocks[attachTo].nodes, n)
				segs = append(segs, segment{start: start, owner: attachTo})
				continue
			}
			add(kindBlock, n, start)
		default:
			attachTo = -1
			if ok {
				add(kindBlock, n, start)
			}
		}
	}

	// A block ends where the next top-level element after it starts.
	for i := len(segs) - 1; i >= 0; i-- {
		s := segs[i]
		if s.owner >= 0 && (i == len(segs)-1 || segs[i+1].owner != s.owner) {
			b := &blocks[s.owner]
			b.end = max(next-1, b.start)
		}
		next = s.start
	}
	return blocks, found
}

// headingEntry is one level of the heading path.
type headingEntry struct {
	level int
	text  string
}

// pushHeading pops headings at the same or a deeper level and pushes the new
// one.
func pushHeading(stack []headingEntry, level int, text string) []headingEntry {
	for len(stack) > 0 && stack[len(stack)-1].level >= level {
		stack = stack[:len(stack)-1]
	}
	return append(stack, headingEntry{level: level, text: text})
}

// joinHeadings renders a heading path, leaving out empty headings.
func joinHeadings(stack []headingEntry) string {
	var parts []string
	for _, h := range stack {
		if h.text != "" {
			parts = append(parts, h.text)
		}
	}
	return strings.Join(parts, " > ")
}

// headingText returns a heading's source text without markers, its lines
// joined by spaces.
func headingText(h *ast.Heading, body []byte) string {
	lines := h.Lines()
	parts := make([]string, 0, lines.Len())
	for i := range lines.Len() {
		seg := lines.At(i)
		if t := strings.TrimSpace(string(seg.Value(body))); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " ")
}

// notes renders a block's lines as text and splits it into notes.
func (p *parseState) notes(b block) []Note {
	markerAt := 0
	if b.kind == kindListItem {
		markerAt = p.base + b.nodes[0].Pos() - p.lines.start(b.start)
		if b.start == 0 && bytes.HasPrefix(p.src, utf8BOM) {
			markerAt -= len(utf8BOM)
		}
	}
	lines, startLine := p.blockLines(b, markerAt)
	if len(lines) == 0 {
		return nil
	}

	var protected []lineRange
	blockStarts := map[int]bool{}
	for _, n := range b.nodes {
		_ = ast.Walk(n, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if !entering || n.Type() != ast.TypeBlock {
				return ast.WalkContinue, nil
			}
			if pos := n.Pos(); pos >= 0 {
				blockStarts[p.lineOf(pos)-startLine] = true
			}
			if r, ok := p.codeRange(n, b.end); ok {
				protected = append(protected, lineRange{r.first - startLine, r.last - startLine})
			}
			return ast.WalkContinue, nil
		})
	}
	if b.kind == kindTable {
		for i := range lines {
			blockStarts[i] = true
		}
	}
	body := strings.Join(lines, "\n")
	pieces := splitNote(body, p.maxRunes, protected, blockStarts)
	notes := make([]Note, 0, len(pieces))
	for _, pc := range pieces {
		notes = append(notes, Note{Heading: b.heading, Line: startLine + pc.line + 1, Text: pc.text})
	}
	return notes
}

// blockLines returns the lines of block b as its note's text has them, and
// the line of the first: a list item without its marker (at byte markerAt
// of its first line) and indentation, other blocks without the indentation
// their lines share, every line without trailing whitespace, and no blank
// lines first or last. It returns no lines for a blank block.
func (p *parseState) blockLines(b block, markerAt int) ([]string, int) {
	lines := make([]string, 0, b.end-b.start+1)
	for l := b.start; l <= b.end; l++ {
		lines = append(lines, string(p.line(l)))
	}
	if b.kind == kindListItem {
		stripListItem(lines, markerAt)
	}
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	first, last := 0, len(lines)
	for first < last && lines[first] == "" {
		first++
	}
	for last > first && lines[last-1] == "" {
		last--
	}
	lines = lines[first:last]
	if b.kind != kindListItem {
		dedent(lines)
	}
	return lines, b.start + first
}

// lineRange is an inclusive range of lines.
type lineRange struct{ first, last int }

// codeRange returns the source lines of a fenced or indented code block,
// fences included, clipped to the block's last line.
func (p *parseState) codeRange(n ast.Node, end int) (lineRange, bool) {
	pos := n.Pos()
	if pos < 0 {
		return lineRange{}, false
	}
	r := lineRange{first: p.lineOf(pos)}
	lines := n.Lines()
	switch n.(type) {
	case *ast.FencedCodeBlock:
		// The closing fence is the line after the last content line; if the
		// fence was left open that line belongs to something else, and
		// protecting it is harmless.
		r.last = r.first + 1
		if lines.Len() > 0 {
			r.last = p.lineOf(lines.At(lines.Len()-1).Start) + 1
		}
	case *ast.CodeBlock:
		r.last = r.first
		if lines.Len() > 0 {
			r.last = p.lineOf(lines.At(lines.Len() - 1).Start)
		}
	default:
		return lineRange{}, false
	}
	r.last = min(max(r.last, r.first), end)
	return r, true
}
