package daemon

import (
	"context"
	"errors"
	"time"

	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/syncthing"
)

// replicationTimeout bounds the questions status asks Syncthing, so a
// Syncthing that hangs does not hang status.
const replicationTimeout = 3 * time.Second

// HiveReplication asks Syncthing (c) how the folder holding hive stands.
// It returns nil when there is nothing to ask (no client, no hive) or
// Syncthing does not answer.
func HiveReplication(ctx context.Context, c *syncthing.Client, hive string) *api.Replication {
	return hiveReplication(ctx, c, hive, time.Now())
}

func hiveReplication(ctx context.Context, c *syncthing.Client, hive string, now time.Time) *api.Replication {
	if c == nil || hive == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, replicationTimeout)
	defer cancel()
	r, err := c.Replication(ctx, hive)
	var he *syncthing.HTTPError
	switch {
	case errors.Is(err, syncthing.ErrNoFolder) || errors.Is(err, syncthing.ErrUnauthorized) || errors.As(err, &he):
		return &api.Replication{Devices: []api.ReplicaDevice{}, Error: new(err.Error())}
	case err != nil:
		return nil
	}
	out := &api.Replication{
		Folder: r.Folder, Label: r.Label, Path: r.Path,
		State: r.State, StateChanged: &r.StateChanged,
		InSync: r.InSync(), StateKnown: r.Known(), NeedFiles: r.NeedFiles, NeedBytes: r.NeedBytes, Errors: r.Errors,
		DevicesConnected: r.Connected(), Devices: []api.ReplicaDevice{},
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
		rd := api.ReplicaDevice{ID: d.ID.String(), Name: d.Name, Connected: d.Connected}
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
func WakeupIsolation(r *api.Replication) *wakeup.Isolation {
	if r == nil || r.StateKnown || r.IsolatedSince == nil || r.IsolatedSeconds == nil {
		return nil
	}
	return &wakeup.Isolation{Since: *r.IsolatedSince, Seconds: *r.IsolatedSeconds, Devices: len(r.Devices)}
}
