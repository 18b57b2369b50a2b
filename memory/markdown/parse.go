package markdown

import (
	"bytes"
	"fmt"
	"iter"
	"sync"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/util"

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
// once; goldmarkSectionBytes how large one goldmark parses after one that
// was not plain, before plainSection tries the next (measured on memory
// files and a corpus of READMEs: smaller loses goldmark's speed, larger
// the plain sections after it).
const (
	sectionBytes         = 256 << 10
	goldmarkSectionBytes = 512
)

// parse is Parse with sections of about sectionSize bytes.
func parse(src []byte, opts ParseOptions, sectionSize int) (*Document, error) {
	p, doc, err := startParse(src, opts, sectionSize)
	if err != nil {
		return nil, err
	}
	for notes := range p.sections(doc) {
		doc.Notes = append(doc.Notes, notes...)
	}
	// A resume point is where a section started, which depends on the
	// section size; Parse's documents are the same whatever it is.
	doc.Resume = nil
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
	return p.sectionsFrom(doc, doc.BodyStart, outline{})
}

// sectionsFrom is sections from byte from of the source, where the
// heading path is path. Once every section is yielded, the document's
// Resume is the last one's.
func (p *parseState) sectionsFrom(doc *Document, from int, path outline) iter.Seq[[]Note] {
	return func(yield func([]Note) bool) {
		last, lastHeadings := -1, []headingEntry(nil)
		for start := from; start < len(p.src); {
			last, lastHeadings = start, append(lastHeadings[:0], path.headings...)
			size := p.sectionSize
			if !p.goldmarkOnly {
				// Plain sections as short as they can be, so a line that
				// is not plain sends little more than its own to goldmark.
				end := sectionEnd(p.src, start, 1)
				if notes, headings, ok := p.plainSection(start, end, &path); ok {
					doc.Headings = append(doc.Headings, headings...)
					if !yield(notes) {
						return
					}
					start = end
					continue
				}
				size = min(size, goldmarkSectionBytes)
			}
			end, root := p.parseSection(start, size)
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
		if last >= 0 {
			doc.Resume = p.resumeAt(doc, last, lastHeadings)
		}
	}
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
		parser.WithParagraphTransformers(util.Prioritized(linkRefTransformer{}, 100)))
})

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
	// goldmarkOnly turns off plainSection, for tests that compare the two.
	goldmarkOnly bool
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
