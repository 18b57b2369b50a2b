package syncthing

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// SystemStatus is the part of /rest/system/status memminer uses.
type SystemStatus struct {
	// MyID is this Syncthing's own device id.
	MyID DeviceID
	// StartTime is when this Syncthing process started. It changes on
	// every restart, which is how a restart (and so a reset of event ids)
	// is detected.
	StartTime time.Time
	// Uptime is the process uptime in seconds.
	Uptime int
	// Tilde is the home directory Syncthing expands "~" in folder paths to.
	Tilde string
}

// SystemStatus fetches /rest/system/status.
func (c *Client) SystemStatus(ctx context.Context) (SystemStatus, error) {
	const path = "/rest/system/status"
	var raw struct {
		MyID      string    `json:"myID"`
		StartTime time.Time `json:"startTime"`
		Uptime    int       `json:"uptime"`
		Tilde     string    `json:"tilde"`
	}
	if err := c.DoJSON(ctx, http.MethodGet, path, nil, &raw); err != nil {
		return SystemStatus{}, err
	}
	id, err := ParseDeviceID(raw.MyID)
	if err != nil {
		return SystemStatus{}, fmt.Errorf("syncthing GET %s: myID %q: %w", path, raw.MyID, err)
	}
	return SystemStatus{MyID: id, StartTime: raw.StartTime, Uptime: raw.Uptime, Tilde: raw.Tilde}, nil
}

// Folder is one shared folder from /rest/config/folders.
type Folder struct {
	// ID is the folder id, the same on every device sharing the folder.
	ID string
	// Label is the human-readable name.
	Label string
	// Path is the folder's root on this machine as configured; it may
	// start with "~" (see [Folder.AbsPath]).
	Path string
	// Type is sendreceive, sendonly, receiveonly or receiveencrypted.
	Type string
	// Paused reports whether the folder is paused.
	Paused bool
	// Devices lists the devices the folder is shared with (this one
	// included).
	Devices []DeviceID
}

// AbsPath returns the folder root with a leading "~" replaced by tilde
// (Syncthing's home directory, [SystemStatus.Tilde]) and cleaned.
func (f Folder) AbsPath(tilde string) string {
	p := f.Path
	if tilde != "" && (p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`)) {
		p = tilde + p[1:]
	}
	return filepath.Clean(p)
}

// Folders fetches /rest/config/folders, keyed by folder id.
func (c *Client) Folders(ctx context.Context) (map[string]Folder, error) {
	const path = "/rest/config/folders"
	var raw []struct {
		ID      string `json:"id"`
		Label   string `json:"label"`
		Path    string `json:"path"`
		Type    string `json:"type"`
		Paused  bool   `json:"paused"`
		Devices []struct {
			DeviceID string `json:"deviceID"`
		} `json:"devices"`
	}
	if err := c.DoJSON(ctx, http.MethodGet, path, nil, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]Folder, len(raw))
	for _, r := range raw {
		if r.ID == "" {
			return nil, fmt.Errorf("syncthing GET %s: folder with empty id (path %q)", path, r.Path)
		}
		f := Folder{ID: r.ID, Label: r.Label, Path: r.Path, Type: r.Type, Paused: r.Paused}
		for _, d := range r.Devices {
			id, err := ParseDeviceID(d.DeviceID)
			if err != nil {
				return nil, fmt.Errorf("syncthing GET %s: folder %q: device %q: %w", path, r.ID, d.DeviceID, err)
			}
			f.Devices = append(f.Devices, id)
		}
		out[r.ID] = f
	}
	return out, nil
}

// Device is one device from /rest/config/devices.
type Device struct {
	// ID is the device id.
	ID DeviceID
	// Name is the name given to the device in this Syncthing's config
	// (may be empty).
	Name string
}

// Short returns the 7-character short form of the device id, as used in
// conflict copy names.
func (d Device) Short() string { return d.ID.Short() }

// DisplayName returns the device's name, or its short id when it has none.
func (d Device) DisplayName() string {
	if d.Name != "" {
		return d.Name
	}
	return d.Short()
}

// Devices fetches /rest/config/devices, keyed by device id. Syncthing lists
// its own device there too.
func (c *Client) Devices(ctx context.Context) (map[DeviceID]Device, error) {
	const path = "/rest/config/devices"
	var raw []struct {
		DeviceID string `json:"deviceID"`
		Name     string `json:"name"`
	}
	if err := c.DoJSON(ctx, http.MethodGet, path, nil, &raw); err != nil {
		return nil, err
	}
	out := make(map[DeviceID]Device, len(raw))
	for _, r := range raw {
		id, err := ParseDeviceID(r.DeviceID)
		if err != nil {
			return nil, fmt.Errorf("syncthing GET %s: device %q: %w", path, r.DeviceID, err)
		}
		out[id] = Device{ID: id, Name: r.Name}
	}
	return out, nil
}

// DeviceByShort finds the device whose short id (the 7 characters in a
// conflict copy's name) is short. It reports false when none matches.
func DeviceByShort(devices map[DeviceID]Device, short string) (Device, bool) {
	if len(short) != ShortIDLength {
		return Device{}, false
	}
	for id, d := range devices {
		if id.Short() == short {
			return d, true
		}
	}
	return Device{}, false
}

// Event types memminer cares about.
const (
	// EventLocalChangeDetected is a change found by scanning the local disk
	// (from /rest/events/disk).
	EventLocalChangeDetected = "LocalChangeDetected"
	// EventRemoteChangeDetected is a change pulled from another device and
	// written to the local disk (from /rest/events/disk).
	EventRemoteChangeDetected = "RemoteChangeDetected"
	// EventItemFinished is the end of pulling one item.
	EventItemFinished = "ItemFinished"
	// EventLocalIndexUpdated lists files whose local index entry changed.
	EventLocalIndexUpdated = "LocalIndexUpdated"
)

// Event is one entry of an event stream. Data holds the type-specific
// payload; decode it with [Event.DiskChange], [Event.ItemFinished],
// [Event.LocalIndexUpdated] or json.Unmarshal.
type Event struct {
	// ID is the event's id within the stream it came from; ids restart at
	// 1 when Syncthing restarts.
	ID int `json:"id"`
	// GlobalID numbers events across all streams of one Syncthing process.
	GlobalID int `json:"globalID"`
	// Time is when the event happened.
	Time time.Time `json:"time"`
	// Type is the event type, such as "LocalChangeDetected".
	Type string `json:"type"`
	// Data is the raw payload.
	Data json.RawMessage `json:"data"`
}

// DiskChange is the payload of LocalChangeDetected and RemoteChangeDetected.
type DiskChange struct {
	// Folder is the folder id.
	Folder string `json:"folder"`
	// Label is the folder label.
	Label string `json:"label"`
	// Action is "modified" or "deleted".
	Action string `json:"action"`
	// Type is "file", "dir" or "symlink".
	Type string `json:"type"`
	// Path is relative to the folder root, in native separators.
	Path string `json:"path"`
	// ModifiedBy is the short id of the device that made the change.
	ModifiedBy string `json:"modifiedBy"`
}

// DiskChange decodes a LocalChangeDetected or RemoteChangeDetected payload.
func (e Event) DiskChange() (DiskChange, error) {
	var d DiskChange
	if err := e.decodeData(&d); err != nil {
		return DiskChange{}, err
	}
	return d, nil
}

// ItemFinished is the payload of an ItemFinished event.
type ItemFinished struct {
	// Folder is the folder id.
	Folder string `json:"folder"`
	// Item is the path relative to the folder root.
	Item string `json:"item"`
	// Type is "file", "dir" or "symlink".
	Type string `json:"type"`
	// Action is "update", "delete" or "metadata".
	Action string `json:"action"`
	// Error is set when pulling the item failed.
	Error *string `json:"error"`
}

// ItemFinished decodes an ItemFinished payload.
func (e Event) ItemFinished() (ItemFinished, error) {
	var d ItemFinished
	if err := e.decodeData(&d); err != nil {
		return ItemFinished{}, err
	}
	return d, nil
}

// LocalIndexUpdated is the payload of a LocalIndexUpdated event.
type LocalIndexUpdated struct {
	// Folder is the folder id.
	Folder string `json:"folder"`
	// Filenames lists the updated paths relative to the folder root
	// (deleted files included).
	Filenames []string `json:"filenames"`
	// Sequence is the folder's new local sequence number.
	Sequence int64 `json:"sequence"`
}

// LocalIndexUpdated decodes a LocalIndexUpdated payload.
func (e Event) LocalIndexUpdated() (LocalIndexUpdated, error) {
	var d LocalIndexUpdated
	if err := e.decodeData(&d); err != nil {
		return LocalIndexUpdated{}, err
	}
	return d, nil
}

func (e Event) decodeData(v any) error {
	if err := json.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("decode %s event %d: %w", e.Type, e.ID, err)
	}
	return nil
}

// Events long-polls /rest/events for events with an id greater than since,
// restricted to types (all but the disk events when types is empty). The
// call blocks until an event arrives or timeout passes (then it returns an
// empty slice); timeout is rounded up to whole seconds, and zero or less
// means [DefaultEventTimeout]. Never combine since with Syncthing's limit
// parameter: limit keeps the last events, not the first after since.
//
// An empty 200 body (Syncthing stopped mid-poll) returns [ErrEmptyBody].
func (c *Client) Events(ctx context.Context, since int, types []string, timeout time.Duration) ([]Event, error) {
	q := url.Values{}
	if len(types) > 0 {
		q.Set("events", strings.Join(types, ","))
	}
	return c.pollEvents(ctx, "/rest/events", q, since, timeout)
}

// DiskEvents long-polls /rest/events/disk, which carries only
// LocalChangeDetected and RemoteChangeDetected, like [Client.Events].
func (c *Client) DiskEvents(ctx context.Context, since int, timeout time.Duration) ([]Event, error) {
	return c.pollEvents(ctx, "/rest/events/disk", url.Values{}, since, timeout)
}

func (c *Client) pollEvents(ctx context.Context, path string, q url.Values, since int, timeout time.Duration) ([]Event, error) {
	if timeout <= 0 {
		timeout = DefaultEventTimeout
	}
	if since < 0 {
		since = 0
	}
	secs := timeoutSeconds(timeout)
	q.Set("since", strconv.Itoa(since))
	q.Set("timeout", strconv.Itoa(secs))
	// Syncthing answers after at most the (rounded-up) poll timeout; give
	// it the request timeout on top before calling it unresponsive.
	ctx, cancel := c.withTimeout(ctx, time.Duration(secs)*time.Second+c.requestTimeout)
	defer cancel()
	full := path + "?" + q.Encode()
	data, err := c.do(ctx, http.MethodGet, full, nil)
	if err != nil {
		return nil, err
	}
	var evs []Event
	if err := c.decode(http.MethodGet, path, data, &evs); err != nil {
		return nil, err
	}
	return evs, nil
}
