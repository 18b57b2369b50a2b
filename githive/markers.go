package githive

import (
	"bytes"
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/markdown"
	"github.com/memminer/memminer/merge"
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
	notes := doc.Notes
	lines := bytes.SplitAfter(merged, []byte{'\n'})
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	var starts []int // 0-based first lines of notes and headings
	for _, n := range notes {
		starts = append(starts, n.Line-1)
	}
	for _, h := range doc.Headings {
		starts = append(starts, h.Line-1)
	}
	sort.Ints(starts)
	blank := func(l int) bool { return len(bytes.TrimSpace(lines[l])) == 0 }
	// end returns the line after the last non-blank line of notes[i:j].
	end := func(j int) int {
		last := notes[j-1].Line - 1
		e := len(lines)
		if k := sort.SearchInts(starts, last+1); k < len(starts) {
			e = starts[k]
		}
		for e > last+1 && blank(e-1) {
			e--
		}
		return e
	}
	used := make([]bool, len(notes))
	// find returns notes[i:j] not used yet whose texts are text, with the
	// mark (marked) or without it, searching from `from`.
	find := func(text string, marked bool, from int) (int, int, bool) {
		for i := from; i < len(notes); i++ {
			if used[i] || strings.Contains(notes[i].Text, marker) != marked {
				continue
			}
			for j := i + 1; j <= len(notes); j++ {
				if joinedTexts(notes, i, j, marker) == text {
					return i, j, true
				}
			}
		}
		return 0, 0, false
	}
	type insert struct{ line, seq int }
	var ins []insert
	var texts []string
	add := func(line int, text string) {
		ins = append(ins, insert{line, len(texts)})
		texts = append(texts, text)
	}
	for _, c := range res.Conflicts {
		ti, tj, theirs := 0, 0, false
		if c.Theirs != "" {
			if ti, tj, theirs = find(c.Theirs, true, 0); !theirs {
				return nil, errUnmarkable
			}
		}
		oi, oj, ours := 0, 0, false
		if c.Ours != "" {
			from := 0
			if theirs {
				// This side's version is right before the other's.
				for from = ti; from > 0 && joinedTexts(notes, from, ti, marker) != c.Ours; from-- {
				}
			}
			if oi, oj, ours = find(c.Ours, false, from); !ours || theirs && oj != ti {
				return nil, errUnmarkable
			}
		}
		for k := oi; k < oj; k++ {
			used[k] = true
		}
		for k := ti; k < tj; k++ {
			used[k] = true
		}
		switch {
		case ours && theirs:
			add(notes[oi].Line-1, markerLines[0])
			add(end(oj), markerLines[1])
			add(end(tj), markerLines[2])
		case theirs:
			add(notes[ti].Line-1, markerLines[0])
			add(notes[ti].Line-1, markerLines[1])
			add(end(tj), markerLines[2])
		case ours:
			add(notes[oi].Line-1, markerLines[0])
			add(end(oj), markerLines[1])
			add(end(oj), markerLines[2])
		default:
			return nil, errUnmarkable
		}
	}
	sort.SliceStable(ins, func(a, b int) bool { return ins[a].line < ins[b].line })
	eol := "\n"
	if bytes.Contains(merged, []byte("\r\n")) {
		eol = "\r\n"
	}
	var out []byte
	k := 0
	for l := 0; l <= len(lines); l++ {
		for ; k < len(ins) && ins[k].line == l; k++ {
			if l == len(lines) && len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
				out = append(out, eol...)
			}
			out = append(out, texts[ins[k].seq]+eol...)
		}
		if l < len(lines) {
			out = append(out, lines[l]...)
		}
	}
	if err := sameNotes(merged, out, len(res.Conflicts)); err != nil {
		return nil, err
	}
	return out, nil
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
