package api

import (
	"time"
)

// InboxRequest asks for the inbox's items: of Wing (every wing when
// empty), pending ones only unless All is set, oldest first.
type InboxRequest struct {
	Wing string `json:"wing,omitempty"`
	All  bool   `json:"all,omitempty"`
}

// DecideRequest approves or rejects the pending inbox item Ref names (a
// ref as ShowRequest's, read against Dir the same way).
type DecideRequest struct {
	Ref     string `json:"ref"`
	Dir     string `json:"dir,omitempty"`
	Approve bool   `json:"approve"`
	// By is who decides; Note why (required to reject) or a remark; Now
	// when (its local date is written).
	By   string    `json:"by"`
	Note string    `json:"note,omitempty"`
	Now  time.Time `json:"now"`
	// Hive, MaxNoteBytes and Machine are the caller's, for the approved
	// note's write into memory, as RememberRequest's (the daemon refuses
	// another hive than its own: ErrOtherHive).
	Hive         string `json:"hive"`
	MaxNoteBytes int64  `json:"max_note_bytes,omitempty"`
	Machine      string `json:"machine,omitempty"`
}

// Decision is what an approval or a rejection did, as inbox approve and
// reject --json print it.
type Decision struct {
	// Decision is "approved" or "rejected"; empty when nothing was decided.
	Decision string `json:"decision"`
	Wing     string `json:"wing"`
	// File and Line are the inbox item's, File relative to the hive.
	File string `json:"file"`
	Line int    `json:"line"`
	// Into is where the approved note is in memory (FILE:LINE, relative to
	// the hive), ID its note id; null and "" for a rejection.
	Into *string `json:"into"`
	ID   string  `json:"id,omitempty"`
	// AlreadyInMemory says memory held the note already.
	AlreadyInMemory bool `json:"already_in_memory"`
}

// DecideReply is the daemon's answer to a decision: what was decided,
// and on failure the error; a decision written whose mine then failed
// has both.
type DecideReply struct {
	Result Decision `json:"result"`
	Error  string   `json:"error,omitempty"`
	Code   string   `json:"code,omitempty"`
}
