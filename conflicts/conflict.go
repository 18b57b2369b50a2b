package conflicts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/palace"
)

// How a conflict was found, in [Conflict.FoundBy].
const (
	// FoundByEvent means Syncthing's event stream reported the copy.
	FoundByEvent = "event"
	// FoundByScan means a walk of the hive (or of a wing's roots) found it.
	FoundByScan = "scan"
)

// Conflict is one open conflict: a Syncthing conflict copy that still
// exists. Its JSON is what `memminer conflicts --json`, GET /conflicts and
// the webhook carry.
type Conflict struct {
	// Path is the conflict copy, absolute.
	Path string `json:"path"`
	// Original is the file the copy conflicts with (same directory).
	Original string `json:"original"`
	// Wing is the agent id of the agent directory holding the copy
	// (agents/<id>/, or one the agents globs match); empty for a copy
	// elsewhere in the hive.
	Wing string `json:"wing"`
	// Detected is when the conflict was detected, UTC, whole seconds. The
	// daemon records when it first saw the copy; a scan without a daemon
	// (and without a registry that knows the copy) uses the copy's
	// modification time instead.
	Detected time.Time `json:"detected"`
	// Device is the 7-character short id of the device whose version won
	// (and so stayed under the original name); empty when Syncthing did
	// not record it.
	Device string `json:"device"`
	// DeviceName is that device's name when known.
	DeviceName string `json:"device_name"`
	// FoundBy is FoundByEvent or FoundByScan.
	FoundBy string `json:"found_by"`
	// Markers is set when the conflict is Git's conflict markers in the
	// memory file itself (Path and Original are then both the file) rather
	// than a Syncthing conflict copy: a merge or rebase the memminer
	// driver did not resolve. It is resolved when the markers are gone.
	Markers bool `json:"markers,omitempty"`
	// Action is what an alert tells of the conflict: ActionOpen, or
	// ActionMerged when the daemon merged it (AutoMerge). Only alerts
	// carry it.
	Action string `json:"action,omitempty"`
	// AutoMerge is what the automatic merge (Options.AutoMerge) is doing
	// with the copy: retrying it, or leaving it to a person, and why.
	// Absent when it has not tried.
	AutoMerge *AutoMergeState `json:"auto_merge,omitempty"`
}

// What an alert tells of a conflict, in Conflict.Action.
const (
	ActionOpen   = "open"
	ActionMerged = "merged"
)

// List is the shape of `memminer conflicts --json` and of GET /conflicts.
type List struct {
	Conflicts []Conflict `json:"conflicts"`
	// ScanError says why the walk of the hive made for this list was
	// incomplete (conflicts may be missing); null when it was complete.
	ScanError *string `json:"scan_error"`
}

// Wing returns the conflicts of wing (every conflict when wing is empty).
// The result's Conflicts is never nil, so it encodes as [].
func (l List) Wing(wing string) List {
	out := List{Conflicts: []Conflict{}, ScanError: l.ScanError}
	for _, c := range l.Conflicts {
		if wing == "" || c.Wing == wing {
			out.Conflicts = append(out.Conflicts, c)
		}
	}
	return out
}

// sortConflicts orders conflicts by wing, then path.
func sortConflicts(cs []Conflict) {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].Wing != cs[j].Wing {
			return cs[i].Wing < cs[j].Wing
		}
		return cs[i].Path < cs[j].Path
	})
}

// detectedTime is how Detected times are kept: UTC, whole seconds.
func detectedTime(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }

// wingOf returns the wing of a conflict copy at path (see hive.Locate):
// "" for a copy outside every agent directory, or in one whose name is no
// wing id (which the daemon does not mine either).
func wingOf(h *hive.Hive, path string) string {
	if loc := h.Locate(path); loc.Rel != "" {
		return loc.Wing
	}
	return ""
}

// found is a conflict copy seen on disk.
type found struct {
	c       Conflict // Path, Original, Wing, Device set
	modTime time.Time
}

// UnknownWingError is the error for a wing that is neither an agent
// directory of the hive nor a wing of the palace: it matches
// palace.ErrUnknownWing and names the known wings, like an unknown wing in
// a search.
func UnknownWingError(wing string, known []string) error {
	known = slices.Compact(slices.Sorted(slices.Values(known)))
	if len(known) == 0 {
		return fmt.Errorf("%w %q: neither the palace nor the hive has any wing yet", palace.ErrUnknownWing, wing)
	}
	return fmt.Errorf("%w %q (known wings: %s)", palace.ErrUnknownWing, wing, strings.Join(known, ", "))
}

// Wings are what KnownWing asks of the palace: whether it has a wing
// (Has), and its wings (All), asked only to name them.
type Wings struct {
	Has func(wing string) (bool, error)
	All func() ([]string, error)
}

// PalaceWings are the wings of p (none when p is nil) as KnownWing asks
// for them.
func PalaceWings(p *palace.Palace) Wings {
	return Wings{
		Has: func(wing string) (bool, error) { return p != nil && p.HasWing(wing), nil },
		All: func() ([]string, error) {
			var ids []string
			if p != nil {
				for _, wi := range p.Wings() {
					ids = append(ids, wi.ID)
				}
			}
			return ids, nil
		},
	}
}

// ErrNothingToScan is the refusal of a scan without a daemon when no
// hive is configured and the palace has no wings to take directories
// from.
var ErrNothingToScan = errors.New("no hive to scan, and the palace has no wings to take directories from")

// KnownWing is the one rule of an unknown --wing of conflicts, with a
// daemon and without (docs/conflicts.md): nil when wing is an agent
// directory of the hive (h; nil when no hive is configured) or a wing of
// the palace, else an
// UnknownWingError naming the known wings of both. A hive whose wings
// cannot be read tells nothing (nil): the scan reports it.
func KnownWing(wing string, h *hive.Hive, p Wings) error {
	var hiveWings []string
	if h != nil {
		var err error
		hiveWings, err = h.Wings()
		if err != nil || slices.Contains(hiveWings, wing) {
			return nil
		}
	}
	if has, err := p.Has(wing); has || err != nil {
		return err
	}
	all, err := p.All()
	if err != nil {
		return err
	}
	return UnknownWingError(wing, append(hiveWings, all...))
}

// scanHive lists the conflict copies of the hive (only those of wing's
// agent directories when wing is set) as hive.Hive.ConflictCopies finds
// them.
func scanHive(ctx context.Context, h *hive.Hive, wing string) ([]found, error) {
	copies, err := h.ConflictCopies(ctx, wing)
	out := make([]found, 0, len(copies))
	for _, f := range copies {
		out = append(out, found{
			c:       Conflict{Path: f.Path, Original: f.Original, Wing: f.Wing, Device: f.Name.ShortDevice, Markers: f.Markers},
			modTime: f.ModTime,
		})
	}
	return out, err
}

// fromDisk turns copies found by a scan into conflicts without a daemon:
// a copy the registry records keeps its record; any other gets its
// modification time as Detected, FoundByScan, and the name of its device
// when a recorded conflict names the same device.
func fromDisk(copies []found, known []Conflict) []Conflict {
	byPath := make(map[string]Conflict, len(known))
	names := map[string]string{}
	for _, k := range known {
		byPath[k.Path] = k
		if k.Device != "" && k.DeviceName != "" {
			names[k.Device] = k.DeviceName
		}
	}
	out := make([]Conflict, 0, len(copies))
	for _, f := range copies {
		if k, ok := byPath[f.c.Path]; ok {
			out = append(out, k)
			continue
		}
		c := f.c
		c.Detected = detectedTime(f.modTime)
		c.FoundBy = FoundByScan
		c.DeviceName = names[c.Device]
		out = append(out, c)
	}
	sortConflicts(out)
	return out
}

// ScanHive lists the open conflicts of the hive at dir, whose agent
// directories are agents/<id> and those the globs in agents match, without
// a daemon: every conflict copy below it (only below the agent directories
// of wing when wing is set). A copy that known (a registry, see [ReadRegistry]) records keeps
// that record, so the list matches what the daemon would answer; any other
// copy's Detected is its modification time and its FoundBy is
// [FoundByScan]. Copies found before an error (an unreadable directory)
// are returned along with it.
func ScanHive(ctx context.Context, dir string, agents []string, wing string, known []Conflict) ([]Conflict, error) {
	h, err := hive.Open(dir, agents)
	if err != nil {
		return nil, err
	}
	copies, err := scanHive(ctx, h, wing)
	known = slices.Clone(known)
	for i := range known {
		// A record made before the agents globs changed takes the wing
		// the copy's directory has now.
		if h.Contains(known[i].Path) {
			known[i].Wing = wingOf(h, known[i].Path)
		}
	}
	return fromDisk(copies, known), err
}

// WingRoots are the paths one wing was mined from (palace.WingInfo.Roots).
type WingRoots struct {
	Wing  string
	Roots []string
}

// ScanWings lists the open conflicts below the roots of each wing, for
// when no hive is configured: a directory root is walked, a file root's
// own conflict copies (in its directory) are listed. Every conflict found
// under a wing's roots belongs to that wing. Records in known are reused
// as in [ScanHive]. Missing roots are skipped; the first other error is
// returned along with what was found.
func ScanWings(ctx context.Context, wings []WingRoots, known []Conflict) ([]Conflict, error) {
	var all []found
	var firstErr error
	seen := map[string]bool{}
	for _, w := range wings {
		for _, root := range w.Roots {
			copies, err := scanRoot(ctx, root)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			for _, f := range copies {
				if seen[f.c.Path] {
					continue
				}
				seen[f.c.Path] = true
				f.c.Wing = w.Wing
				all = append(all, f)
			}
		}
	}
	return fromDisk(all, known), firstErr
}

// scanRoot finds the conflict copies of one mined root.
func scanRoot(ctx context.Context, root string) ([]found, error) {
	info, err := os.Stat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scan %s for conflict copies: %w", root, err)
	}
	var out []found
	if info.IsDir() {
		fcs, err := hive.ScanConflicts(ctx, root)
		for _, f := range fcs {
			out = append(out, found{c: Conflict{Path: f.Path, Original: f.Original, Device: f.Name.ShortDevice, Markers: f.Markers}, modTime: f.ModTime})
		}
		return out, err
	}
	if hive.IsMemoryFile(root) && hive.FileHasConflictMarkers(root) {
		out = append(out, found{c: Conflict{Path: root, Original: root, Markers: true}, modTime: info.ModTime()})
	}
	dir, base := filepath.Split(root)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("scan %s for conflict copies: %w", dir, err)
	}
	for _, e := range entries {
		cn, ok := hive.ParseConflictName(e.Name())
		if !ok || cn.Original != base || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // gone since the listing
		}
		path := filepath.Join(dir, e.Name())
		out = append(out, found{c: Conflict{Path: path, Original: root, Device: cn.ShortDevice}, modTime: fi.ModTime()})
	}
	return out, nil
}
