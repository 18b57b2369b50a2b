package daemon

import (
	"context"
	"errors"
	"time"

	"github.com/memminer/memminer/syncthing"
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
	// InSync is set when the folder is idle with nothing left to fetch;
	// InSyncSince is then when it last finished syncing, else null.
	InSync      bool       `json:"in_sync"`
	InSyncSince *time.Time `json:"in_sync_since"`
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
		InSync: r.InSync(), NeedFiles: r.NeedFiles, NeedBytes: r.NeedBytes, Errors: r.Errors,
		DevicesConnected: r.Connected(), Devices: []ReplicaDevice{},
	}
	if r.Paused {
		out.State = "paused"
	}
	if out.InSync {
		since := r.StateChanged
		out.InSyncSince = &since
	}
	for _, d := range r.Devices {
		out.Devices = append(out.Devices, ReplicaDevice{ID: d.ID.String(), Name: d.Name, Connected: d.Connected})
	}
	return out
}
