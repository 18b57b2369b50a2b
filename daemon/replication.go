package daemon

import (
	"context"
	"errors"
	"time"

	"github.com/memminer/memminer/syncthing"
	"github.com/memminer/memminer/wakeup"
)

// replicationTimeout bounds the questions status asks Syncthing, so a
// Syncthing that hangs does not hang status.
const replicationTimeout = 3 * time.Second

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

// HiveReplication asks Syncthing (c) how the folder holding hive stands.
// It returns nil when there is nothing to ask (no client, no hive) or
// Syncthing does not answer.
func HiveReplication(ctx context.Context, c *syncthing.Client, hive string) *Replication {
	return hiveReplication(ctx, c, hive, time.Now())
}

func hiveReplication(ctx context.Context, c *syncthing.Client, hive string, now time.Time) *Replication {
	if c == nil || hive == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, replicationTimeout)
	defer cancel()
	r, err := c.Replication(ctx, hive)
	var he *syncthing.HTTPError
	switch {
	case errors.Is(err, syncthing.ErrNoFolder) || errors.Is(err, syncthing.ErrUnauthorized) || errors.As(err, &he):
		return &Replication{Devices: []ReplicaDevice{}, Error: new(err.Error())}
	case err != nil:
		return nil
	}
	out := &Replication{
		Folder: r.Folder, Label: r.Label, Path: r.Path,
		State: r.State, StateChanged: &r.StateChanged,
		InSync: r.InSync(), StateKnown: r.Known(), NeedFiles: r.NeedFiles, NeedBytes: r.NeedBytes, Errors: r.Errors,
		DevicesConnected: r.Connected(), Devices: []ReplicaDevice{},
	}
	if since, ok := r.IsolatedSince(); ok {
		secs := int64(max(now.Sub(since), 0) / time.Second)
		out.IsolatedSince, out.IsolatedSeconds = &since, &secs
	}
	if r.Paused {
		out.State = "paused"
	}
	if out.InSync {
		since := r.StateChanged
		out.InSyncSince = &since
	}
	for _, d := range r.Devices {
		rd := ReplicaDevice{ID: d.ID.String(), Name: d.Name, Connected: d.Connected}
		if !d.ConnectedSince.IsZero() {
			rd.ConnectedSince = new(d.ConnectedSince)
		}
		if !d.LastSeen.IsZero() {
			rd.LastSeen = new(d.LastSeen)
		}
		if c := d.Completion; c != nil {
			rd.Completion, rd.NeedBytes = new(c.Percent), new(c.NeedBytes)
		}
		out.Devices = append(out.Devices, rd)
	}
	return out
}

// WakeupIsolation is what wake-up says of a hive cut off from every other
// machine sharing it (r.StateKnown false): since when, and how many there
// are. It is nil otherwise, and for a nil r (Syncthing not answering says
// nothing about the peers).
func WakeupIsolation(r *Replication) *wakeup.Isolation {
	if r == nil || r.StateKnown || r.IsolatedSince == nil || r.IsolatedSeconds == nil {
		return nil
	}
	return &wakeup.Isolation{Since: *r.IsolatedSince, Seconds: *r.IsolatedSeconds, Devices: len(r.Devices)}
}
