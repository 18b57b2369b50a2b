package api

import (
	"context"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/catalog"
	"github.com/memminer/memminer/recall/wakeup"
)

// Service is what memminer does for its commands, whoever does it: the
// palace in this process (package inproc) or the daemon serving it (its
// socket client). Errors are the sentinels and typed errors of this
// package and of the packages the results come from (palace.ErrEmpty,
// wakeup.ErrUnknownWing, remember.ErrConflict, …), the same text either
// way.
type Service interface {
	// Search searches the palace.
	Search(context.Context, SearchRequest) (SearchResult, error)
	// WakeUp builds the session-start digest.
	WakeUp(context.Context, wakeup.Options) (wakeup.Digest, error)
	// Remember writes a note and mines its file before it returns.
	Remember(context.Context, RememberRequest) (remember.Result, error)
	// Forget drops a wing from the palace.
	Forget(context.Context, ForgetRequest) (mine.Forgotten, error)
	// Mine mines a path into the palace; on failure the reply holds what
	// was done before the error.
	Mine(context.Context, MineRequest) (MineReply, error)
	// Index builds the hive's catalog.
	Index(context.Context) (catalog.Index, error)
	// Status describes the palace (and the daemon, when one answers).
	Status(context.Context) (Status, error)
	// Conflicts lists the open conflicts: the daemon's registry, or a
	// scan of the hive. A wing neither the palace nor the hive has is
	// refused (palace.ErrUnknownWing, conflicts.KnownWing); a scan that
	// found some copies but not all returns them with ScanError set and
	// no error.
	Conflicts(context.Context, ConflictsRequest) (conflicts.List, error)
	// MergeConflicts merges conflict copies into their files (previews
	// them without Apply); a path that is no open copy nor a file with
	// one is refused (conflicts.ErrNoCopy).
	MergeConflicts(context.Context, conflicts.MergeRequest) (conflicts.MergeReport, error)
	// Show finds the note a ref names, with its governance and
	// neighbours; a ref that names no single note is a *RefError.
	Show(context.Context, ShowRequest) (ShownNote, error)
	// Inbox lists the inbox's items; a wing the palace lacks is refused
	// (palace.ErrUnknownWing).
	Inbox(context.Context, InboxRequest) ([]inbox.Item, error)
	// Decide approves or rejects an inbox item and mines its inbox, so the
	// next listing, search and wake-up see the decision. Errors match
	// inbox's sentinels (inbox.ErrNoItem, inbox.ErrDecided, …), a ref's
	// (ErrBadRef, …) and remember's; a decision written whose mine then
	// failed is returned with the error.
	Decide(context.Context, DecideRequest) (Decision, error)
	// Wings are the palace's wings, as mined.
	Wings(context.Context) ([]palace.WingInfo, error)
}
