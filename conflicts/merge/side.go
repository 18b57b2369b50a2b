package merge

import (
	"bytes"
	"fmt"
	"maps"
	"strings"

	"github.com/memminer/memminer/memory/markdown"
)

// unit is what the merge compares and moves: one note, or the pieces of
// one long block that the parser cut into several notes (they share source
// lines, so they can only move together).
type unit struct {
	heading string
	texts   []string // the notes' texts, in order
	key     string   // heading and texts: equal keys are the same unit
	first   int      // first source line, 0-based
	last    int      // last source line, inclusive
}

func newUnit(heading string, texts []string, first, last int) unit {
	return unit{heading: heading, texts: texts, key: heading + "\x00" + strings.Join(texts, "\x00"), first: first, last: last}
}

// text is the unit's text as a person reads it.
func (u unit) text() string { return strings.Join(u.texts, "\n") }

// side is one parsed version of the file: ours or theirs.
type side struct {
	lines    [][]byte // source lines, each without its "\n" (a "\r" stays)
	finalEOL bool     // the last line ends with a line break
	eol      string   // the file's line ending: "\r\n" or "\n"
	bodyLine int      // first line of the markdown body
	fmRaw    []byte   // the frontmatter block as written (nil when none)
	fm       map[string]string
	units    []unit
}

// parseSide parses content into units with the source lines they cover.
func parseSide(content []byte) (*side, error) {
	doc, err := markdown.Parse(content, markdown.MemoryOptions())
	if err != nil {
		return nil, err
	}
	s := &side{eol: lineEnding(content)}
	s.lines = bytes.Split(content, []byte{'\n'})
	if n := len(s.lines); n > 0 && len(s.lines[n-1]) == 0 {
		s.lines = s.lines[:n-1]
		s.finalEOL = true
	}
	s.bodyLine = bytes.Count(content[:doc.BodyStart], []byte{'\n'})
	if doc.BodyStart > 0 && !bytes.Equal(content[:doc.BodyStart], utf8BOM) {
		s.fmRaw = content[:doc.BodyStart]
	}
	s.fm = markdown.FrontmatterScalars(doc.Frontmatter)
	units, err := groupUnits(doc.Notes, len(s.lines))
	if err != nil {
		return nil, err
	}
	for _, u := range units {
		if err := s.checkSpan(u); err != nil {
			return nil, err
		}
	}
	s.units = units
	return s, nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// noteLine is a note with the source lines it was parsed from.
type noteLine struct {
	heading, text string
	line          int // 1-based, as mine reports it
}

// groupUnits turns notes (1-based start lines, in source order) into units:
// a note covers its start line and one more line per line break in its
// text; notes whose lines overlap belong to one unit.
func groupUnits(notes []markdown.Note, lines int) ([]unit, error) {
	nl := make([]noteLine, len(notes))
	for i, n := range notes {
		nl[i] = noteLine{heading: n.Heading, text: n.Text, line: n.Line}
	}
	return groupNoteLines(nl, lines)
}

func groupNoteLines(notes []noteLine, lines int) ([]unit, error) {
	var units []unit
	for _, n := range notes {
		first := n.line - 1
		last := first + strings.Count(n.text, "\n")
		if first < 0 || (lines >= 0 && last >= lines) {
			return nil, fmt.Errorf("%w: note at line %d runs past the end of the file", ErrUnmappable, n.line)
		}
		if k := len(units) - 1; k >= 0 && first <= units[k].last {
			u := &units[k]
			if u.heading != n.heading {
				return nil, fmt.Errorf("%w: notes under different headings share line %d", ErrUnmappable, n.line)
			}
			*u = newUnit(u.heading, append(u.texts, n.text), u.first, max(u.last, last))
			continue
		}
		units = append(units, newUnit(n.heading, []string{n.text}, first, last))
	}
	return units, nil
}

// checkSpan makes sure a unit's lines really hold its notes: its first and
// last lines end with the first line of its first note and the last line of
// its last note. The parser strips list markers and indentation on the
// left only, so this holds for every note it makes.
func (s *side) checkSpan(u unit) error {
	firstText := u.texts[0]
	if i := strings.IndexByte(firstText, '\n'); i >= 0 {
		firstText = firstText[:i]
	}
	lastText := u.texts[len(u.texts)-1]
	lastText = lastText[strings.LastIndexByte(lastText, '\n')+1:]
	first := strings.TrimRight(string(s.lines[u.first]), " \t\r")
	last := strings.TrimRight(string(s.lines[u.last]), " \t\r")
	if !strings.Contains(first, firstText) || !strings.HasSuffix(last, lastText) {
		return fmt.Errorf("%w: note at line %d does not match its source lines", ErrUnmappable, u.first+1)
	}
	return nil
}

// lineEnding returns the line ending of data's first line break, "\n" when
// it has none.
func lineEnding(data []byte) string {
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// unitLines returns the lines of unit u, without line endings.
func (s *side) unitLines(u unit) []string {
	out := make([]string, 0, u.last-u.first+1)
	for l := u.first; l <= u.last; l++ {
		out = append(out, strings.TrimSuffix(string(s.lines[l]), "\r"))
	}
	return out
}

// gapLines returns the lines between the end of unit i-1 (or the body's
// start) and unit i, without line endings.
func (s *side) gapLines(i int) []string {
	from := s.bodyLine
	if i > 0 {
		from = s.units[i-1].last + 1
	}
	to := len(s.lines)
	if i < len(s.units) {
		to = s.units[i].first
	}
	out := make([]string, 0, max(to-from, 0))
	for l := from; l < to; l++ {
		out = append(out, strings.TrimSuffix(string(s.lines[l]), "\r"))
	}
	return out
}

// blank reports whether every line is empty or white space.
func blank(lines []string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return false
		}
	}
	return true
}

func equalScalars(a, b map[string]string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return maps.Equal(a, b)
}
