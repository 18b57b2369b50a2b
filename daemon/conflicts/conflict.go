package conflicts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/memminer/memminer/internal/agentglob"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/syncthing"
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
}

// List is the shape of `memminer conflicts --json` and of GET /conflicts.
type List struct {
	Conflicts []Conflict `json:"conflicts"`
	// ScanError, when set, says why the walk of the hive made for this
	// list was incomplete: conflicts may be missing.
	ScanError string `json:"scan_error,omitempty"`
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

// hive is the hive directory as configured (absolute) and with symlinks
// resolved, so that paths Syncthing reports through either form map onto
// the hive, and the globs that find its agent directories.
type hive struct {
	abs, real string
	globs     agentglob.Set
}

// newHive returns the hive at dir whose agent directories are agents/<id>
// and those the globs in agents match.
func newHive(dir string, agents []string) (hive, error) {
	globs, err := agentglob.New(agents)
	if err != nil {
		return hive{}, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return hive{}, fmt.Errorf("hive %s: %w", dir, err)
	}
	h := hive{abs: abs, real: abs, globs: globs}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		h.real = r
	}
	return h, nil
}

// rel returns path relative to the hive, or false when path lies outside it.
func (h hive) rel(path string) (string, bool) {
	for _, root := range []string{h.abs, h.real} {
		if r, ok := within(root, path); ok {
			return r, true
		}
	}
	// The path may reach the hive through a symlink of its own.
	if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		p := filepath.Join(dir, filepath.Base(path))
		for _, root := range []string{h.abs, h.real} {
			if r, ok := within(root, p); ok {
				return r, true
			}
		}
	}
	return "", false
}

// contains reports whether path lies inside the hive as configured.
func (h hive) contains(path string) bool {
	_, ok := within(h.abs, path)
	return ok
}

// within returns path relative to root when it lies strictly below it.
func within(root, path string) (string, bool) {
	r, err := filepath.Rel(root, path)
	if err != nil || r == "." || r == ".." || filepath.IsAbs(r) || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return r, true
}

// leadsOut reports whether path, named below the hive, really lies
// outside it: it is reached through a symlink that leads out, so it is in
// no agent directory (see agentglob.Match.Outside).
func (h hive) leadsOut(path string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	_, ok := within(h.real, real)
	return !ok
}

// wingOf returns the wing of a hive-relative path below an agent
// directory: the directory's name normalised (<id> of agents/<id>/…), or
// "" for a path elsewhere (or a name that is no valid wing id, which the
// daemon does not mine either). A copy in a directory whose wing id an
// earlier agent directory takes counts for that wing too, so a check of
// the wing before writing sees it; a copy in an agent directory's
// subdirectory that a glob matches counts for the outer agent directory,
// whose wing its files are mined into.
func (h hive) wingOf(rel string) string {
	dir, below, ok := h.globs.AgentOf(filepath.ToSlash(rel))
	if !ok || below == "" {
		return ""
	}
	w, err := palace.NormalizeWingID(path.Base(dir))
	if err != nil {
		return ""
	}
	return w
}

// found is a conflict copy seen on disk.
type found struct {
	c       Conflict // Path, Original, Wing, Device set
	modTime time.Time
}

// agentDir is one agent directory of the hive.
type agentDir struct {
	wing string // the normalised name
	path string // the hive as configured joined with the directory
	link bool   // reached through a symlink, which a walk of the hive does not enter
}

// agentDirs lists the hive's agent directories whose names are valid wing
// ids, as the daemon mines them: agents/<id> and the directories the
// globs match, symlinks to directories included, hidden ones left out.
// Directories with the same wing id are all listed (see wingOf); one
// inside another agent directory is not: it is part of that one. What
// could be listed is returned with the first error.
func agentDirs(h hive) ([]agentDir, error) {
	matches, err := h.globs.Find(h.abs)
	if errors.Is(err, syscall.ENOTDIR) {
		err = nil // a file where the globs want a directory holds no agents
	}
	if err != nil {
		err = fmt.Errorf("list agent directories: %w", err)
	}
	var out []agentDir
	for _, m := range matches {
		if m.Inside != "" || m.Outside {
			continue // not an agent directory: mine and the daemon skip it too
		}
		w, werr := palace.NormalizeWingID(path.Base(m.Rel))
		if werr != nil {
			continue
		}
		out = append(out, agentDir{wing: w, path: m.Path, link: m.Link || m.ViaLink})
	}
	return out, err
}

// HiveWings returns the wings of the hive at dir: the normalised names of
// its agents/<id>/ directories and of those the globs in agents match
// (symlinks to directories inside the hive included; links leading out of
// it, hidden ones and names that are no valid wing id left out), sorted and without duplicates. A hive without
// agent directories has none.
func HiveWings(dir string, agents []string) ([]string, error) {
	h, err := newHive(dir, agents)
	if err != nil {
		return nil, err
	}
	dirs, err := agentDirs(h)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range dirs {
		out = append(out, d.wing)
	}
	sort.Strings(out)
	return slices.Compact(out), nil
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

// scanDir walks root for conflict copies like syncthing.ScanConflicts, but
// follows root itself when it is a symlink (a hive or an agent directory
// may be one); the paths returned stay below root as given.
func scanDir(ctx context.Context, root string) ([]syncthing.FoundConflict, error) {
	walked := root
	if fi, err := os.Lstat(root); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if r, err := filepath.EvalSymlinks(root); err == nil {
			walked = r
		}
	}
	fcs, err := syncthing.ScanConflicts(ctx, walked)
	if walked != root {
		for i := range fcs {
			fcs[i].Path = rebase(walked, root, fcs[i].Path)
			fcs[i].Original = rebase(walked, root, fcs[i].Original)
		}
	}
	return fcs, err
}

// rebase moves path from below old to below root.
func rebase(old, root, path string) string {
	if r, ok := within(old, path); ok {
		return filepath.Join(root, r)
	}
	return path
}

// scanHive walks the hive for conflict copies: all of it, agent
// directories that are symlinks included, or only the agent directories of
// wing when wing is set (none is no error). Paths are the configured hive
// joined with the relative path. The first error (an unreadable directory)
// is returned along with what was found.
func scanHive(ctx context.Context, h hive, wing string) ([]found, error) {
	dirs, firstErr := agentDirs(h)
	var roots []string
	if wing == "" {
		roots = append(roots, h.abs)
	}
	for _, d := range dirs {
		// A walk of the hive does not enter symlinks; walk those apart.
		if (wing == "" && d.link) || (wing != "" && d.wing == wing) {
			roots = append(roots, d.path)
		}
	}
	var out []found
	// One copy may be reached twice: by the walk of the hive and through
	// a link to it (agents/ itself may be a link into the hive). It is one
	// conflict, kept under the path that gives it a wing.
	byReal := map[string]int{}
	for _, root := range roots {
		fcs, err := scanDir(ctx, root)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		for _, f := range fcs {
			rel, ok := within(h.abs, f.Path)
			if !ok {
				continue
			}
			wing := h.wingOf(rel)
			key, rerr := filepath.EvalSymlinks(f.Path)
			if rerr != nil {
				key = f.Path
			}
			if i, dup := byReal[key]; dup {
				if out[i].c.Wing == "" && wing != "" {
					out[i].c.Path, out[i].c.Original, out[i].c.Wing = f.Path, f.Original, wing
				}
				continue
			}
			byReal[key] = len(out)
			out = append(out, found{
				c: Conflict{
					Path:     f.Path,
					Original: f.Original,
					Wing:     wing,
					Device:   f.Name.ShortDevice,
				},
				modTime: f.ModTime,
			})
		}
		if ctx.Err() != nil {
			break
		}
	}
	return out, firstErr
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
	h, err := newHive(dir, agents)
	if err != nil {
		return nil, err
	}
	copies, err := scanHive(ctx, h, wing)
	known = slices.Clone(known)
	for i := range known {
		// A record made before the agents globs changed takes the wing
		// the copy's directory has now.
		if rel, ok := within(h.abs, known[i].Path); ok {
			known[i].Wing = h.wingOf(rel)
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
		fcs, err := syncthing.ScanConflicts(ctx, root)
		for _, f := range fcs {
			out = append(out, found{c: Conflict{Path: f.Path, Original: f.Original, Device: f.Name.ShortDevice}, modTime: f.ModTime})
		}
		return out, err
	}
	dir, base := filepath.Split(root)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("scan %s for conflict copies: %w", dir, err)
	}
	for _, e := range entries {
		cn, ok := syncthing.ParseConflictName(e.Name())
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
