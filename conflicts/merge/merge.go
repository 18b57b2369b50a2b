// Package merge merges a Syncthing conflict copy of a memory file back into
// the file, note by note: a three-way merge over the notes the mine package
// parses, with the file's notes as last mined for the common ancestor, or a
// two-way union that drops nothing when there is no ancestor. It works on
// bytes and returns a typed result; reading, writing and reporting are the
// caller's. The rules are in docs/conflicts.md.
package merge

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memminer/memminer/memory/markdown"
)

// ErrUnmappable means the parser's notes could not be mapped back onto the
// lines of a side, so the merge could not say which bytes to move.
var ErrUnmappable = errors.New("notes do not map onto the file's lines")

// ErrUnrenderable means no layout of the merged notes parsed back to
// exactly those notes; the file has to be merged by hand.
var ErrUnrenderable = errors.New("merged notes could not be laid out so that they parse back unchanged")

// Base is a content of the file as it was mined: a candidate for the
// common ancestor of both sides.
type Base struct {
	// Notes are the file's notes in source order.
	Notes []BaseNote
	// Frontmatter holds its scalar frontmatter values as text
	// (markdown.FrontmatterScalars).
	Frontmatter map[string]string
	// Mined is when it was mined (reported, not used).
	Mined time.Time
}

// BaseNote is one note of the base.
type BaseNote struct {
	Heading string
	Text    string
	// Line is the 1-based line where the note started.
	Line int
}

// Input is what one merge works on.
type Input struct {
	// Bases are the file's contents as mined, newest first; the merge takes
	// the one that best explains both sides as edits of it (see ChooseBase).
	// With none usable the merge is a two-way union.
	Bases []Base
	// Ancestor, when not nil, is the real common ancestor of both sides
	// (Git's merge base, which a merge driver is given): the merge is
	// three-way against it, confirmed, even where it equals a side, and
	// Bases is not used. A file both sides added has an empty, non-nil
	// Ancestor.
	Ancestor []byte
	// Ours is the file Syncthing kept; Theirs the conflict copy.
	Ours, Theirs []byte
	// Device and Date go into the conflict marker (see Marker).
	Device, Date string
	// AcceptRemovals lets the merge remove what the copy removed: notes,
	// a note's text the copy cut short, frontmatter keys. Without it a
	// merge never deletes; it proposes (Result.ProposedRemovals,
	// Result.ProposedFrontmatter). Only a person sets it.
	AcceptRemovals bool
	// Remove, without AcceptRemovals, are the removals the merge carries
	// out, one by one: notes of ours the copy removed (or cut short), by
	// heading and text, each listed once per note it removes. The other
	// removals stay proposed. Only a person sets it.
	Remove []Note
	// RemoveFrontmatter, without AcceptRemovals, takes the copy's
	// frontmatter where it drops some of this file's.
	RemoveFrontmatter bool
	// AppendOnly says every note the file is known to have held (the
	// palace's Source.Dropped, its mined versions) is in Ours: this
	// side only ever added. Without a confirmed base the merge is then a
	// union that takes each note of the copy that Ours lacks for an
	// addition, never for another version of one of Ours' notes: both
	// sides' additions merge cleanly, however many there are.
	AppendOnly bool
}

// Note is a note as the result reports it.
type Note struct {
	Heading string `json:"heading"`
	Text    string `json:"text"`
}

// ConflictKind says how the two sides disagreed about a note.
type ConflictKind string

// Kinds of conflict.
const (
	// BothChanged: each side changed the note its own way. Ours is kept,
	// theirs inserted after it with the marker.
	BothChanged ConflictKind = "both_changed"
	// OursRemovedTheirsChanged: this file removed a note the copy changed.
	// The copy's version is inserted with the marker.
	OursRemovedTheirsChanged ConflictKind = "removed_here_changed_in_copy"
	// OursChangedTheirsRemoved: this file changed a note the copy removed.
	// Ours is kept.
	OursChangedTheirsRemoved ConflictKind = "changed_here_removed_in_copy"
	// UnionChanged: without a base, a note of the copy looks like another
	// version of one of this file's; both are kept, the copy's marked.
	UnionChanged ConflictKind = "two_versions_kept"
	// UnconfirmedRemoval, UnconfirmedChange: one side removed or changed a
	// note of a base that neither side confirmed it descends from; both
	// sides' versions are kept, the copy's marked.
	UnconfirmedRemoval ConflictKind = "removal_unconfirmed"
	UnconfirmedChange  ConflictKind = "change_unconfirmed"
	// FrontmatterChanged: both sides changed the frontmatter (or it cannot
	// be told which did); ours is kept.
	FrontmatterChanged ConflictKind = "frontmatter"
)

// Conflict is a disagreement a person should look at.
type Conflict struct {
	Kind    ConflictKind `json:"kind"`
	Heading string       `json:"heading"`
	// Ours and Theirs are the two versions; empty for a side that removed
	// the note (or, for frontmatter, the blocks as written).
	Ours   string `json:"ours"`
	Theirs string `json:"theirs"`
}

// Frontmatter outcomes.
const (
	FrontmatterSame   = "same"
	FrontmatterOurs   = "ours"
	FrontmatterTheirs = "theirs"
)

// Result is a merge's outcome.
type Result struct {
	// Merged is the merged file.
	Merged []byte
	// ThreeWay is false for a two-way union (no usable base, or an
	// append-only file without a confirmed one).
	ThreeWay bool
	// AppendOnly is set when the merge was the union of Input.AppendOnly.
	AppendOnly bool
	// Confirmed is true when both sides showed they descend from the
	// base (see ChooseBase); without that, removals and one-sided changes
	// are conflicts rather than taken.
	Confirmed bool
	// Base is the index in Input.Bases of the base merged against, -1 for
	// none.
	Base int
	// Kept counts the notes of ours kept unchanged.
	Kept int
	// FromTheirs are the notes the copy brings: added, changed, or
	// inserted with the conflict marker.
	FromTheirs []Note
	// Removed are notes of ours the merge removes (the copy removed them);
	// empty unless Input.AcceptRemovals or Input.Remove.
	Removed []Note
	// ProposedRemovals are notes of ours the copy removed, or cut short,
	// that the merge keeps: neither Input.AcceptRemovals nor Input.Remove
	// takes them.
	ProposedRemovals []Note
	// ProposedFrontmatter is true when the copy changed the frontmatter in
	// a way that drops some of it, and this file's was kept because
	// Input.AcceptRemovals is not set.
	ProposedFrontmatter bool
	// Conflicts need a person; NeedsReview is true when there are any.
	Conflicts []Conflict
	// Frontmatter is FrontmatterSame, FrontmatterOurs or FrontmatterTheirs.
	Frontmatter string
	// NeedsReview is true when Conflicts is not empty.
	NeedsReview bool
}

// Marker is the text that marks a note inserted from a conflict copy.
func Marker(device, date string) string {
	return fmt.Sprintf("(conflict: from the copy of %s, %s)", device, date)
}

// item is one unit of the merged file, in order.
type item struct {
	ours   int // unit of ours kept here, -1 when the unit comes from theirs
	theirs int // unit of theirs written here (in ours' place when ours >= 0)
	marked bool
}

// Merge merges in.Theirs into in.Ours.
func Merge(in Input) (*Result, error) {
	ours, err := parseSide(in.Ours)
	if err != nil {
		return nil, fmt.Errorf("this file: %w", err)
	}
	theirs, err := parseSide(in.Theirs)
	if err != nil {
		return nil, fmt.Errorf("the copy: %w", err)
	}
	res := &Result{Base: -1}
	var base []unit
	var eo edits
	if in.Ancestor != nil {
		b, err := ancestorBase(in.Ancestor)
		if err != nil {
			return nil, fmt.Errorf("the common ancestor: %w", err)
		}
		in.Bases = []Base{b}
	}
	if i, units, confirmed := pickBase(in, ours, theirs); i >= 0 {
		res.Base, res.ThreeWay, res.Confirmed, base = i, true, confirmed, units
		eo = diff(base, ours.units)
	} else {
		base = ours.units
		eo = diff(base, base)
	}
	et := diff(base, theirs.units)
	if in.AppendOnly && !res.Confirmed {
		// Both sides only added: nothing of ours goes, and what the copy
		// has that ours lacks is new, whatever it resembles.
		res = &Result{Base: -1, AppendOnly: true}
		base = ours.units
		eo, et = diff(base, base), additions(base, theirs.units)
	}
	// The copy's additions go after this file's at the same place; when
	// that cannot be laid out (a code block of one side right after a
	// paragraph of the other would join it), before them.
	for _, theirsFirst := range []bool{false, true} {
		try := &Result{Base: res.Base, ThreeWay: res.ThreeWay, Confirmed: res.Confirmed, AppendOnly: res.AppendOnly}
		items := try.combine(base, ours, theirs, eo, et, theirsFirst, newAcceptor(in))
		var baseFM *Base
		if try.ThreeWay {
			baseFM = &in.Bases[try.Base]
		}
		try.frontmatter(baseFM, ours, theirs, in.AcceptRemovals || in.RemoveFrontmatter)
		try.NeedsReview = len(try.Conflicts) > 0
		r := renderer{ours: ours, theirs: theirs, items: items, marker: Marker(in.Device, in.Date), fmTheirs: try.Frontmatter == FrontmatterTheirs}
		try.Merged, err = r.render()
		if err == nil {
			res = try
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if bytes.Equal(res.Merged, in.Ours) {
		res.Merged = in.Ours
	}
	return res, nil
}

// acceptor says which removals of the copy a merge carries out: every one
// (Input.AcceptRemovals), or the notes of Input.Remove, each as many times
// as it is listed.
type acceptor struct {
	all   bool
	notes map[Note]int
}

func newAcceptor(in Input) *acceptor {
	a := &acceptor{all: in.AcceptRemovals, notes: map[Note]int{}}
	for _, n := range in.Remove {
		a.notes[n]++
	}
	return a
}

// take reports whether the removal of n is carried out, and counts it.
func (a *acceptor) take(n Note) bool {
	if a.all {
		return true
	}
	if a.notes[n] > 0 {
		a.notes[n]--
		return true
	}
	return false
}

// combine walks the base, taking from each side what it did, and returns
// the merged units in order. What the copy removed stays, proposed, unless
// accept takes it.
func (res *Result) combine(base []unit, ours, theirs *side, eo, et edits, theirsFirst bool, accept *acceptor) []item {
	var items []item
	for a := 0; a <= len(base); a++ {
		items = append(items, res.inserts(base, a, ours, theirs, eo, et, theirsFirst)...)
		if a == len(base) {
			break
		}
		o, t := eo.to[a], et.to[a]
		ko, kt := eo.kind[a], et.kind[a]
		switch {
		case !res.ThreeWay:
			items = append(items, res.union(base[a], ours, theirs, o, t, kt)...)
		case !res.Confirmed && (ko != kt || ko == deleted) && !(ko == changed && kt == changed):
			items = append(items, res.unconfirmed(base[a], ours, theirs, o, t, ko, kt)...)
		default:
			items = append(items, res.threeWay(base[a], ours, theirs, o, t, ko, kt, accept)...)
		}
	}
	return items
}

// noteOf is unit i of side s as a Note.
func noteOf(s *side, i int) Note { return Note{Heading: s.units[i].heading, Text: s.units[i].text()} }

// fromTheirs is unit t of the copy taken into the merge, marked or not.
func (res *Result) fromTheirs(theirs *side, t int, marked bool) item {
	res.FromTheirs = append(res.FromTheirs, noteOf(theirs, t))
	return item{ours: -1, theirs: t, marked: marked}
}

// union resolves a base unit without a base: nothing is known to be
// removed or changed, so everything of ours stays, and a different
// version of a note in the copy is kept after it.
func (res *Result) union(b unit, ours, theirs *side, o, t int, kt opKind) []item {
	res.Kept++
	items := []item{{ours: o, theirs: -1}}
	if kt == changed {
		res.conflict(UnionChanged, b.heading, ours.units[o].text(), theirs.units[t].text())
		items = append(items, res.fromTheirs(theirs, t, true))
	}
	return items
}

// threeWay resolves base unit b by what each side did to it (ko, kt):
// what the copy removed stays, proposed, unless accept takes it.
func (res *Result) threeWay(b unit, ours, theirs *side, o, t int, ko, kt opKind, accept *acceptor) []item {
	switch {
	case ko == kept && kt == kept, ko == changed && kt == kept:
		res.Kept++
		return []item{{ours: o, theirs: -1}}
	case ko == kept && kt == deleted && accept.take(noteOf(ours, o)):
		res.Removed = append(res.Removed, noteOf(ours, o))
	case ko == kept && kt == deleted,
		ko == kept && kt == changed && cutShort(b, theirs.units[t]) && !accept.take(noteOf(ours, o)):
		res.ProposedRemovals = append(res.ProposedRemovals, noteOf(ours, o))
		res.Kept++
		return []item{{ours: o, theirs: -1}}
	case ko == deleted && (kt == kept || kt == deleted):
		// Already gone from ours.
	case ko == kept && kt == changed:
		res.FromTheirs = append(res.FromTheirs, noteOf(theirs, t))
		return []item{{ours: o, theirs: t}}
	case ko == changed && kt == changed:
		res.Kept++
		items := []item{{ours: o, theirs: -1}}
		if ours.units[o].key != theirs.units[t].key {
			res.conflict(BothChanged, b.heading, ours.units[o].text(), theirs.units[t].text())
			items = append(items, res.fromTheirs(theirs, t, true))
		}
		return items
	case ko == deleted && kt == changed:
		res.conflict(OursRemovedTheirsChanged, b.heading, "", theirs.units[t].text())
		return []item{res.fromTheirs(theirs, t, true)}
	case ko == changed && kt == deleted:
		res.Kept++
		res.conflict(OursChangedTheirsRemoved, b.heading, ours.units[o].text(), "")
		return []item{{ours: o, theirs: -1}}
	}
	return nil
}

// unconfirmed resolves a base unit one side removed or changed when the
// base is not confirmed: the removal or change may be the other side's
// edit seen backwards, so nothing either side has is dropped, and the
// copy's version, when it differs from this file's, follows it marked. A
// note only the copy lacks simply stays.
func (res *Result) unconfirmed(b unit, ours, theirs *side, o, t int, ko, kt opKind) []item {
	switch {
	case ko == deleted && kt == deleted:
		return nil // removed on both sides
	case ko != deleted && kt == deleted:
		// The copy lacks it: a removal there, or this file's own note
		// that the copy never had. Either way it stays, and a merge never
		// deletes: nothing to decide.
		res.Kept++
		return []item{{ours: o, theirs: -1}}
	}
	var items []item
	oursText, theirsText := "", ""
	if o >= 0 {
		res.Kept++
		items = append(items, item{ours: o, theirs: -1})
		oursText = ours.units[o].text()
	}
	if t >= 0 {
		theirsText = theirs.units[t].text()
		if o < 0 || ours.units[o].key != theirs.units[t].key {
			res.FromTheirs = append(res.FromTheirs, Note{Heading: theirs.units[t].heading, Text: theirsText})
			items = append(items, item{ours: -1, theirs: t, marked: true})
		}
	}
	kind := UnconfirmedChange
	if ko == deleted || kt == deleted {
		kind = UnconfirmedRemoval
	}
	res.conflict(kind, b.heading, oursText, theirsText)
	return items
}

func (res *Result) conflict(kind ConflictKind, heading, ours, theirs string) {
	res.Conflicts = append(res.Conflicts, Conflict{Kind: kind, Heading: heading, Ours: ours, Theirs: theirs})
}

// inserts returns the units both sides added before base unit a: ours in
// their order, then each of theirs after the last unit of its section, a
// unit both added only once.
func (res *Result) inserts(base []unit, a int, ours, theirs *side, eo, et edits, theirsFirst bool) []item {
	var items []item
	taken := map[string]int{}
	for _, o := range eo.inserts[a] {
		items = append(items, item{ours: o, theirs: -1})
		taken[ours.units[o].key]++
		res.Kept++
	}
	heading := func(it item) string {
		if it.ours >= 0 {
			return ours.units[it.ours].heading
		}
		return theirs.units[it.theirs].heading
	}
	next := ""
	if a < len(base) {
		next = base[a].heading
	}
	for _, t := range et.inserts[a] {
		u := theirs.units[t]
		if taken[u.key] > 0 {
			taken[u.key]--
			continue
		}
		res.FromTheirs = append(res.FromTheirs, Note{Heading: u.heading, Text: u.text()})
		it := item{ours: -1, theirs: t}
		at := -1
		for i := len(items) - 1; i >= 0; i-- {
			if heading(items[i]) == u.heading {
				at = i + 1
				break
			}
		}
		if theirsFirst {
			for i, x := range items {
				if x.ours >= 0 && heading(x) == u.heading {
					at = i
					break
				}
			}
		}
		if at < 0 {
			at = len(items)
			switch {
			case a > 0 && u.heading == base[a-1].heading:
				// The end of the section before: ahead of everything.
				at = 0
			case a < len(base) && u.heading != next:
				// A section of its own: before the units added to the next
				// base unit's section, if any.
				for i, x := range items {
					if heading(x) == next {
						at = i
						break
					}
				}
			}
		}
		items = append(items[:at], append([]item{it}, items[at:]...)...)
	}
	return items
}

// frontmatter decides which side's frontmatter the merge keeps. The
// copy's is taken only against a confirmed base, and when it drops any of
// this file's (a key, or the whole block) only with accept; otherwise it
// is proposed.
func (res *Result) frontmatter(base *Base, ours, theirs *side, accept bool) {
	if bytes.Equal(normalizeEOL(ours.fmRaw), normalizeEOL(theirs.fmRaw)) {
		res.Frontmatter = FrontmatterSame
		return
	}
	res.Frontmatter = FrontmatterOurs
	if base != nil {
		oursChanged := !equalScalars(ours.fm, base.Frontmatter)
		theirsChanged := !equalScalars(theirs.fm, base.Frontmatter)
		switch {
		case theirsChanged && !oursChanged && res.Confirmed:
			if drops(ours, theirs) && !accept {
				res.ProposedFrontmatter = true
				return
			}
			res.Frontmatter = FrontmatterTheirs
			return
		case oursChanged && !theirsChanged:
			return
		}
	}
	res.conflict(FrontmatterChanged, "", string(ours.fmRaw), string(theirs.fmRaw))
}

// drops reports whether theirs' frontmatter lacks some of ours': the
// block, or a key of it.
func drops(ours, theirs *side) bool {
	if len(ours.fmRaw) > 0 && len(theirs.fmRaw) == 0 {
		return true
	}
	for k := range ours.fm {
		if _, ok := theirs.fm[k]; !ok {
			return true
		}
	}
	return false
}

// cutShort reports whether the copy's version of a base unit is the
// base's text cut short: a truncated copy, a removal of the note's tail.
func cutShort(b, t unit) bool {
	bt, tt := strings.TrimSpace(b.text()), strings.TrimSpace(t.text())
	return len(tt) < len(bt) && strings.HasPrefix(bt, tt)
}

func normalizeEOL(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
}

// pickBase is chooseBase, or the one base of a known Ancestor, confirmed.
func pickBase(in Input, ours, theirs *side) (int, []unit, bool) {
	if in.Ancestor == nil {
		return chooseBase(in.Bases, ours, theirs)
	}
	units, err := baseUnits(in.Bases[0])
	if err != nil {
		return -1, nil, false
	}
	return 0, units, true
}

// ancestorBase parses a common ancestor's content into a Base.
func ancestorBase(content []byte) (Base, error) {
	doc, err := markdown.Parse(content, markdown.MemoryOptions())
	if err != nil {
		return Base{}, err
	}
	b := Base{Frontmatter: markdown.FrontmatterScalars(doc.Frontmatter)}
	for _, n := range doc.Notes {
		b.Notes = append(b.Notes, BaseNote{Heading: n.Heading, Text: n.Text, Line: n.Line})
	}
	return b, nil
}

// baseUnits groups a base's notes into units.
func baseUnits(b Base) ([]unit, error) {
	nl := make([]noteLine, len(b.Notes))
	for k, n := range b.Notes {
		nl[k] = noteLine{heading: n.Heading, text: n.Text, line: n.Line}
	}
	return groupNoteLines(nl, -1)
}

// chooseBase returns the index of the base to merge against and its units,
// -1 when none is usable. A base whose notes and frontmatter equal a
// side's is that side, not an ancestor of both. The rest are contents this
// file had one after the other; the oldest is the first guess, and each
// newer one replaces the guess, confirmed, while both sides show the edits
// that led to it from the one before (a note it added that the side has,
// or one it removed that the side lacks); the first edit a side does not
// show ends the walk. A content one side reached by edits the other never saw
// is thus never confirmed: merging against it would undo those edits
// without a word. The oldest guess is not confirmed by anything, so the
// merge takes only additions from it and makes removals and one-sided
// changes conflicts.
func chooseBase(bases []Base, ours, theirs *side) (best int, units []unit, confirmed bool) {
	best = -1
	var bestUnits []unit
	for i := len(bases) - 1; i >= 0; i-- {
		b := bases[i]
		units, err := baseUnits(b)
		if err != nil {
			continue
		}
		if sameUnits(units, ours.units) && equalScalars(b.Frontmatter, ours.fm) ||
			sameUnits(units, theirs.units) && equalScalars(b.Frontmatter, theirs.fm) {
			continue
		}
		if best >= 0 && !(shows(ours, bestUnits, units, b.Frontmatter) && shows(theirs, bestUnits, units, b.Frontmatter)) {
			break
		}
		confirmed = best >= 0
		best, bestUnits = i, units
	}
	return best, bestUnits, confirmed
}

// shows reports whether side s shows the edits that lead from units from
// to units to: it has a note they added or changed; or, when they only
// removed notes, it lacks them (and has no version of them either); or,
// when the notes stayed the same, it has frontmatter fm.
func shows(s *side, from, to []unit, fm map[string]string) bool {
	has := make(map[string]int, len(s.units))
	for _, u := range s.units {
		has[u.key]++
	}
	e := diff(from, to)
	added, removed := false, false
	for b, k := range e.kind {
		switch k {
		case changed:
			added = true
			if has[to[e.to[b]].key] > 0 {
				return true
			}
		case deleted:
			removed = true
		}
	}
	for _, ins := range e.inserts {
		for _, i := range ins {
			added = true
			if has[to[i].key] > 0 {
				return true
			}
		}
	}
	switch {
	case added:
		return false
	case removed:
		for b, k := range e.kind {
			if k == deleted && (has[from[b].key] > 0 || hasVersion(s, from[b])) {
				return false
			}
		}
		return true
	}
	return equalScalars(fm, s.fm)
}

// hasVersion reports whether s has a unit that looks like a version of u.
func hasVersion(s *side, u unit) bool {
	for _, v := range s.units {
		if v.heading == u.heading && similar(v.text(), u.text()) {
			return true
		}
	}
	return false
}

func sameUnits(a, b []unit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].key != b[i].key {
			return false
		}
	}
	return true
}
