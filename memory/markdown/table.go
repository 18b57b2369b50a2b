package markdown

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
)

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
