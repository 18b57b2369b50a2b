package markdown

import (
	"slices"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// TestTablesAsGoldmarkFindsThem checks that tableStart finds the tables
// goldmark's GFM table extension finds, at the same lines.
func TestTablesAsGoldmarkFindsThem(t *testing.T) {
	docs := []string{
		"| a | b |\n|---|---|\n| 1 | 2 |\n",
		"Intro line\n| a | b |\n| --- | :-: |\n| 1 | 2 |\n",
		"a | b\n--- | ---\n1 | 2\n",
		"| one |\n| --- |\n| x |\n",
		"| a | b |\n|---|\n",                      // cell counts differ: no table
		"a | b\nno delimiter\n",                   // no table
		"| a \\| b | c |\n|---|---|\n| x | y |\n", // an escaped pipe is no cell boundary
		"Text\n\n| a | b |\n|:--|--:|\n\nAfter\n",
		"- item\n\n| a | b |\n|---|---|\n| 1 | 2 |\n```\ncode\n```\n",
	}
	gm := goldmark.New(goldmark.WithExtensions(extension.Table)).Parser()
	for _, doc := range docs {
		src := []byte(doc)
		var want []int
		root := gm.Parse(text.NewReader(src))
		lines := newLineIndex(src)
		for n := root.FirstChild(); n != nil; n = n.NextSibling() {
			if n.Kind() == east.KindTable {
				// A table's header row is its first cell's line.
				want = append(want, firstLine(n, lines))
			}
		}
		p := &parseState{src: src, lines: newLineIndex(src)}
		var got []int
		plain := goldmark.New().Parser().Parse(text.NewReader(src))
		for n := plain.FirstChild(); n != nil; n = n.NextSibling() {
			if para, ok := n.(*ast.Paragraph); ok {
				if i := tableStart(p, para); i >= 0 {
					seg := para.Lines().At(i)
					got = append(got, lines.lineOf(seg.Start))
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: tables at lines %v, goldmark's extension %v", doc, got, want)
		}
	}
}

// firstLine is the line of the first text under n.
func firstLine(n ast.Node, lines lineIndex) int {
	for c := n; c != nil; c = c.FirstChild() {
		if c.Type() == ast.TypeInline {
			if tx, ok := c.(*ast.Text); ok {
				return lines.lineOf(tx.Segment.Start)
			}
		}
		if l := c.Lines(); c.Type() == ast.TypeBlock && l != nil && l.Len() > 0 {
			return lines.lineOf(l.At(0).Start)
		}
	}
	return -1
}

func TestTableNotes(t *testing.T) {
	tests := []struct {
		name, src string
		want      []string
	}{
		{"prose before a table is a note of its own", "Intro line\n| a | b |\n|---|---|\n| 1 | 2 |\n",
			[]string{"Intro line", "| a | b |\n|---|---|\n| 1 | 2 |"}},
		{"code after a table stands alone", "| a | b |\n|---|---|\n```\nmake\n```\n",
			[]string{"| a | b |\n|---|---|", "```\nmake\n```"}},
		{"code after a paragraph joins it", "Build with:\n```\nmake\n```\n",
			[]string{"Build with:\n```\nmake\n```"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte(tt.src), ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range doc.Notes {
				got = append(got, n.Text)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("notes %q, want %q", got, tt.want)
			}
		})
	}
}
