package githive

import (
	"bytes"
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/memminer/memminer/conflicts/merge"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/markdown"
)

// errUnmarkable means the conflicts of a merge could not be found in its
// result to be put between markers.
var errUnmarkable = errors.New("the merge's conflicts could not be marked in its result")

// markConflicts puts each conflict of res between Git's conflict markers
// in res.Merged: this side's version between "<<<<<<< ours" and
// "=======", the other side's (carrying marker, the merge's mark) between
// that and ">>>>>>> theirs"; a side that removed the note has nothing
// there. The result must parse, markers aside, to the same notes.
func markConflicts(res *merge.Result, marker string) ([]byte, error) {
	merged := res.Merged
	doc, err := markdown.Parse(merged, markdown.MemoryOptions())
	if err != nil {
		return nil, err
	}
	m := newMarking(merged, doc, marker)
	for _, c := range res.Conflicts {
		if err := m.mark(c); err != nil {
			return nil, err
		}
	}
	out := m.render(merged)
	if err := sameNotes(merged, out, len(res.Conflicts)); err != nil {
		return nil, err
	}
	return out, nil
}

// marking is markConflicts' work on one merged file: its lines and
// notes, the notes already placed between markers, and the marker lines
// to insert.
type marking struct {
	notes  []markdown.Note
	lines  [][]byte
	starts []int // 0-based first lines of notes and headings, sorted
	used   []bool
	marker string
	ins    []markerInsert
}

// markerInsert is a marker line to insert before line.
type markerInsert struct {
	line int
	text string
}

func newMarking(merged []byte, doc *markdown.Document, marker string) *marking {
	m := &marking{notes: doc.Notes, lines: bytes.SplitAfter(merged, []byte{'\n'}), used: make([]bool, len(doc.Notes)), marker: marker}
	if n := len(m.lines); n > 0 && len(m.lines[n-1]) == 0 {
		m.lines = m.lines[:n-1]
	}
	for _, n := range doc.Notes {
		m.starts = append(m.starts, n.Line-1)
	}
	for _, h := range doc.Headings {
		m.starts = append(m.starts, h.Line-1)
	}
	sort.Ints(m.starts)
	return m
}

// end returns the line after the last non-blank line of notes[i:j].
func (m *marking) end(j int) int {
	last := m.notes[j-1].Line - 1
	e := len(m.lines)
	if k := sort.SearchInts(m.starts, last+1); k < len(m.starts) {
		e = m.starts[k]
	}
	for e > last+1 && len(bytes.TrimSpace(m.lines[e-1])) == 0 {
		e--
	}
	return e
}

// find returns notes[i:j] not used yet whose texts are text, with the
// mark (marked) or without it, searching from `from`.
func (m *marking) find(text string, marked bool, from int) (int, int, bool) {
	for i := from; i < len(m.notes); i++ {
		if m.used[i] || strings.Contains(m.notes[i].Text, m.marker) != marked {
			continue
		}
		for j := i + 1; j <= len(m.notes); j++ {
			if joinedTexts(m.notes, i, j, m.marker) == text {
				return i, j, true
			}
		}
	}
	return 0, 0, false
}

// mark finds conflict c's two sides among the notes and places the
// marker lines around them.
func (m *marking) mark(c merge.Conflict) error {
	ti, tj, theirs := 0, 0, false
	if c.Theirs != "" {
		if ti, tj, theirs = m.find(c.Theirs, true, 0); !theirs {
			return errUnmarkable
		}
	}
	oi, oj, ours := 0, 0, false
	if c.Ours != "" {
		from := 0
		if theirs {
			// This side's version is right before the other's.
			for from = ti; from > 0 && joinedTexts(m.notes, from, ti, m.marker) != c.Ours; from-- {
			}
		}
		if oi, oj, ours = m.find(c.Ours, false, from); !ours || theirs && oj != ti {
			return errUnmarkable
		}
	}
	for k := oi; k < oj; k++ {
		m.used[k] = true
	}
	for k := ti; k < tj; k++ {
		m.used[k] = true
	}
	var at [3]int // where each of the three marker lines goes
	switch {
	case ours && theirs:
		at = [3]int{m.notes[oi].Line - 1, m.end(oj), m.end(tj)}
	case theirs:
		at = [3]int{m.notes[ti].Line - 1, m.notes[ti].Line - 1, m.end(tj)}
	case ours:
		at = [3]int{m.notes[oi].Line - 1, m.end(oj), m.end(oj)}
	default:
		return errUnmarkable
	}
	for i, line := range at {
		m.ins = append(m.ins, markerInsert{line, markerLines[i]})
	}
	return nil
}

// render is merged with the marker lines inserted, in merged's line
// endings.
func (m *marking) render(merged []byte) []byte {
	ins := m.ins
	sort.SliceStable(ins, func(a, b int) bool { return ins[a].line < ins[b].line })
	eol := "\n"
	if bytes.Contains(merged, []byte("\r\n")) {
		eol = "\r\n"
	}
	var out []byte
	k := 0
	for l := 0; l <= len(m.lines); l++ {
		for ; k < len(ins) && ins[k].line == l; k++ {
			if l == len(m.lines) && len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
				out = append(out, eol...)
			}
			out = append(out, ins[k].text+eol...)
		}
		if l < len(m.lines) {
			out = append(out, m.lines[l]...)
		}
	}
	return out
}

// sameNotes checks that marked parses to the notes of merged and holds
// one block of markers per conflict.
func sameNotes(merged, marked []byte, conflicts int) error {
	if len(hive.ConflictBlocks(marked)) != conflicts {
		return errUnmarkable
	}
	a, err := markdown.Parse(merged, markdown.MemoryOptions())
	if err != nil {
		return err
	}
	b, err := markdown.Parse(marked, markdown.MemoryOptions())
	if err != nil {
		return err
	}
	if !slices.EqualFunc(a.Notes, b.Notes, func(x, y markdown.Note) bool { return x.Heading == y.Heading && x.Text == y.Text }) {
		return errUnmarkable
	}
	return nil
}
