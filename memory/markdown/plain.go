package markdown

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// plainSection cuts the section of the body from byte start to end into
// notes without goldmark, when every line of it is of a few kinds whose
// blocks need no parser: blank lines, ATX headings, list items and
// paragraphs of plain text (docs/mining.md lists them). It returns false, and
// leaves path as it was, for anything else; the section is then parsed
// with goldmark, which gives the same notes for what this accepts (a test
// checks the two against each other). Memory files are mostly such lines,
// and goldmark's parse was most of a re-mine's work.
func (p *parseState) plainSection(start, end int, path *outline) ([]Note, []Heading, bool) {
	if bytes.IndexByte(p.src[start:end], '\r') >= 0 {
		return nil, nil, false
	}
	first := p.lines.lineOf(start)
	if p.lines.start(first) != start {
		return nil, nil, false // a byte order mark before the body's first line
	}
	next := p.lines.count()
	if end < len(p.src) {
		next = p.lines.lineOf(end)
	}
	c := &plainCut{at: outline{headings: slices.Clone(path.headings), path: path.path}, kind: plainNone, attach: -1}
	for l := first; l < next; l++ {
		line := p.lines.line(p.src, l)
		if f, ok := fenceOpen(line); ok {
			if l, ok = c.code(p, l, next, f); !ok {
				return nil, nil, false
			}
			continue
		}
		if !c.line(l, line) {
			return nil, nil, false
		}
	}
	notes, ok := c.notes(p, next)
	if !ok {
		return nil, nil, false
	}
	*path = c.at
	p.markConflicts(notes)
	return notes, c.headings, true
}

// plainCut is plainSection's state: the blocks and headings found so far,
// the heading path and the open block.
type plainCut struct {
	blocks   []block
	headings []Heading
	at       outline
	kind     int
	col      int  // content column of the open list item
	blank    bool // a blank line came after the open block's last line
	attach   int  // the block that code coming next joins, or -1
}

// open starts a block of kind k at line l.
func (c *plainCut) open(k blockKind, l int) {
	c.blocks = append(c.blocks, block{kind: k, start: l, heading: c.at.path})
	if k == kindListItem {
		c.kind = plainItem
	} else {
		c.kind = plainParagraph
	}
	c.attach, c.blank = len(c.blocks)-1, false
}

// code takes fenced code opening at line l (fence f) and returns the line
// that closes it; false for code left open at the section's end
// (goldmark's to extend) or a line plainSection cannot tell.
func (c *plainCut) code(p *parseState, l, next int, f fence) (int, bool) {
	// Code after a paragraph or an item joins its note, as in collect.
	if c.attach < 0 {
		c.blocks = append(c.blocks, block{kind: kindBlock, start: l, heading: c.at.path})
	}
	for l++; l < next; l++ {
		closed, ok := fenceCloses(p.lines.line(p.src, l), f)
		if !ok {
			return l, false
		}
		if closed {
			break
		}
	}
	if l == next {
		return l, false
	}
	c.kind, c.blank = plainCode, false
	return l, true
}

// line takes line l, other than fenced code; false for a line
// plainSection leaves to goldmark.
func (c *plainCut) line(l int, line []byte) bool {
	if bytes.IndexByte(line, '\t') >= 0 {
		return false
	}
	indent := 0
	for indent < len(line) && line[indent] == ' ' {
		indent++
	}
	rest := string(line[indent:])
	item := listItemText(rest)
	switch {
	case rest == "":
		c.blank = true
	case indent > 0:
		if !c.continues(indent, rest, item) {
			return false
		}
		c.blank = false
	case rest[0] == '#':
		text, level, ok := plainHeading(rest)
		if !ok {
			return false
		}
		c.headings = append(c.headings, Heading{Level: level, Text: text, Line: l + 1})
		c.at.headings = pushHeading(c.at.headings, level, text)
		c.at.path = joinHeadings(c.at.headings)
		c.kind, c.attach = plainNone, -1
	case item != "":
		// An ordered list may interrupt a paragraph only when it starts
		// at 1; otherwise the line would join the paragraph.
		if c.kind == plainParagraph && !c.blank && !interruptsParagraph(rest) {
			return false
		}
		c.open(kindListItem, l)
		c.col = len(rest) - len(item)
	case plainText(rest):
		if c.blank || (c.kind != plainParagraph && c.kind != plainItem) {
			c.open(kindBlock, l)
		}
		// else a paragraph's next line, or an item's lazy line
		c.blank = false
	default:
		return false
	}
	return true
}

// continues reports whether an indented line (rest after indent spaces;
// item its list item's text, if it is one) continues the open block: the
// item's own lines (nested items, paragraphs, lazy lines) or a
// paragraph's next line.
func (c *plainCut) continues(indent int, rest, item string) bool {
	switch {
	case c.kind == plainItem && indent >= c.col && (!c.blank || indent < c.col+4) && (plainText(rest) || item != ""):
		return true
	case c.kind == plainParagraph && !c.blank && plainText(rest):
		return true
	}
	return false
}

// notes ends each block where the next one, or a heading, starts, and
// makes its note; false for a block plainNote cannot make.
func (c *plainCut) notes(p *parseState, next int) ([]Note, bool) {
	notes := make([]Note, 0, len(c.blocks))
	hi := 0
	for i := range c.blocks {
		end := next - 1
		if i+1 < len(c.blocks) {
			end = c.blocks[i+1].start - 1
		}
		for hi < len(c.headings) && c.headings[hi].Line-1 <= c.blocks[i].start {
			hi++
		}
		if hi < len(c.headings) {
			end = min(end, c.headings[hi].Line-2)
		}
		c.blocks[i].end = end
		n, ok := p.plainNote(c.blocks[i])
		if !ok {
			return nil, false
		}
		notes = append(notes, n)
	}
	return notes, true
}

// The open block of plainSection.
const (
	plainNone = iota
	plainParagraph
	plainItem
	plainCode // closed fenced code: nothing continues it
)

// fence is the opening of fenced code: its character and length.
type fence struct {
	char byte
	n    int
}

// fenceOpen returns the fence that line opens at column 0: three or more
// '`' or '~', and for '`' an info string without one.
func fenceOpen(line []byte) (fence, bool) {
	if len(line) < 3 || (line[0] != '`' && line[0] != '~') {
		return fence{}, false
	}
	f := fence{char: line[0]}
	for f.n < len(line) && line[f.n] == f.char {
		f.n++
	}
	if f.n < 3 || (f.char == '`' && bytes.IndexByte(line[f.n:], '`') >= 0) {
		return fence{}, false
	}
	return f, true
}

// fenceCloses reports whether line closes code opened by f: indented by
// fewer than four spaces, as many fence characters or more, then only
// spaces and tabs. It returns false for ok when a tab in the indentation
// would leave that to goldmark's reading of tab stops.
func fenceCloses(line []byte, f fence) (closed, ok bool) {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if i < len(line) && line[i] == '\t' {
		return false, false
	}
	if i >= 4 {
		return false, true
	}
	j := i
	for j < len(line) && line[j] == f.char {
		j++
	}
	return j-i >= f.n && len(bytes.Trim(line[j:], " \t")) == 0, true
}

// plainNote makes the note of a block plainSection found, as notes does
// for goldmark's blocks; a note that would be split is not plain (the
// splitter needs the syntax tree's code and block starts).
func (p *parseState) plainNote(b block) (Note, bool) {
	lines, start := p.blockLines(b, 0) // plain items start at column 0
	text := strings.Join(lines, "\n")
	if text == "" || utf8.RuneCountInString(text) > p.maxRunes {
		return Note{}, false
	}
	return Note{Heading: b.heading, Line: start + 1, Text: text}, true
}

// plainHeading returns the text and level of an ATX heading line with
// text and no '#' after its marker (a closing sequence, an escaped '#').
func plainHeading(line string) (string, int, bool) {
	if !isATXStart([]byte(line)) {
		return "", 0, false
	}
	level := len(line) - len(strings.TrimLeft(line, "#"))
	text := strings.TrimSpace(line[level:])
	if text == "" || strings.IndexByte(text, '#') >= 0 {
		return "", 0, false
	}
	return text, level, true
}

// listItemText returns the plain text after the marker of a list item
// line ("- ", "* ", "+ ", "1. ", "1) " and one space), or "" when line is
// not one.
func listItemText(line string) string {
	i := 0
	switch {
	case line == "":
		return ""
	case line[0] == '-' || line[0] == '*' || line[0] == '+':
		i = 1
	default:
		for i < len(line) && i < 10 && line[i] >= '0' && line[i] <= '9' {
			i++
		}
		if i == 0 || i > 9 || i >= len(line) || (line[i] != '.' && line[i] != ')') {
			return ""
		}
		i++
	}
	if i+1 >= len(line) || line[i] != ' ' || !plainText(line[i+1:]) {
		return ""
	}
	return line[i+1:]
}

// interruptsParagraph reports whether a list item line may start a list
// right after a paragraph's line: a bullet, or a number 1.
func interruptsParagraph(line string) bool {
	return line[0] == '-' || line[0] == '*' || line[0] == '+' || strings.HasPrefix(line, "1.") || strings.HasPrefix(line, "1)")
}

// plainText reports whether s, a line's content after its indentation or
// list marker, starts with text that no block rule reads: a letter, a
// digit not making a list number, a few punctuation marks, inline code,
// strong emphasis, a task's checkbox. Anything else (markers, fences, quotes, HTML, link
// definitions, thematic breaks, setext underlines, table rows) is not
// plain.
func plainText(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return true
	case c >= '0' && c <= '9':
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i == len(s) || (s[i] != '.' && s[i] != ')')
	case c == '"', c == '\'', c == '(', c == '@', c == '/', c == '$':
		return true
	case c == '`':
		return !strings.HasPrefix(s, "```")
	case c == '[':
		// a task's checkbox: no link definition has a space after "]"
		return len(s) > 4 && (s[:4] == "[ ] " || s[:4] == "[x] " || s[:4] == "[X] ") && plainText(s[4:])
	case c == '*':
		return len(s) > 2 && s[1] == '*' && isAlnum(s[2])
	case c >= utf8.RuneSelf:
		r, _ := utf8.DecodeRuneInString(s)
		return unicode.IsLetter(r)
	}
	return false
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
