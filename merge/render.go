package merge

import (
	"slices"
	"strings"

	"github.com/memminer/memminer/markdown"
)

// renderer lays out the merged units on ours' lines: ours' bytes are kept
// as they are (headings, blank lines, line endings), units of theirs are
// written in ours' line ending where they belong.
type renderer struct {
	ours, theirs *side
	items        []item
	marker       string
	fmTheirs     bool
}

// layout is one way of placing theirs' units; render tries them in turn
// until the result parses back to exactly the merged notes.
type layout struct {
	// blankSeps separates inserted units by one blank line instead of the
	// lines that separated them in theirs.
	blankSeps bool
	// sectionsAtEnd puts sections only theirs has at the end of the file.
	sectionsAtEnd bool
	// breakCode puts a thematic break before code that the merge places
	// right after a block of the other side, which it would join.
	breakCode bool
}

var layouts = []layout{{}, {blankSeps: true}, {blankSeps: true, breakCode: true}, {blankSeps: true, sectionsAtEnd: true, breakCode: true}}

// startsWithCode reports whether a unit's lines open with a code fence.
func startsWithCode(lines []string) bool {
	if len(lines) == 0 {
		return false
	}
	first := strings.TrimLeft(lines[0], " ")
	return strings.HasPrefix(first, "```") || strings.HasPrefix(first, "~~~")
}

func (r *renderer) render() ([]byte, error) {
	want, err := r.expected()
	if err != nil {
		return nil, err
	}
	for _, l := range layouts {
		out := r.layout(l)
		got, err := markdown.Parse(out, markdown.MemoryOptions())
		if err == nil && sameNotes(got.Notes, want) {
			return out, nil
		}
	}
	return nil, ErrUnrenderable
}

// expected returns the notes the merged file must parse to.
func (r *renderer) expected() ([]Note, error) {
	var want []Note
	for _, it := range r.items {
		switch {
		case it.marked:
			doc, err := markdown.Parse([]byte(strings.Join(r.markedLines(it.theirs), "\n")), markdown.MemoryOptions())
			if err != nil {
				return nil, err
			}
			for _, n := range doc.Notes {
				want = append(want, Note{Heading: r.theirs.units[it.theirs].heading, Text: n.Text})
			}
		case it.theirs >= 0:
			want = appendUnit(want, r.theirs.units[it.theirs])
		default:
			want = appendUnit(want, r.ours.units[it.ours])
		}
	}
	return want, nil
}

func appendUnit(notes []Note, u unit) []Note {
	for _, t := range u.texts {
		notes = append(notes, Note{Heading: u.heading, Text: t})
	}
	return notes
}

func sameNotes(got []markdown.Note, want []Note) bool {
	return slices.EqualFunc(got, want, func(g markdown.Note, w Note) bool { return g.Heading == w.Heading && g.Text == w.Text })
}

// markedLines returns theirs' unit t with the conflict marker at the end of
// its first line, or as a paragraph of its own before a unit that starts
// with a code fence.
func (r *renderer) markedLines(t int) []string {
	lines := r.theirs.unitLines(r.theirs.units[t])
	first := strings.TrimLeft(lines[0], " \t-*+0123456789.)")
	if strings.HasPrefix(first, "```") || strings.HasPrefix(first, "~~~") {
		return append([]string{r.marker, ""}, lines...)
	}
	lines[0] = strings.TrimRight(lines[0], " \t") + " " + r.marker
	return lines
}

// layout writes the merged file.
func (r *renderer) layout(l layout) []byte {
	o, t := r.ours, r.theirs
	w := &writer{}
	if o.eol == "\r\n" {
		w.cr = "\r"
	}
	if r.fmTheirs {
		for i := 0; i < t.bodyLine; i++ {
			w.theirs(strings.TrimSuffix(string(t.lines[i]), "\r"))
		}
	} else {
		for i := 0; i < o.bodyLine; i++ {
			w.ours(string(o.lines[i]))
		}
	}

	// Theirs' units between two units of ours (prev, next: -1 for none):
	// at the tail of prev's section, in a section ours does not have
	// there, or at the head of next's section.
	type group struct{ tail, section, head []int }
	groups := map[int]*group{} // keyed by the ours unit they follow
	var atEnd []int
	inMerge := map[int]item{}
	prev := -1
	for i := 0; i < len(r.items); {
		if it := r.items[i]; it.ours >= 0 {
			inMerge[it.ours] = it
			prev = it.ours
			i++
			continue
		}
		j := i
		for j < len(r.items) && r.items[j].ours < 0 {
			j++
		}
		next := -1
		if j < len(r.items) {
			next = r.items[j].ours
		}
		g := &group{}
		for _, it := range r.items[i:j] {
			u := t.units[it.theirs]
			switch {
			case prev >= 0 && u.heading == o.units[prev].heading:
				g.tail = append(g.tail, it.theirs)
			case next >= 0 && u.heading == o.units[next].heading && len(g.section) == 0:
				g.head = append(g.head, it.theirs)
			case l.sectionsAtEnd:
				atEnd = append(atEnd, it.theirs)
			default:
				g.section = append(g.section, it.theirs)
			}
		}
		groups[prev] = g
		i = j
	}
	marked := map[int]bool{}
	for _, it := range r.items {
		if it.marked {
			marked[it.theirs] = true
		}
	}
	unitLines := func(ti int) []string {
		lines := t.unitLines(t.units[ti])
		if marked[ti] {
			lines = r.markedLines(ti)
		}
		if l.breakCode && startsWithCode(lines) && !w.lastHeading() {
			lines = append([]string{"---", ""}, lines...)
		}
		return lines
	}
	// sepBefore returns the lines to put between what was written and
	// theirs' unit ti: its own gap in theirs when that was blank, else
	// (a heading came before it there) the gap after it, so that a unit
	// of a tight list stays tight.
	sepBefore := func(ti int) []string {
		if l.blankSeps {
			return []string{""}
		}
		if g := t.gapLines(ti); blank(g) {
			return g
		}
		if g := t.gapLines(ti + 1); blank(g) && ti+1 < len(t.units) {
			return g
		}
		return []string{""}
	}
	sepAfter := func(ti int) []string {
		if g := t.gapLines(ti + 1); blank(g) && !l.blankSeps && ti+1 < len(t.units) {
			return g
		}
		return []string{""}
	}
	writeSection := func(units []int) {
		for _, ti := range units {
			g := t.gapLines(ti)
			if blank(g) {
				w.theirs(sepBefore(ti)...)
			} else {
				if !w.lastBlank() {
					w.theirs("")
				}
				if len(o.units) == 0 {
					// Appended to a file without notes: its headings are
					// written already.
					g = withoutLines(g, o.gapLines(0))
				}
				for len(g) > 0 && strings.TrimSpace(g[0]) == "" {
					g = g[1:]
				}
				w.theirs(g...)
			}
			w.theirs(unitLines(ti)...)
		}
	}
	writeAfter := func(prev int) {
		g := groups[prev]
		if g == nil {
			return
		}
		for _, ti := range g.tail {
			w.theirs(sepBefore(ti)...)
			w.theirs(unitLines(ti)...)
		}
		writeSection(g.section)
	}

	if len(o.units) > 0 {
		writeAfter(-1)
	}
	last := -1
	dropBlankGap := false
	for ui, u := range o.units {
		gap := o.gapLines(ui)
		it, ok := inMerge[ui]
		if !ok {
			// Removed: its lines go, and the blank lines before it.
			if !blank(gap) {
				w.oursRange(o, gapStart(o, ui), u.first)
			}
			dropBlankGap = true
			continue
		}
		from := gapStart(o, ui)
		if dropBlankGap && blank(gap) && w.lastBlank() {
			from = u.first
		}
		dropBlankGap = false
		w.oursRange(o, from, u.first)
		if g := groups[last]; g != nil {
			for _, ti := range g.head {
				w.theirs(unitLines(ti)...)
				w.theirs(sepAfter(ti)...)
			}
		}
		if l.breakCode && groups[last] != nil && len(groups[last].head) > 0 && startsWithCode(o.unitLines(u)) {
			w.theirs("---", "")
		}
		if it.theirs >= 0 {
			w.theirs(t.unitLines(t.units[it.theirs])...)
		} else {
			w.oursRange(o, u.first, u.last+1)
		}
		last = ui
		writeAfter(ui)
	}
	// The lines after the last unit (or the whole body of a file without
	// notes), then the sections moved to the end.
	from := gapStart(o, len(o.units))
	if dropBlankGap && blank(o.gapLines(len(o.units))) {
		from = len(o.lines)
	}
	w.oursRange(o, from, len(o.lines))
	if len(o.units) == 0 && groups[-1] != nil {
		writeSection(groups[-1].section)
	}
	writeSection(atEnd)
	final := o.finalEOL || len(o.lines) == 0 && t.finalEOL
	return w.bytes(final)
}

// withoutLines drops from lines the non-blank ones that written holds, in
// order, from the start.
func withoutLines(lines, written []string) []string {
	var out []string
	k := 0
	for _, l := range lines {
		for k < len(written) && strings.TrimSpace(written[k]) == "" {
			k++
		}
		if strings.TrimSpace(l) != "" && k < len(written) && strings.TrimSpace(written[k]) == strings.TrimSpace(l) {
			k++
			continue
		}
		out = append(out, l)
	}
	return out
}

// gapStart returns the first line of the gap before unit i of s.
func gapStart(s *side, i int) int {
	if i == 0 {
		return s.bodyLine
	}
	return s.units[i-1].last + 1
}

// writer collects the merged file's lines.
type writer struct {
	lines []string
	cr    string // "\r" when the file's line ending is CRLF
}

// ours adds lines of ours as they are (with any "\r").
func (w *writer) ours(lines ...string) { w.lines = append(w.lines, lines...) }

func (w *writer) oursRange(s *side, from, to int) {
	for i := from; i < to; i++ {
		w.lines = append(w.lines, string(s.lines[i]))
	}
}

// theirs adds lines given without line endings, in ours' line ending.
func (w *writer) theirs(lines ...string) {
	for _, l := range lines {
		w.lines = append(w.lines, l+w.cr)
	}
}

// lastHeading reports whether the last line written is an ATX heading, or
// nothing was: code there is a note of its own anyway.
func (w *writer) lastHeading() bool {
	for i := len(w.lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(w.lines[i]); l != "" {
			return strings.HasPrefix(l, "#")
		}
	}
	return true
}

func (w *writer) lastBlank() bool {
	return len(w.lines) == 0 || strings.TrimSpace(w.lines[len(w.lines)-1]) == ""
}

func (w *writer) bytes(finalEOL bool) []byte {
	out := strings.Join(w.lines, "\n")
	if finalEOL && len(w.lines) > 0 {
		out += "\n"
	}
	return []byte(out)
}
