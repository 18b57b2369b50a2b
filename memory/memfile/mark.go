package memfile

import (
	"bytes"
	"fmt"
)

// MarkLine returns data with marker added at the end of line (1-based),
// before its line ending and after any trailing blanks are dropped from
// view: every other byte is kept. It is how an inbox item is marked done
// (approved or rejected) without being deleted.
func MarkLine(data []byte, line int, marker string) ([]byte, error) {
	starts := lineStarts(data)
	if line < 1 || line > len(starts) {
		return nil, fmt.Errorf("mark line %d: %w (the file has %d lines)", line, ErrNoNote, len(starts))
	}
	l := lineAt(data, starts, line-1)
	end := starts[line-1] + len(bytes.TrimRight(l, " \t\r\n"))
	out := make([]byte, 0, len(data)+len(marker))
	out = append(out, data[:end]...)
	out = append(out, marker...)
	out = append(out, data[end:]...)
	return out, nil
}
