// Package memfile edits an agent's memory file the one way memminer
// writes memory: it appends a dated list item, optionally under a heading,
// and marks an old note superseded, changing no byte it did not mean to.
// Writes are atomic (temporary file, fsync, rename) and keep the file's
// mode and owner; a writer takes the directory's advisory lock and checks
// that the file is still the version it read.
package memfile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/markdown"
)

// Errors callers tell apart.
var (
	// ErrNotText means a file or a note is not UTF-8 text: invalid
	// UTF-8, or a NUL byte.
	ErrNotText = errors.New("not UTF-8 text")
	// ErrTooLarge means a file is larger than the limit it is read with.
	ErrTooLarge = errors.New("file too large")
	// ErrNotRegular means the path names a directory, device or other
	// non-regular file: hivefile's rule, the one every hive read follows.
	ErrNotRegular = hivefile.ErrNotRegular
	// ErrChanged means the file changed between the read and the write.
	ErrChanged = errors.New("file changed since it was read")
	// ErrNoNote means a line given to MarkSuperseded does not exist.
	ErrNoNote = errors.New("no such line")
	// ErrAlreadySuperseded means the line already carries a superseded marker.
	ErrAlreadySuperseded = errors.New("already marked superseded")
	// ErrUnsafeAppend means the item would not be a note of its own where
	// it is appended (the file ends inside a code block, say).
	ErrUnsafeAppend = errors.New("appended item would not be a note of its own")
)

// Item is one note to append.
type Item struct {
	// Text is the note; its lines after the first become indented
	// continuation lines of one list item. It must not be blank.
	Text string
	// Tags are added as #tag after the text.
	Tags []string
	// Date is the YYYY-MM-DD written as "(added Date)".
	Date string
}

// Lines renders the item as list-item lines without line endings:
// "- TEXT #tag (added DATE)", continuation lines indented by two spaces.
func (it Item) Lines() []string {
	text := strings.ReplaceAll(strings.TrimSpace(it.Text), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	suffix := ""
	for _, t := range it.Tags {
		suffix += " #" + t
	}
	if it.Date != "" {
		suffix += govern.AddedMarker(it.Date)
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		switch {
		case i == 0:
			l = "- " + l
		case l != "":
			l = "  " + l
		}
		out[i] = l
	}
	out[len(out)-1] += suffix
	return out
}

// lineEnding is the file's line ending: "\r\n" when its first line ends so,
// else "\n".
func lineEnding(data []byte) string {
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// lineStarts returns the byte offset of every line's start; a final line
// ending opens no new line.
func lineStarts(data []byte) []int {
	starts := []int{}
	if len(data) > 0 {
		starts = append(starts, 0)
	}
	for i, b := range data {
		if b == '\n' && i+1 < len(data) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// Append returns data with it appended: under the first heading whose text
// is heading (compared without case), after the section's last line that is
// not blank, or at the end of the file when heading is empty. A heading the
// file lacks is added at its end ("## heading", after a blank line). Every
// byte of data is kept, in order; the file's line ending is used, and a file
// without a final line ending stays without one. line is the 1-based line
// where the item starts in the result.
//
// The result is parsed back: if the item is not a note of its own, starting
// at line (the file ends inside a fenced code block, say), Append fails with
// ErrUnsafeAppend.
func Append(data []byte, heading string, it Item) (out []byte, line int, err error) {
	if strings.TrimSpace(it.Text) == "" {
		return nil, 0, errors.New("append: empty note")
	}
	if err := CheckText([]byte(it.Text)); err != nil {
		return nil, 0, fmt.Errorf("append: note: %w", err)
	}
	doc, err := markdown.Parse(data, markdown.MemoryOptions())
	if err != nil {
		return nil, 0, fmt.Errorf("append: %w", err)
	}
	eol := lineEnding(data)
	starts := lineStarts(data)
	item := it.Lines()
	heading = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(heading), "#"))

	// at is the 0-based line after which the item goes; -1 means the end
	// of the file.
	at, newHeading := -1, heading != ""
	if heading != "" {
		for i, h := range doc.Headings {
			if !strings.EqualFold(h.Text, heading) {
				continue
			}
			newHeading = false
			end := len(starts) // the section ends before the next heading of its level or above
			for _, next := range doc.Headings[i+1:] {
				if next.Level <= h.Level {
					end = next.Line - 1
					break
				}
			}
			at = h.Line - 1
			for l := end - 1; l >= h.Line-1; l-- {
				if len(bytes.TrimSpace(lineAt(data, starts, l))) > 0 {
					at = l
					break
				}
			}
			if at == len(starts)-1 {
				at = -1
			}
			break
		}
	}

	var ins []string
	if newHeading {
		if len(data) > 0 && !lastLineBlank(data, starts) {
			ins = append(ins, "")
		}
		ins = append(ins, "## "+heading)
	}
	ins = append(ins, item...)

	var b bytes.Buffer
	b.Grow(len(data) + len(strings.Join(ins, eol)) + 2*len(eol))
	if at >= 0 {
		// Insert after line at: every inserted line takes a line ending.
		cut := starts[at+1]
		b.Write(data[:cut])
		for _, l := range ins {
			b.WriteString(l + eol)
		}
		b.Write(data[cut:])
		line = at + 2
	} else {
		b.Write(data)
		finalEOL := len(data) == 0 || data[len(data)-1] == '\n'
		if !finalEOL {
			// Kept without a final line ending: each inserted line is
			// preceded by one instead.
			for _, l := range ins {
				b.WriteString(eol + l)
			}
		} else {
			for _, l := range ins {
				b.WriteString(l + eol)
			}
		}
		line = len(starts) + 1 + len(ins) - len(item)
	}
	out = b.Bytes()
	if err := checkAppended(doc, out, line, item[0]); err != nil {
		return nil, 0, err
	}
	return out, line, nil
}

func lineAt(data []byte, starts []int, l int) []byte {
	end := len(data)
	if l+1 < len(starts) {
		end = starts[l+1]
	}
	return data[starts[l]:end]
}

func lastLineBlank(data []byte, starts []int) bool {
	if len(starts) == 0 {
		return true
	}
	return len(bytes.TrimSpace(lineAt(data, starts, len(starts)-1))) == 0
}

// checkAppended parses out and checks that a note starts at line with the
// item's first line, and that every note of the file before (doc) is still
// there as it was: an item that opened a code fence would swallow what
// follows it.
func checkAppended(doc *markdown.Document, out []byte, line int, first string) error {
	after, err := markdown.Parse(out, markdown.MemoryOptions())
	if err != nil {
		return fmt.Errorf("append: %w", err)
	}
	want := strings.TrimSpace(strings.TrimPrefix(first, "- "))
	found := false
	texts := map[string]int{}
	for _, n := range after.Notes {
		if n.Line == line && strings.HasPrefix(n.Text, firstWords(want)) {
			found = true
			continue
		}
		texts[n.Text]++
	}
	if !found {
		return fmt.Errorf("append at line %d: %w (does the file end inside a code block or an HTML block?)", line, ErrUnsafeAppend)
	}
	for _, n := range doc.Notes {
		if texts[n.Text] == 0 {
			return fmt.Errorf("append at line %d: %w: it would change the note at line %d (an unclosed code fence in the note?)", line, ErrUnsafeAppend, n.Line)
		}
		texts[n.Text]--
	}
	return nil
}

// firstWords is a prefix of s that mine keeps as written: the note may be
// split when long, and its text loses trailing whitespace.
func firstWords(s string) string {
	r := []rune(s)
	if len(r) > 40 {
		r = r[:40]
	}
	return strings.TrimRight(string(r), " \t")
}

// SupersededMarker is what MarkSuperseded adds to a note's first line.
func SupersededMarker(date string) string { return " (superseded " + date + ")" }

// MarkSuperseded returns data with " (superseded DATE)" added at the end of
// 1-based line (before any trailing whitespace and the line ending), and
// every other byte kept. A note must start at line; one governance already
// reads as superseded (IsSuperseded) fails with ErrAlreadySuperseded.
func MarkSuperseded(data []byte, line int, date string) ([]byte, error) {
	starts := lineStarts(data)
	if line < 1 || line > len(starts) {
		return nil, fmt.Errorf("mark line %d superseded: %w (the file has %d lines)", line, ErrNoNote, len(starts))
	}
	superseded, ok, err := IsSuperseded(data, line)
	switch {
	case err != nil:
		return nil, fmt.Errorf("mark line %d superseded: %w", line, err)
	case !ok:
		return nil, fmt.Errorf("mark line %d superseded: %w (no note starts there)", line, ErrNoNote)
	case superseded:
		return nil, fmt.Errorf("mark line %d superseded: %w", line, ErrAlreadySuperseded)
	}
	l := lineAt(data, starts, line-1)
	end := starts[line-1] + len(bytes.TrimRight(l, " \t\r\n"))
	marker := SupersededMarker(date)
	out := make([]byte, 0, len(data)+len(marker))
	out = append(out, data[:end]...)
	out = append(out, marker...)
	out = append(out, data[end:]...)
	return out, nil
}

// IsSuperseded reports whether the note starting at 1-based line of data
// is superseded by governance's rule (govern.Classify: its own markers,
// its headings, the file's frontmatter), and whether a note starts there.
func IsSuperseded(data []byte, line int) (superseded, found bool, err error) {
	doc, err := markdown.Parse(data, markdown.MemoryOptions())
	if err != nil {
		return false, false, err
	}
	for _, n := range doc.Notes {
		if n.Line == line {
			f, _ := govern.ParseFile(doc.Frontmatter)
			return govern.Classify(f, n.Heading, n.Text).Status == govern.Superseded, true, nil
		}
	}
	return false, false, nil
}
