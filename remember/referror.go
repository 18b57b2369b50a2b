package remember

import "fmt"

// RefError is a supersedes reference that names no note the request may
// supersede. It matches ErrBadRequest. Its text names the request field
// and the search that gives notes' ids and lines as every caller knows
// them; Explain words it for a caller with other names (the CLI's flag).
type RefError struct {
	// Ref is the reference as the request gave it.
	Ref string `json:"ref"`
	// Kind says what is wrong with it: one of the Ref* kinds.
	Kind string `json:"kind"`
	// Wing is the wing the note was looked for in (RefNoID, RefNoLine) or
	// the other wing that holds it (RefOtherWing).
	Wing string `json:"wing,omitempty"`
	// File and Line are the note already superseded (RefSuperseded), File
	// relative to the hive.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
}

// The kinds of a RefError.
const (
	RefSuperseded = "already_superseded" // the note is marked superseded
	RefOtherWing  = "other_wing"         // the note is in another agent's wing
	RefNoID       = "no_such_id"         // no note of the wing has the id
	RefMalformed  = "malformed"          // neither an id nor FILE:LINE
	RefNoLine     = "no_such_line"       // no note of the wing starts at FILE:LINE
)

func (e *RefError) Error() string { return e.Explain("supersedes", "search") }

// Is reports whether target is ErrBadRequest.
func (e *RefError) Is(target error) bool { return target == ErrBadRequest }

// Explain words e for a caller that names the reference field and the
// search that gives each note's id and line.
func (e *RefError) Explain(field, search string) string {
	switch e.Kind {
	case RefSuperseded:
		return fmt.Sprintf("%s %s: %s:%d is already marked superseded", field, e.Ref, e.File, e.Line)
	case RefOtherWing:
		return fmt.Sprintf("%s %s: that note is in wing %s; an agent supersedes only notes of its own wing", field, e.Ref, e.Wing)
	case RefNoID:
		return fmt.Sprintf("%s %s: no note of wing %s has that id (ids change when a note is edited; %s again)", field, e.Ref, e.Wing, search)
	case RefNoLine:
		return fmt.Sprintf("%s %s: no note of wing %s starts at that line (%s gives each note's line)", field, e.Ref, e.Wing, search)
	}
	return fmt.Sprintf("%s %q: want a note id (%s gives each note's), or FILE:LINE such as memory.md:12", field, e.Ref, search)
}
