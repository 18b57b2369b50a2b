package markdown

import (
	"bytes"
	"encoding/binary"
	"errors"
	"iter"
)

// ErrCannotResume is returned by SectionsFrom for a source the Resume
// does not fit: the caller parses it whole.
var ErrCannotResume = errors.New("markdown: the parse cannot be resumed on this source")

// Resume is where the parse of a file can start again once the file has
// only grown (bytes appended, none changed): the start of its last
// section, with the heading path and body start the parse had there.
// Every section before it ends where it ended in the file it was taken
// from, so its notes are the ones that file's parse gave
// (docs/mining.md, "A file that only grew").
type Resume struct {
	// Offset is the byte offset of the last section's start, the start
	// of a heading line; Line is that line, 1-based.
	Offset, Line int
	// BodyStart is the file's Document.BodyStart.
	BodyStart int
	// MaxNoteRunes is the bound the notes were cut with.
	MaxNoteRunes int
	headings     []headingEntry
}

// resumeVersion is the first byte of a Resume's binary form.
const resumeVersion = 1

// MarshalBinary encodes r.
func (r *Resume) MarshalBinary() ([]byte, error) {
	b := []byte{resumeVersion}
	for _, v := range []int{r.Offset, r.Line, r.BodyStart, r.MaxNoteRunes, len(r.headings)} {
		b = binary.AppendUvarint(b, uint64(v))
	}
	for _, h := range r.headings {
		b = binary.AppendUvarint(b, uint64(h.level))
		b = binary.AppendUvarint(b, uint64(len(h.text)))
		b = append(b, h.text...)
	}
	return b, nil
}

// UnmarshalBinary decodes what MarshalBinary encoded.
func (r *Resume) UnmarshalBinary(b []byte) error {
	bad := errors.New("markdown: bad resume point")
	if len(b) == 0 || b[0] != resumeVersion {
		return bad
	}
	b = b[1:]
	next := func() (int, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > 1<<40 {
			return 0, false
		}
		b = b[n:]
		return int(v), true
	}
	var fields [5]int
	for i := range fields {
		v, ok := next()
		if !ok {
			return bad
		}
		fields[i] = v
	}
	out := Resume{Offset: fields[0], Line: fields[1], BodyStart: fields[2], MaxNoteRunes: fields[3]}
	for range fields[4] {
		level, ok := next()
		if !ok || level < 1 || level > 6 {
			return bad
		}
		n, ok := next()
		if !ok || n > len(b) {
			return bad
		}
		out.headings = append(out.headings, headingEntry{level: level, text: string(b[:n])})
		b = b[n:]
	}
	if len(b) != 0 {
		return bad
	}
	*r = out
	return nil
}

// SectionsFrom is Sections for a file that only grew since its parse gave
// r: src must begin with every byte that file had. It parses from r's
// section on, and the sequence yields the notes from there; the notes
// before r.Line are the earlier parse's. The document holds the headings
// from r on. It returns ErrCannotResume when r does not fit src (another
// bound, frontmatter that ends elsewhere now, conflict markers).
func SectionsFrom(src []byte, opts ParseOptions, r *Resume) (*Document, iter.Seq[[]Note], error) {
	p, doc, err := startParse(src, opts, sectionBytes)
	if err != nil {
		return nil, nil, err
	}
	if r.MaxNoteRunes != p.maxRunes || r.BodyStart != doc.BodyStart || len(p.conflicts) > 0 ||
		r.Offset <= doc.BodyStart || r.Offset >= len(src) || src[r.Offset] != '#' || p.lines.lineOf(r.Offset)+1 != r.Line {
		return nil, nil, ErrCannotResume
	}
	path := outline{headings: append([]headingEntry(nil), r.headings...)}
	path.path = joinHeadings(path.headings)
	return doc, p.sectionsFrom(doc, r.Offset, path), nil
}

// resumeAt returns the Resume of the section that starts at start with
// heading path headings, the last of the source; nil where a later parse
// could not start there: at the body's start (nothing before it to keep),
// with conflict markers (an append can close a block around earlier
// notes), or on a heading line the source does not end (an append could
// make it another line).
func (p *parseState) resumeAt(doc *Document, start int, headings []headingEntry) *Resume {
	if start <= doc.BodyStart || len(p.conflicts) > 0 || bytes.IndexByte(p.src[start:], '\n') < 0 {
		return nil
	}
	return &Resume{Offset: start, Line: p.lines.lineOf(start) + 1, BodyStart: doc.BodyStart, MaxNoteRunes: p.maxRunes,
		headings: append([]headingEntry(nil), headings...)}
}
