package api

import (
	"errors"
	"time"

	"github.com/memminer/memminer/githive"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace"
)

// ShowRequest asks for one note of the palace (memminer show, MCP's
// read_note).
type ShowRequest struct {
	// Ref names the note: its id, a prefix of the id of at least
	// MinRefPrefix hex digits that no other note shares, or FILE:LINE
	// (FILE absolute, relative to Dir or to the hive, or the end of one
	// mined file's path, such as an agent directory's file name; LINE any
	// line of the note).
	Ref string `json:"ref"`
	// Dir is the caller's working directory, which a relative FILE may be
	// relative to.
	Dir string `json:"dir,omitempty"`
	// StaleAfter is the staleness window of the governance shown; zero
	// means govern's default.
	StaleAfter time.Duration `json:"stale_after,omitempty"`
	// Scope is what the caller sees by domain: a note of a wing it does
	// not see is refused (palace.ErrOutsideDomain), as a search of that
	// wing is.
	Scope palace.DomainScope `json:"scope"`
}

// MinRefPrefix is the shortest id prefix a ref may be, as git's.
const MinRefPrefix = 6

// ShownNote is one note as show --json prints it and MCP's read_note
// answers.
type ShownNote struct {
	Note
	Mtime string `json:"mtime"`
	govern.Fields
	// Before and After are the notes next to it in its file; null at
	// either end.
	Before *NeighbourNote `json:"before"`
	After  *NeighbourNote `json:"after"`
	// History are the commits that touched the note, newest first, when
	// asked for (the caller reads them from Git); null otherwise.
	History []githive.Commit `json:"history"`
}

// NeighbourNote is a note next to the one shown.
type NeighbourNote struct {
	ID      string `json:"id"`
	Line    int    `json:"line"`
	Heading string `json:"heading"`
	Text    string `json:"text"`
}

// Errors of a ref that names no single note; a *RefError matches one.
var (
	// ErrBadRef means a ref is neither a note id (nor a prefix of one)
	// nor FILE:LINE.
	ErrBadRef = errors.New("not a note reference")
	// ErrAmbiguousRef means an id prefix that several notes share.
	ErrAmbiguousRef = errors.New("several notes match the reference")
	// ErrNoNote means a ref that names no note of the palace.
	ErrNoNote = errors.New("no such note")
)

// RefError is a ref that names no single note: its text says why, and it
// matches Err (ErrBadRef, ErrAmbiguousRef or ErrNoNote).
type RefError struct {
	Err error
	Msg string
}

func (e *RefError) Error() string { return e.Msg }

// Unwrap returns the sentinel e matches.
func (e *RefError) Unwrap() error { return e.Err }
