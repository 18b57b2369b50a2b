package markdown

import "github.com/memminer/memminer/hive"

// blankMarkers returns a copy of src with the lines of Git conflict
// markers, and the common ancestor's lines of a diff3 block, turned into
// blanks of the same length: every other byte, line and offset stays
// where it is, so the notes of both sides between the markers are parsed
// (each once, as separate blocks) and keep their lines, and the markers
// never become notes.
func blankMarkers(src []byte, blocks []hive.MarkerBlock) []byte {
	out := append([]byte(nil), src...)
	idx := newLineIndex(out)
	blank := func(l int) {
		start := idx.start(l)
		for i := start; i < len(out) && out[i] != '\n' && out[i] != '\r'; i++ {
			out[i] = ' '
		}
	}
	for _, b := range blocks {
		blank(b.Start)
		blank(b.Mid)
		blank(b.End)
		if b.Base >= 0 {
			for l := b.Base; l < b.Mid; l++ {
				blank(l)
			}
		}
	}
	return out
}

// markConflicts sets Conflict on the notes that start inside a block of
// conflict markers.
func (p *parseState) markConflicts(notes []Note) {
	if len(p.conflicts) == 0 {
		return
	}
	for i := range notes {
		l := notes[i].Line - 1
		for _, b := range p.conflicts {
			if l > b.Start && l < b.End {
				notes[i].Conflict = true
				break
			}
		}
	}
}
