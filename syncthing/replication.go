package syncthing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ErrNoFolder means no folder of this Syncthing holds the directory asked
// about: it is not replicated.
var ErrNoFolder = errors.New("no Syncthing folder holds it")

// FolderStatus is the part of /rest/db/status memminer reports.
type FolderStatus struct {
	// State is idle, scanning, syncing, sync-preparing, scan-waiting,
	// sync-waiting, cleaning, clean-waiting or error.
	State string
	// StateChanged is when the folder entered State.
	StateChanged time.Time
	// NeedFiles and NeedBytes are what this device still has to fetch
	// (NeedFiles counts deletions too).
	NeedFiles int
	NeedBytes int64
	// Errors counts items that failed to sync.
	Errors int
}

// FolderStatus fetches /rest/db/status for folder id.
func (c *Client) FolderStatus(ctx context.Context, id string) (FolderStatus, error) {
	var raw struct {
		State        string    `json:"state"`
		StateChanged time.Time `json:"stateChanged"`
		NeedFiles    int       `json:"needFiles"`
		NeedDeletes  int       `json:"needDeletes"`
		NeedBytes    int64     `json:"needBytes"`
		Errors       int       `json:"errors"`
		PullErrors   int       `json:"pullErrors"`
	}
	if err := c.DoJSON(ctx, http.MethodGet, "/rest/db/status?folder="+url.QueryEscape(id), nil, &raw); err != nil {
		return FolderStatus{}, err
	}
	errs := raw.Errors
	if raw.PullErrors > errs {
		errs = raw.PullErrors // older versions count them here
	}
	return FolderStatus{State: raw.State, StateChanged: raw.StateChanged.UTC(), NeedFiles: raw.NeedFiles + raw.NeedDeletes, NeedBytes: raw.NeedBytes, Errors: errs}, nil
}

// Connection is what /rest/system/connections says of one device.
type Connection struct {
	// Connected is set while the device is connected.
	Connected bool
	// Paused is set when this device paused it.
	Paused bool
	// StartedAt is when the current connection started; zero when not
	// connected.
	StartedAt time.Time
}

// Connections fetches /rest/system/connections: for each device Syncthing
// knows, whether it is connected now and since when.
func (c *Client) Connections(ctx context.Context) (map[DeviceID]Connection, error) {
	const path = "/rest/system/connections"
	var raw struct {
		Connections map[string]struct {
			Connected bool      `json:"connected"`
			Paused    bool      `json:"paused"`
			StartedAt time.Time `json:"startedAt"`
		} `json:"connections"`
	}
	if err := c.DoJSON(ctx, http.MethodGet, path, nil, &raw); err != nil {
		return nil, err
	}
	out := make(map[DeviceID]Connection, len(raw.Connections))
	for s, conn := range raw.Connections {
		id, err := ParseDeviceID(s)
		if err != nil {
			return nil, fmt.Errorf("syncthing GET %s: device %q: %w", path, s, err)
		}
		k := Connection{Connected: conn.Connected, Paused: conn.Paused}
		if conn.Connected && conn.StartedAt.Year() > 1970 {
			k.StartedAt = conn.StartedAt.UTC()
		}
		out[id] = k
	}
	return out, nil
}

// Completion is what /rest/db/completion says of one device and folder:
// how much of the folder's global state (as this device knows it) the
// device has.
type Completion struct {
	// Percent is 0 to 100.
	Percent float64
	// NeedBytes and NeedItems are what the device lacks.
	NeedBytes int64
	NeedItems int
	// RemoteState is valid, notSharing or unknown (newer Syncthings; ""
	// from older ones).
	RemoteState string
}

// Completion fetches /rest/db/completion for folder and device.
func (c *Client) Completion(ctx context.Context, folder string, device DeviceID) (Completion, error) {
	var raw struct {
		Completion  float64 `json:"completion"`
		NeedBytes   int64   `json:"needBytes"`
		NeedItems   int     `json:"needItems"`
		NeedDeletes int     `json:"needDeletes"`
		RemoteState string  `json:"remoteState"`
	}
	q := "?folder=" + url.QueryEscape(folder) + "&device=" + url.QueryEscape(device.String())
	if err := c.DoJSON(ctx, http.MethodGet, "/rest/db/completion"+q, nil, &raw); err != nil {
		return Completion{}, err
	}
	return Completion{Percent: raw.Completion, NeedBytes: raw.NeedBytes, NeedItems: raw.NeedItems + raw.NeedDeletes, RemoteState: raw.RemoteState}, nil
}

// LastSeen fetches /rest/stats/device: when each device was last
// connected (zero for one never seen).
func (c *Client) LastSeen(ctx context.Context) (map[DeviceID]time.Time, error) {
	const path = "/rest/stats/device"
	var raw map[string]struct {
		LastSeen time.Time `json:"lastSeen"`
	}
	if err := c.DoJSON(ctx, http.MethodGet, path, nil, &raw); err != nil {
		return nil, err
	}
	out := make(map[DeviceID]time.Time, len(raw))
	for s, st := range raw {
		id, err := ParseDeviceID(s)
		if err != nil {
			return nil, fmt.Errorf("syncthing GET %s: device %q: %w", path, s, err)
		}
		if st.LastSeen.Year() > 1970 {
			out[id] = st.LastSeen.UTC()
		}
	}
	return out, nil
}

// FolderOf returns the folder whose root holds dir (or is dir), the
// innermost when folders nest. dir is compared as given and with its
// symlinks resolved; tilde is Syncthing's home directory.
func FolderOf(folders map[string]Folder, tilde, dir string) (Folder, bool) {
	candidates := []string{filepath.Clean(dir)}
	if r, err := filepath.EvalSymlinks(dir); err == nil && r != candidates[0] {
		candidates = append(candidates, r)
	}
	var best Folder
	bestLen := -1
	for _, f := range folders {
		root := f.AbsPath(tilde)
		roots := []string{root}
		if r, err := filepath.EvalSymlinks(root); err == nil && r != root {
			roots = append(roots, r)
		}
		for _, r := range roots {
			for _, d := range candidates {
				if atOrBelow(r, d) && len(r) > bestLen {
					best, bestLen = f, len(r)
				}
			}
		}
	}
	return best, bestLen >= 0
}

func atOrBelow(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Replication is how the Syncthing folder holding a directory stands: what
// `memminer status` reports, so an operator can tell a palace behind its
// hive from a hive behind the other machines.
type Replication struct {
	// Folder is the folder's id, Label its name, Path its root here.
	Folder string
	Label  string
	Path   string
	// Paused is set when the folder is paused on this device.
	Paused bool
	FolderStatus
	// Devices are the other devices the folder is shared with, by name.
	Devices []ReplicaDevice
	// Started is when this Syncthing started.
	Started time.Time
}

// Known reports whether this device can know how the folder stands
// against the others: some other device is connected, or there is none.
// With every other device out of reach, "nothing needed" only means
// nothing this device has heard of.
func (r Replication) Known() bool {
	return len(r.Devices) == 0 || r.Connected() > 0
}

// InSync reports whether the folder is idle with nothing left to fetch,
// as far as it can be known (see Known).
func (r Replication) InSync() bool {
	return r.State == "idle" && r.NeedFiles == 0 && !r.Paused && r.Known()
}

// IsolatedSince returns since when no other device has been connected:
// the latest time one was last seen, or when Syncthing started if none
// was seen since (or ever). ok is false when the folder is not isolated
// (a device is connected, or it is shared with none).
func (r Replication) IsolatedSince() (since time.Time, ok bool) {
	if r.Known() {
		return time.Time{}, false
	}
	for _, d := range r.Devices {
		if d.LastSeen.After(since) {
			since = d.LastSeen
		}
	}
	if since.Before(r.Started) {
		since = r.Started // not seen since this Syncthing started
	}
	return since, true
}

// Connected counts the devices of Devices connected now.
func (r Replication) Connected() int {
	n := 0
	for _, d := range r.Devices {
		if d.Connected {
			n++
		}
	}
	return n
}

// ReplicaDevice is another device sharing a folder.
type ReplicaDevice struct {
	ID        DeviceID
	Name      string
	Connected bool
	// ConnectedSince is when its connection started; zero when not
	// connected.
	ConnectedSince time.Time
	// LastSeen is when it was last connected; zero when never.
	LastSeen time.Time
	// Completion is how much of the folder it has, as this device last
	// heard; nil when Syncthing did not say.
	Completion *Completion
}

// Replication reports the state of the folder holding dir. It returns an
// error matching ErrNoFolder when no folder holds dir.
func (c *Client) Replication(ctx context.Context, dir string) (Replication, error) {
	sys, err := c.SystemStatus(ctx)
	if err != nil {
		return Replication{}, err
	}
	folders, err := c.Folders(ctx)
	if err != nil {
		return Replication{}, err
	}
	f, ok := FolderOf(folders, sys.Tilde, dir)
	if !ok {
		return Replication{}, fmt.Errorf("%s: %w", dir, ErrNoFolder)
	}
	r := Replication{Folder: f.ID, Label: f.Label, Path: f.AbsPath(sys.Tilde), Paused: f.Paused, Started: sys.StartTime.UTC()}
	if r.FolderStatus, err = c.FolderStatus(ctx, f.ID); err != nil {
		return Replication{}, err
	}
	devices, err := c.Devices(ctx)
	if err != nil {
		return Replication{}, err
	}
	conns, err := c.Connections(ctx)
	if err != nil {
		return Replication{}, err
	}
	// Without the device statistics a device is never seen: isolation
	// then counts from Syncthing's start.
	seen, err := c.LastSeen(ctx)
	if err != nil && ctx.Err() != nil {
		return Replication{}, err
	}
	for _, id := range f.Devices {
		if id == sys.MyID {
			continue
		}
		d, ok := devices[id]
		if !ok {
			d = Device{ID: id}
		}
		conn := conns[id]
		rd := ReplicaDevice{ID: id, Name: d.DisplayName(), Connected: conn.Connected, ConnectedSince: conn.StartedAt, LastSeen: seen[id]}
		if conn.Connected && rd.LastSeen.Before(conn.StartedAt) {
			rd.LastSeen = conn.StartedAt
		}
		// A Syncthing too old for the endpoint, or one that forgot the
		// device, leaves the completion unknown rather than failing.
		if comp, err := c.Completion(ctx, f.ID, id); err == nil {
			rd.Completion = &comp
		} else if ctx.Err() != nil {
			return Replication{}, err
		}
		r.Devices = append(r.Devices, rd)
	}
	sort.Slice(r.Devices, func(i, j int) bool {
		if r.Devices[i].Name != r.Devices[j].Name {
			return r.Devices[i].Name < r.Devices[j].Name
		}
		return r.Devices[i].ID.String() < r.Devices[j].ID.String()
	})
	return r, nil
}
