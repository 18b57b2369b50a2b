package api

import (
	"time"

	"github.com/memminer/memminer/memory/remember"
)

// ConflictsRequest asks for the open conflicts of Wing (a normalized wing
// id; empty: every wing).
type ConflictsRequest struct {
	Wing string `json:"wing,omitempty"`
}

// ForgetRequest asks the daemon to forget a wing (see mine.Forget); the
// daemon checks its own hive for the wing's agent directory.
type ForgetRequest struct {
	Wing   string `json:"wing"`
	Force  bool   `json:"force,omitempty"`
	DryRun bool   `json:"dry_run,omitempty"`
}

// RememberRequest hands a note to the daemon, which writes it and mines
// the file before it answers, so the note is in the next search.
type RememberRequest struct {
	remember.Request
	// Hive is the caller's hive; the daemon refuses (ErrOtherHive) when it
	// serves another, since it would write into the wrong tree.
	Hive string `json:"hive"`
	// MaxNoteBytes is the caller's max_note_bytes; zero means the default.
	MaxNoteBytes int64 `json:"max_note_bytes,omitempty"`
	// Machine is the caller's machine setting, so that the file written
	// is the one the CLI names without a daemon; empty means the host's.
	Machine string `json:"machine,omitempty"`
}

// RememberReply is the daemon's answer: the result, and on failure the
// error. After a write whose mine failed (remember.ErrNotMined) Result is
// filled too.
type RememberReply struct {
	Result remember.Result `json:"result"`
	Error  string          `json:"error,omitempty"`
	Code   string          `json:"code,omitempty"`
	// SupersedesRef is a refused supersedes reference, as in errorBody.
	SupersedesRef *remember.RefError `json:"supersedes_ref,omitempty"`
}

// Replication is how the hive's Syncthing folder stands, as status reports
// it under "syncthing". It tells a palace behind its hive (memminer is
// behind) from a hive behind the other machines (Syncthing is).
type Replication struct {
	// Folder is the id of the folder holding the hive; Label and Path its
	// name and root on this machine.
	Folder string `json:"folder"`
	Label  string `json:"label"`
	Path   string `json:"path"`
	// State is Syncthing's: idle, scanning, syncing, sync-preparing,
	// scan-waiting, sync-waiting, error …; paused when the folder is.
	State string `json:"state"`
	// StateChanged is when the folder entered State; null when Error is set.
	StateChanged *time.Time `json:"state_changed"`
	// InSync is set when the folder is idle with nothing left to fetch
	// and that can be known (StateKnown); InSyncSince is then when it
	// last finished syncing, else null.
	InSync      bool       `json:"in_sync"`
	InSyncSince *time.Time `json:"in_sync_since"`
	// StateKnown is false when the folder is shared with other devices
	// and none is connected: what this machine lacks is then unknown (it
	// needs nothing it has heard of), and its memory may be behind.
	StateKnown bool `json:"state_known"`
	// IsolatedSince is since when no other device has been connected (the
	// last time one was seen, or when Syncthing started); IsolatedSeconds
	// is how long that is. Both null unless StateKnown is false.
	IsolatedSince   *time.Time `json:"isolated_since"`
	IsolatedSeconds *int64     `json:"isolated_seconds"`
	// NeedFiles and NeedBytes are what this machine still has to fetch.
	NeedFiles int   `json:"need_files"`
	NeedBytes int64 `json:"need_bytes"`
	// Errors counts items that failed to sync.
	Errors int `json:"errors"`
	// DevicesConnected counts the Devices connected now.
	DevicesConnected int             `json:"devices_connected"`
	Devices          []ReplicaDevice `json:"devices"`
	// Error, when set, says why the rest is empty: Syncthing answered
	// but no folder of it holds the hive, or it refused the API key, or
	// it is not asked at all (ReplicationOff); null otherwise.
	Error *string `json:"error"`
}

// ReplicaDevice is another machine sharing the hive's folder.
type ReplicaDevice struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Connected bool   `json:"connected"`
	// ConnectedSince is when its connection started; null when not
	// connected.
	ConnectedSince *time.Time `json:"connected_since"`
	// LastSeen is when it was last connected; null when never.
	LastSeen *time.Time `json:"last_seen"`
	// Completion is the percentage of the folder it has, and NeedBytes
	// what it lacks, as Syncthing here last heard (stale while it is not
	// connected); null when Syncthing did not say.
	Completion *float64 `json:"completion"`
	NeedBytes  *int64   `json:"need_bytes"`
}

// ReplicationOff is the replication of a hive whose Syncthing is not
// asked; off says why ("disabled by --no-syncthing").
func ReplicationOff(off string) *Replication {
	return &Replication{Devices: []ReplicaDevice{}, Error: new(off + ": replication not checked")}
}

// MineProgress is how far the daemon's first mine of its hive got.
type MineProgress struct {
	FilesDone int `json:"files_done"`
	// FilesTotal is 0 while the first scan still counts the hive's files.
	FilesTotal int       `json:"files_total"`
	Started    time.Time `json:"started"`
	// ETASeconds estimates the time left from the pace so far; null until
	// a file is done.
	ETASeconds *float64 `json:"eta_seconds"`
}

// Progress is what GET /progress answers: the daemon's work in progress,
// cheap to ask (unlike Status, it asks nothing of Syncthing or the model).
type Progress struct {
	// FirstMine is the first mine of the hive while it runs; null after.
	FirstMine *MineProgress `json:"first_mine"`
	// Request is the mine handed over by memminer mine that the daemon is
	// working on; null when none is.
	Request *MineProgress `json:"request"`
}
