package merge

import (
	"slices"

	"github.com/memminer/memminer/internal/words"
)

// opKind is what one side did to a base unit.
type opKind int

const (
	kept opKind = iota
	changed
	deleted
)

// edits is one side's changes to the base: for each base unit what became
// of it (and the side's unit it became), and the units the side added,
// each anchored before a base unit (len(base) means at the end).
type edits struct {
	kind    []opKind
	to      []int // side unit of each kept or changed base unit, else -1
	inserts [][]int
}

// diff compares the side's units against the base's: units with the same
// key are matched in order (longest common subsequence); between matches,
// a removed base unit and an added side unit under the same heading with
// similar text are taken for one unit changed, the rest for removals and
// additions.
func diff(base, side []unit) edits {
	e := edits{
		kind:    make([]opKind, len(base)),
		to:      make([]int, len(base)),
		inserts: make([][]int, len(base)+1),
	}
	for i := range e.to {
		e.to[i] = -1
	}
	pairs := lcs(base, side)
	b, s := 0, 0
	for _, p := range append(pairs, [2]int{len(base), len(side)}) {
		e.hunk(base, side, b, p[0], s, p[1])
		if p[0] < len(base) {
			e.kind[p[0]], e.to[p[0]] = kept, p[1]
		}
		b, s = p[0]+1, p[1]+1
	}
	return e
}

// additions is diff without pairing: every side unit not matched to a
// base unit is an addition, never a change of one.
func additions(base, side []unit) edits {
	e := diff(base, side)
	for b, k := range e.kind {
		if k != changed {
			continue
		}
		at := len(base)
		for c := b + 1; c < len(base); c++ {
			if e.kind[c] == kept {
				at = c
				break
			}
		}
		e.inserts[at] = append(e.inserts[at], e.to[b])
		slices.Sort(e.inserts[at])
		e.kind[b], e.to[b] = deleted, -1
	}
	dropTruncated(&e, base, side)
	return e
}

// dropTruncated drops from e's insertions the side's last unit when it is
// a base unit's text cut short: a copy truncated mid-line (a sync cut
// off) holds the start of a note the file has whole, not a note of its
// own.
func dropTruncated(e *edits, base, side []unit) {
	if len(side) == 0 {
		return
	}
	last := len(side) - 1
	if !slices.ContainsFunc(base, func(b unit) bool { return cutShort(b, side[last]) }) {
		return
	}
	for at, ins := range e.inserts {
		e.inserts[at] = slices.DeleteFunc(ins, func(s int) bool { return s == last })
	}
}

// hunk records the edits between matches: base[b0:b1] became side[s0:s1].
// A side unit paired with none is added before the next base unit that is
// paired after it, or at the end of the hunk: after the base units it
// stands among, so that a union keeps the side's order after the base's.
func (e *edits) hunk(base, side []unit, b0, b1, s0, s1 int) {
	pairedWith := make([]int, s1-s0)
	next := b0 // first base unit of the hunk not yet paired or passed
	for s := s0; s < s1; s++ {
		pairedWith[s-s0] = -1
		for b := next; b < b1; b++ {
			if base[b].heading == side[s].heading && similar(base[b].text(), side[s].text()) {
				pairedWith[s-s0] = b
				next = b + 1
				break
			}
		}
	}
	for b := b0; b < b1; b++ {
		e.kind[b] = deleted
	}
	anchor := b1
	for s := s1 - 1; s >= s0; s-- {
		if b := pairedWith[s-s0]; b >= 0 {
			e.kind[b], e.to[b] = changed, s
			anchor = b
			continue
		}
		lo := b0
		for k := s - 1; k >= s0; k-- {
			if pairedWith[k-s0] >= 0 {
				lo = pairedWith[k-s0] + 1
				break
			}
		}
		at := sectionAnchor(base, lo, anchor, side[s].heading)
		e.inserts[at] = append([]int{s}, e.inserts[at]...)
	}
}

// sectionAnchor places a unit under heading among the removed base units
// base[lo:hi]: after the last of them in its section, or before all of
// them when they are of another section and its section is the one
// before them; otherwise after them.
func sectionAnchor(base []unit, lo, hi int, heading string) int {
	for b := hi - 1; b >= lo; b-- {
		if base[b].heading == heading {
			return b + 1
		}
	}
	if hi > lo && (lo == 0 && heading == "" || lo > 0 && base[lo-1].heading == heading) {
		return lo
	}
	return hi
}

// similar reports whether two texts are versions of one note: at least
// half of their words are shared (Dice coefficient over word sets).
func similar(a, b string) bool {
	wa, wb := wordSet(a), wordSet(b)
	if len(wa) == 0 || len(wb) == 0 {
		return false
	}
	common := 0
	for w := range wa {
		if wb[w] {
			common++
		}
	}
	return 4*common >= len(wa)+len(wb)
}

// wordSet is the set of s's words (package words).
func wordSet(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range words.Split(s) {
		out[w] = true
	}
	return out
}
