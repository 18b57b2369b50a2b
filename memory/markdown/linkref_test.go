package markdown

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// blocksOf is the top-level blocks goldmark parses src into with the
// paragraph transformer t: each block's kind and lines.
func blocksOf(src []byte, t parser.ParagraphTransformer) string {
	p := parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...),
		parser.WithInlineParsers(parser.DefaultInlineParsers()...),
		parser.WithParagraphTransformers(util.Prioritized(t, 100)))
	root := p.Parse(text.NewReader(src))
	var b strings.Builder
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		fmt.Fprintf(&b, "%s", n.Kind())
		if n.Type() == ast.TypeBlock {
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				fmt.Fprintf(&b, " %q", seg.Value(src))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestLinkRefTransformerIsGoldmarks: the windowed transformer makes the
// blocks goldmark's own does, around and across its windows.
func TestLinkRefTransformerIsGoldmarks(t *testing.T) {
	defs := func(n int, line string) string { return strings.Repeat(line, n) }
	tests := []struct{ name, src string }{
		{"a few", "[a]: b\n[c]: d\ntext\n"},
		{"many", defs(200, "[a]: b\n")},
		{"many, then text", defs(200, "[a]: b\n") + "the paragraph\ngoes on\n"},
		{"text after one window", defs(linkRefWindow, "[a]: b\n") + "text\n"},
		{"text inside a window", defs(100, "[a]: b\n") + "text\n" + defs(100, "[a]: b\n")},
		{"titles on the next line", defs(150, "[a]: b\n  \"title\"\n")},
		{"titles at every window's end", defs(linkRefWindow-1, "[a]: b\n") + "[t]: u\n'a title'\n" + defs(200, "[x]: y\n")},
		{"a label over two lines", defs(100, "[a\nb]: c\n")},
		{"an unfinished one", defs(100, "[a]: b\n") + "[c]:\n"},
		{"after a blank line", "intro\n\n" + defs(300, "[a]: b\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			if got, want := blocksOf(src, linkRefTransformer{}), blocksOf(src, parser.LinkReferenceParagraphTransformer); got != want {
				t.Errorf("blocks differ\n got: %.2000s\nwant: %.2000s", got, want)
			}
		})
	}
}

// countingRefs counts the lines goldmark's transformer is handed at once.
type countingRefs struct{ calls, most int }

func (c *countingRefs) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	c.calls++
	c.most = max(c.most, node.Lines().Len())
	parser.LinkReferenceParagraphTransformer.Transform(node, reader, pc)
}

// TestLinkRefDefinitionsParseInLinearTime: goldmark's transformer, which
// takes time in the square of the lines it is given, is never given more
// than a window of a paragraph of 100,000 definitions, so a memory file
// of them parses in time proportional to its size.
func TestLinkRefDefinitionsParseInLinearTime(t *testing.T) {
	counting := &countingRefs{}
	saved := linkRefs
	linkRefs = counting
	t.Cleanup(func() { linkRefs = saved })
	const n = 100_000
	doc, err := Parse(bytes.Repeat([]byte("[a]: b\n"), n), MemoryOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Notes) != n || doc.Notes[n-1].Text != "[a]: b" || doc.Notes[n-1].Line != n {
		t.Fatalf("%d notes, the last %+v", len(doc.Notes), doc.Notes[len(doc.Notes)-1])
	}
	if counting.calls == 0 || counting.most > 2*linkRefWindow {
		t.Fatalf("goldmark's transformer was given up to %d lines at once in %d calls, want at most %d", counting.most, counting.calls, 2*linkRefWindow)
	}
}
