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

// Connections fetches /rest/system/connections: for each device Syncthing
// knows, whether it is connected now.
func (c *Client) Connections(ctx context.Context) (map[DeviceID]bool, error) {
	const path = "/rest/system/connections"
	var raw struct {
		Connections map[string]struct {
			Connected bool `json:"connected"`
		} `json:"connections"`
	}
	if err := c.DoJSON(ctx, http.MethodGet, path, nil, &raw); err != nil {
		return nil, err
	}
	out := make(map[DeviceID]bool, len(raw.Connections))
	for s, conn := range raw.Connections {
		id, err := ParseDeviceID(s)
		if err != nil {
			return nil, fmt.Errorf("syncthing GET %s: device %q: %w", path, s, err)
		}
		out[id] = conn.Connected
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
}

// InSync reports whether the folder is idle with nothing left to fetch.
func (r Replication) InSync() bool {
	return r.State == "idle" && r.NeedFiles == 0 && !r.Paused
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
	r := Replication{Folder: f.ID, Label: f.Label, Path: f.AbsPath(sys.Tilde), Paused: f.Paused}
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
	for _, id := range f.Devices {
		if id == sys.MyID {
			continue
		}
		d, ok := devices[id]
		if !ok {
			d = Device{ID: id}
		}
		r.Devices = append(r.Devices, ReplicaDevice{ID: id, Name: d.DisplayName(), Connected: conns[id]})
	}
	sort.Slice(r.Devices, func(i, j int) bool {
		if r.Devices[i].Name != r.Devices[j].Name {
			return r.Devices[i].Name < r.Devices[j].Name
		}
		return r.Devices[i].ID.String() < r.Devices[j].ID.String()
	})
	return r, nil
}
