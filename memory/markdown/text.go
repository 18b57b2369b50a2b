package markdown

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// TextError says why content is not UTF-8 text: binary files and other
// encodings would parse, and mine, as noise.
type TextError struct {
	// Binary is set for a NUL byte, else the content is not valid UTF-8.
	Binary bool
	// Offset is the byte offset of the first bad byte, Line its 1-based line.
	Offset, Line int
}

func (e *TextError) Error() string {
	if e.Binary {
		return fmt.Sprintf("looks like binary data (NUL byte at offset %d)", e.Offset)
	}
	return fmt.Sprintf("not valid UTF-8 (first bad byte at offset %d, line %d)", e.Offset, e.Line)
}

// CheckText returns a *TextError when data is not UTF-8 text: it holds a
// NUL byte or is not valid UTF-8.
func CheckText(data []byte) error {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return &TextError{Binary: true, Offset: i, Line: bytes.Count(data[:i], []byte{'\n'}) + 1}
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, size := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return &TextError{Offset: off, Line: bytes.Count(data[:off], []byte{'\n'}) + 1}
	}
	return nil
}
