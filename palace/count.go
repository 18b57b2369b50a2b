package palace

import (
	"bytes"
	"strings"
)

// CountInTexts counts the occurrences of s in the texts of wing's notes
// (not their headings). A frozen wing is read as it is held, never
// thawed, so a status can count over every wing without loading them
// whole. s must not match across a note's id (hex) and text.
func (p *Palace) CountInTexts(wingID, s string) int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	w, ok := p.wings[wingID]
	switch {
	case !ok || s == "":
		return 0
	case w.fz != nil:
		return bytes.Count(w.fz.strs, []byte(s))
	}
	n := 0
	for sn := range w.lex.allNotes() {
		n += strings.Count(sn.text, s)
	}
	return n
}
