package markdown

import (
	"bytes"
	"fmt"
	"iter"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"

	"github.com/memminer/memminer/hive"
)

// DefaultMaxNoteRunes is the bound on a note's length used when
// ParseOptions.MaxNoteRunes is zero.
//
// The built-in embedding model reads only the first 128 SentencePiece pieces
// of a text. On memory-style English prose its vocabulary averages about 3.4
// runes per piece (about 2.3 on markdown dense with code and tables), so 128
// pieces cover roughly 430 runes of prose. The note is embedded together with
// its heading path, which costs a few more pieces. A bound of 400 runes keeps
// nearly every prose note inside what the model actually reads, while still
// leaving room for several sentences of context. Typical memory bullets are
// far shorter and are never affected.
const DefaultMaxNoteRunes = 400

// ParseOptions tunes Parse.
type ParseOptions struct {
	// MaxNoteRunes bounds the length of a note in runes; zero means
	// DefaultMaxNoteRunes, and a negative value is an error. Longer blocks
	// are split (see Parse). Fenced and indented code is never split, so a
	// note that holds code can be longer.
	MaxNoteRunes int
}

// MemoryOptions returns the options every memory file is parsed with.
// Mining, merge, remember, memfile, wake-up, the inbox and Git's merge
// driver must cut a file into the same notes: a note's id, a merge's
// alignment of two sides, a duplicate or superseded check all name notes
// as the palace holds them. So none of them chooses its own options; other
// options are for testing the parser.
func MemoryOptions() ParseOptions {
	return ParseOptions{MaxNoteRunes: DefaultMaxNoteRunes}
}

// Parse splits a markdown file into notes.
//
// Chunking rules:
//   - A leading YAML frontmatter block (a first line "---", closed by a line
//     "---" or "...") goes to Document.Frontmatter, decoded by yaml.v3 (so an
//     unquoted date becomes a time.Time), and is not a note. If it does not
//     decode to a mapping but its first line looks like a YAML key
//     ("name: …"), it is broken frontmatter: Parse adds a warning to
//     Document.Warnings and skips those lines. Otherwise the file merely starts
//     with a thematic break and is parsed as markdown.
//   - Each top-level list item is one note, with everything nested in it
//     (sub-lists, paragraphs, code). Each paragraph is one note. Sections are
//     not merged into one note.
//   - Fenced or indented code right after a paragraph or a top-level list
//     item joins that note, so "Build with:" and its fence are one note (code
//     after that code joins too). Code after a heading, a thematic break or
//     any other block is a note of its own.
//   - A blockquote, a table, an HTML block or a link reference definition is
//     one note, its markdown source kept ("> " markers included).
//   - Headings are not notes: they give the notes below them their heading
//     path, every enclosing heading's text (markers stripped) joined by
//     " > "; a heading replaces those of the same or a deeper level. Only
//     top-level headings count. Thematic breaks are not notes.
//   - A note longer than MaxNoteRunes is cut into pieces of at most that many
//     runes. Each cut is made at the last place within the bound of the best
//     kind there is, in this order: a block boundary (blank line, nested list
//     item, table row), a sentence end (".", "!", "?" followed by a space or
//     a line break, but not after "e.g.", an initial or a list number; "。！？"
//     too), a line break, a space. A place that would leave a piece shorter
//     than a quarter of the bound is used only when no other fits. A word
//     longer than the bound is cut between runes. Each piece gets the line
//     where its first character is.
//   - Code is never cut, nor parted from the line that introduces it: no cut
//     inside a code block, right before it, or between words of the line
//     before it (a sentence end there may still be cut). A piece that holds
//     code can therefore be longer than the bound.
//
// Note.Text is the note's markdown source: a list item loses its marker and
// the item's indentation (a "[ ]" or "[x]" checkbox is kept, nested items
// keep their markers), other blocks lose the indentation all their lines
// share, and every line loses trailing whitespace. Note.Line is the 1-based
// line of the note's first character, counting frontmatter lines. Parse
// never returns empty notes, and the same input always gives the same notes.
// It handles CRLF line endings, a UTF-8 byte order mark and a missing final
// newline. The caller should reject input that is not valid UTF-8: Parse
// does not panic on it, but the notes may then hold invalid UTF-8 too.
func Parse(src []byte, opts ParseOptions) (*Document, error) {
	return parse(src, opts, sectionBytes)
}

// Sections parses src as Parse does, a section of the body at a time. It
// returns the document without its notes and headings, and the notes of
// each section in source order; ranging over them adds each section's
// headings to the document. Each section's syntax tree is dropped once its
// notes are made, so a caller that keeps the notes in another form never
// holds the notes of the whole file as Notes (mining a large file does
// this). The sequence can be ranged over once.
func Sections(src []byte, opts ParseOptions) (*Document, iter.Seq[[]Note], error) {
	p, doc, err := startParse(src, opts, sectionBytes)
	if err != nil {
		return nil, nil, err
	}
	return doc, p.sections(doc), nil
}

// sectionBytes is about how large a section of the body Parse parses at
// once.
const sectionBytes = 256 << 10

// parse is Parse with sections of about sectionSize bytes.
func parse(src []byte, opts ParseOptions, sectionSize int) (*Document, error) {
	p, doc, err := startParse(src, opts, sectionSize)
	if err != nil {
		return nil, err
	}
	for notes := range p.sections(doc) {
		doc.Notes = append(doc.Notes, notes...)
	}
	return doc, nil
}

// startParse parses what comes before the markdown body (a byte order
// mark, frontmatter) with sections of about sectionSize bytes. It returns
// the document without its notes and headings, which sections yields.
func startParse(src []byte, opts ParseOptions, sectionSize int) (*parseState, *Document, error) {
	maxRunes := opts.MaxNoteRunes
	if maxRunes < 0 {
		return nil, nil, fmt.Errorf("parse markdown: MaxNoteRunes is %d, want zero (default) or more", maxRunes)
	}
	if maxRunes == 0 {
		maxRunes = DefaultMaxNoteRunes
	}
	blocks := hive.ConflictBlocks(src)
	if len(blocks) > 0 {
		src = blankMarkers(src, blocks)
	}
	p := &parseState{src: src, lines: newLineIndex(src), maxRunes: maxRunes, sectionSize: max(sectionSize, 1), conflicts: blocks}
	doc := &Document{}

	bodyStart := 0
	if bytes.HasPrefix(src, utf8BOM) {
		bodyStart = len(utf8BOM)
	}
	fm, after, warning := parseFrontmatter(src, bodyStart, p.lines)
	if warning != "" {
		doc.Warnings = append(doc.Warnings, warning)
	}
	if after >= 0 {
		doc.Frontmatter = fm
		bodyStart = after
	}
	doc.BodyStart = bodyStart
	return p, doc, nil
}

// sections parses the body of doc a section at a time, yielding each
// section's notes and adding its headings to doc. Each section's syntax
// tree is dropped once its notes are made (the tree of a whole large file
// takes many times its size), and a caller that keeps the notes in
// another form holds only one section's as Notes.
func (p *parseState) sections(doc *Document) iter.Seq[[]Note] {
	return func(yield func([]Note) bool) {
		var path outline
		for start := doc.BodyStart; start < len(p.src); {
			end, root := p.parseSection(start)
			p.base = start
			next := p.lines.count()
			if end < len(p.src) {
				next = p.lines.lineOf(end)
			}
			blocks, headings := p.collect(root, p.src[start:end], &path, next)
			doc.Headings = append(doc.Headings, headings...)
			var notes []Note
			for _, b := range blocks {
				notes = append(notes, p.notes(b)...)
			}
			p.markConflicts(notes)
			if !yield(notes) {
				return
			}
			start = end
		}
	}
}

// parseSection parses the body from byte start of the source to the end
// of a section: to the first heading after p.sectionSize bytes that starts a
// line, at column 0, after a blank line, or to the end of the source. It
// returns where the section ends and its syntax tree.
//
// The tree of a section is the tree of the same lines within the whole
// body: a blank line closes every paragraph, HTML block of types 6 and 7
// and block quote, and then a heading at column 0 closes every list
// (whose tightness therefore does not change) and indented code, and
// every block inside those. Only fenced code and HTML blocks of types 1
// to 5 at the top level can run on past such a heading; a section that
// would end inside one is made longer.
func (p *parseState) parseSection(start int) (int, ast.Node) {
	for size := p.sectionSize; ; size *= 2 {
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

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// markdownParser returns the shared goldmark parser, CommonMark.
// goldmark parsers keep per-call state in a fresh context, so one parser
// serves concurrent calls. GFM tables are found by tableStart: goldmark's
// extension package would compile its linkify regexps at the start-up of
// every memminer command. The parser is built as goldmark.DefaultParser
// builds it, from the parser package: goldmark's root package would add the
// initialisation of its HTML renderer, which mining never uses.
var markdownParser = sync.OnceValue(func() parser.Parser {
	return parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...))
})

// tableStart returns the index, among paragraph n's lines, of the header
// row of a GFM table in it (a row of cells followed by a delimiter row of
// as many cells, such as |---|:--:|), or -1 when it holds none. A table
// runs to the paragraph's end, as in GFM.
func tableStart(p *parseState, n *ast.Paragraph) int {
	body := p.src[p.base:]
	segs := n.Lines()
	for i := 0; i+1 < segs.Len(); i++ {
		hs, ds := segs.At(i), segs.At(i+1)
		header, delim := hs.Value(body), ds.Value(body)
		if cells := tableCells(delim); cells > 0 && isDelimiterRow(delim) && tableCells(header) == cells {
			return i
		}
	}
	return -1
}

// tableCells counts the cells of a table row: the parts between unescaped
// pipes, leading and trailing pipes aside. A row needs at least one pipe.
func tableCells(row []byte) int {
	row = bytes.TrimSpace(row)
	pipes, cells := 0, 1
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			pipes++
			if i > 0 && i < len(row)-1 {
				cells++
			}
		}
	}
	if pipes == 0 {
		return 0
	}
	return cells
}

// isDelimiterRow reports whether row is a GFM delimiter row: cells of
// dashes, each with an optional colon at either end.
func isDelimiterRow(row []byte) bool {
	row = bytes.TrimSpace(row)
	row = bytes.TrimPrefix(row, []byte("|"))
	row = bytes.TrimSuffix(row, []byte("|"))
	for _, cell := range bytes.Split(row, []byte("|")) {
		cell = bytes.TrimSpace(cell)
		cell = bytes.TrimPrefix(cell, []byte(":"))
		cell = bytes.TrimSuffix(cell, []byte(":"))
		if len(cell) == 0 || len(bytes.Trim(cell, "-")) != 0 {
			return false
		}
	}
	return true
}

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

// parseState holds what one Parse call works with.
type parseState struct {
	src      []byte
	base     int // byte offset of the markdown body in src
	lines    lineIndex
	maxRunes int
	// sectionSize is about how many bytes of the body are parsed at once.
	sectionSize int
	// conflicts are the blocks of Git conflict markers in the source,
	// whose marker lines src holds blanked.
	conflicts []hive.MarkerBlock
}

// line returns source line l without its line ending's '\n' and, on the
// first line, without a byte order mark.
func (p *parseState) line(l int) []byte {
	line := p.lines.line(p.src, l)
	if l == 0 {
		line = bytes.TrimPrefix(line, utf8BOM)
	}
	return line
}

// lineOf returns the 0-based source line of a byte offset in the body.
func (p *parseState) lineOf(bodyOff int) int {
	return p.lines.lineOf(p.base + bodyOff)
}

// startLine returns the line where a node starts, looking at its first
// descendants when the node itself has no position.
func (p *parseState) startLine(n ast.Node) (int, bool) {
	for ; n != nil; n = n.FirstChild() {
		if pos := n.Pos(); pos >= 0 {
			return p.lineOf(pos), true
		}
		if n.Type() != ast.TypeBlock {
			break
		}
	}
	return 0, false
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
	lines := make([]string, 0, b.end-b.start+1)
	for l := b.start; l <= b.end; l++ {
		lines = append(lines, string(p.line(l)))
	}
	if b.kind == kindListItem {
		markerAt := p.base + b.nodes[0].Pos() - p.lines.start(b.start)
		if b.start == 0 && bytes.HasPrefix(p.src, utf8BOM) {
			markerAt -= len(utf8BOM)
		}
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
	if first == last {
		return nil
	}
	lines = lines[first:last]
	if b.kind != kindListItem {
		dedent(lines)
	}
	startLine := b.start + first

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
