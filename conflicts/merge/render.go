package merge

import (
	"slices"
	"strings"

	"github.com/memminer/memminer/memory/markdown"
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
	d := r.draft(l)
	d.frontmatter(r.fmTheirs)
	if len(d.o.units) > 0 {
		d.after(-1)
	}
	for ui := range d.o.units {
		d.oursUnit(ui)
	}
	d.end()
	return d.w.bytes(d.o.finalEOL || len(d.o.lines) == 0 && d.t.finalEOL)
}

// group is a run of theirs' units between two units of ours: at the
// tail of the section of the unit before, in a section ours does not
// have there, or at the head of the section of the unit after.
type group struct{ tail, section, head []int }

// draft is the merged file being written in one layout.
type draft struct {
	layout
	r    *renderer
	o, t *side
	w    *writer
	// groups are theirs' units keyed by the unit of ours they follow, -1
	// for none; atEnd the units of sections put at the end of the file.
	groups map[int]*group
	atEnd  []int
	// inMerge are the items of ours' units the merge keeps; marked the
	// units of theirs that carry the conflict marker.
	inMerge map[int]item
	marked  map[int]bool
	// last is the last unit of ours written; dropBlankGap is set after a
	// removed unit, whose blank gap goes with it.
	last         int
	dropBlankGap bool
}

// draft starts the merged file in layout l, with theirs' units placed.
func (r *renderer) draft(l layout) *draft {
	d := &draft{layout: l, r: r, o: r.ours, t: r.theirs, w: &writer{}, groups: map[int]*group{}, inMerge: map[int]item{}, marked: map[int]bool{}, last: -1}
	if d.o.eol == "\r\n" {
		d.w.cr = "\r"
	}
	d.place(r.items)
	for _, it := range r.items {
		if it.marked {
			d.marked[it.theirs] = true
		}
	}
	return d
}

// place groups each run of theirs' units by the units of ours around it
// and notes which of ours' units the merge keeps.
func (d *draft) place(items []item) {
	prev := -1
	for i := 0; i < len(items); {
		if it := items[i]; it.ours >= 0 {
			d.inMerge[it.ours] = it
			prev = it.ours
			i++
			continue
		}
		j := i
		for j < len(items) && items[j].ours < 0 {
			j++
		}
		next := -1
		if j < len(items) {
			next = items[j].ours
		}
		d.groups[prev] = d.group(items[i:j], prev, next)
		i = j
	}
}

// group sorts a run of theirs' units between ours' units prev and next
// (-1 for none): a unit under prev's heading joins the tail of its
// section, one under next's the head of that section (while no unit has
// started a section of its own), others make sections of their own there
// or, in a layout with sectionsAtEnd, at the end of the file.
func (d *draft) group(run []item, prev, next int) *group {
	g := &group{}
	for _, it := range run {
		u := d.t.units[it.theirs]
		switch {
		case prev >= 0 && u.heading == d.o.units[prev].heading:
			g.tail = append(g.tail, it.theirs)
		case next >= 0 && u.heading == d.o.units[next].heading && len(g.section) == 0:
			g.head = append(g.head, it.theirs)
		case d.sectionsAtEnd:
			d.atEnd = append(d.atEnd, it.theirs)
		default:
			g.section = append(g.section, it.theirs)
		}
	}
	return g
}

// frontmatter writes the frontmatter the merge took: theirs' lines or
// ours'.
func (d *draft) frontmatter(theirs bool) {
	if theirs {
		for i := 0; i < d.t.bodyLine; i++ {
			d.w.theirs(strings.TrimSuffix(string(d.t.lines[i]), "\r"))
		}
		return
	}
	for i := 0; i < d.o.bodyLine; i++ {
		d.w.ours(string(d.o.lines[i]))
	}
}

// theirsLines returns the lines of theirs' unit ti as the layout writes
// them: with the conflict marker when it is marked, after a thematic
// break when it opens with code that would join the block before.
func (d *draft) theirsLines(ti int) []string {
	lines := d.t.unitLines(d.t.units[ti])
	if d.marked[ti] {
		lines = d.r.markedLines(ti)
	}
	if d.breakCode && startsWithCode(lines) && !d.w.lastHeading() {
		lines = append([]string{"---", ""}, lines...)
	}
	return lines
}

// sepBefore returns the lines to put between what was written and
// theirs' unit ti: its own gap in theirs when that was blank, else
// (a heading came before it there) the gap after it, so that a unit
// of a tight list stays tight.
func (d *draft) sepBefore(ti int) []string {
	if d.blankSeps {
		return []string{""}
	}
	if g := d.t.gapLines(ti); blank(g) {
		return g
	}
	if g := d.t.gapLines(ti + 1); blank(g) && ti+1 < len(d.t.units) {
		return g
	}
	return []string{""}
}

// sepAfter returns the lines to put after theirs' unit ti when one of
// ours follows it: its gap after it in theirs when that was blank.
func (d *draft) sepAfter(ti int) []string {
	if g := d.t.gapLines(ti + 1); blank(g) && !d.blankSeps && ti+1 < len(d.t.units) {
		return g
	}
	return []string{""}
}

// section writes theirs' units of a section ours does not have, each
// after its gap in theirs.
func (d *draft) section(units []int) {
	for _, ti := range units {
		if g := d.t.gapLines(ti); blank(g) {
			d.w.theirs(d.sepBefore(ti)...)
		} else {
			d.sectionGap(g)
		}
		d.w.theirs(d.theirsLines(ti)...)
	}
}

// sectionGap writes gap g of theirs, which holds headings, after one
// blank line and without its leading blank lines.
func (d *draft) sectionGap(g []string) {
	if !d.w.lastBlank() {
		d.w.theirs("")
	}
	if len(d.o.units) == 0 {
		// Appended to a file without notes: its headings are
		// written already.
		g = withoutLines(g, d.o.gapLines(0))
	}
	for len(g) > 0 && strings.TrimSpace(g[0]) == "" {
		g = g[1:]
	}
	d.w.theirs(g...)
}

// after writes theirs' units that follow ours' unit prev (-1: the start
// of the body): the tail of prev's section, then a section of their own.
func (d *draft) after(prev int) {
	g := d.groups[prev]
	if g == nil {
		return
	}
	for _, ti := range g.tail {
		d.w.theirs(d.sepBefore(ti)...)
		d.w.theirs(d.theirsLines(ti)...)
	}
	d.section(g.section)
}

// oursUnit writes ours' unit ui as the merge has it, with the gap before
// it: removed (its lines go, and a blank gap before it), kept, or in
// theirs' version; theirs' units at the head of its section come first,
// those that follow it after.
func (d *draft) oursUnit(ui int) {
	o, t := d.o, d.t
	u := o.units[ui]
	gap := o.gapLines(ui)
	it, ok := d.inMerge[ui]
	if !ok {
		// Removed: its lines go, and the blank lines before it.
		if !blank(gap) {
			d.w.oursRange(o, gapStart(o, ui), u.first)
		}
		d.dropBlankGap = true
		return
	}
	from := gapStart(o, ui)
	if d.dropBlankGap && blank(gap) && d.w.lastBlank() {
		from = u.first
	}
	d.dropBlankGap = false
	d.w.oursRange(o, from, u.first)
	d.head(d.groups[d.last], u)
	if it.theirs >= 0 {
		d.w.theirs(t.unitLines(t.units[it.theirs])...)
	} else {
		d.w.oursRange(o, u.first, u.last+1)
	}
	d.last = ui
	d.after(ui)
}

// head writes group g's units at the head of the section of ours' unit
// u, before it, and a thematic break when u opens with code they would
// take in.
func (d *draft) head(g *group, u unit) {
	if g == nil {
		return
	}
	for _, ti := range g.head {
		d.w.theirs(d.theirsLines(ti)...)
		d.w.theirs(d.sepAfter(ti)...)
	}
	if d.breakCode && len(g.head) > 0 && startsWithCode(d.o.unitLines(u)) {
		d.w.theirs("---", "")
	}
}

// end writes the lines after ours' last unit (or the whole body of a file
// without notes), then the sections moved to the end.
func (d *draft) end() {
	o := d.o
	from := gapStart(o, len(o.units))
	if d.dropBlankGap && blank(o.gapLines(len(o.units))) {
		from = len(o.lines)
	}
	d.w.oursRange(o, from, len(o.lines))
	if len(o.units) == 0 && d.groups[-1] != nil {
		d.section(d.groups[-1].section)
	}
	d.section(d.atEnd)
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
