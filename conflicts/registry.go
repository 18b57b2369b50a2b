package conflicts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/palace"
)

// RegistryFile is the registry's file name in the palace directory.
const RegistryFile = "conflicts.json"

// registryVersion is the format version of the registry file.
const registryVersion = 1

// maxRegistryBytes bounds what is read of a registry file.
const maxRegistryBytes = 64 << 20

// RegistryPath returns the registry file of the palace in palaceDir.
func RegistryPath(palaceDir string) string { return filepath.Join(palaceDir, RegistryFile) }

// registryFile is the registry's JSON on disk.
type registryFile struct {
	Version int `json:"version"`
	// Hive is the hive the conflicts were found in. Conflicts outside the
	// hive a daemon serves are dropped when it loads the file.
	Hive      string     `json:"hive"`
	Conflicts []Conflict `json:"conflicts"`
}

// ErrCorruptRegistry is returned by ReadRegistry for a registry file that
// is not valid, or not a regular file (a directory, a FIFO).
var ErrCorruptRegistry = errors.New("conflict registry is corrupt")

// ReadRegistry returns the open conflicts recorded in the registry of the
// palace in palaceDir, as the daemon last saved them. A missing file is an
// empty registry; a file that cannot be decoded, or that is not a regular
// file, is an error matching [ErrCorruptRegistry].
func ReadRegistry(palaceDir string) ([]Conflict, error) {
	f, err := readRegistryFile(RegistryPath(palaceDir))
	if err != nil {
		return nil, err
	}
	return f.Conflicts, nil
}

// SetAsideCorrupt moves the registry of the palace in palaceDir aside, with
// its contents, to the name [palace.AsideName] gives when it is corrupt or
// not a regular file, as the daemon does when it loads it, so that it is
// reported once and the registry starts again from what is on disk. Only
// the palace's writer-lock holder may call it. It returns the path it moved
// the file to, or "" when the file is fine or missing.
func SetAsideCorrupt(palaceDir string) (string, error) {
	path := RegistryPath(palaceDir)
	if _, err := readRegistryFile(path); !errors.Is(err, ErrCorruptRegistry) {
		return "", nil
	}
	return moveCorrupt(path)
}

func moveCorrupt(path string) (string, error) {
	aside := palace.AsideName(path)
	if err := os.Rename(path, aside); err != nil {
		return "", fmt.Errorf("move corrupt registry aside: %w", err)
	}
	return aside, nil
}

func readRegistryFile(path string) (registryFile, error) {
	// hivefile.Open: a FIFO must not block the reader.
	fh, err := hivefile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return registryFile{Version: registryVersion}, nil
	}
	if errors.Is(err, hivefile.ErrNotRegular) {
		return registryFile{}, fmt.Errorf("%w: %w", ErrCorruptRegistry, err)
	}
	if err != nil {
		return registryFile{}, fmt.Errorf("read conflict registry: %w", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxRegistryBytes+1))
	if err != nil {
		return registryFile{}, fmt.Errorf("read conflict registry: %w", err)
	}
	if len(data) > maxRegistryBytes {
		return registryFile{}, fmt.Errorf("%w: %s is larger than %d bytes", ErrCorruptRegistry, path, maxRegistryBytes)
	}
	var f registryFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return registryFile{}, fmt.Errorf("%w: %s: %v", ErrCorruptRegistry, path, err)
	}
	if dec.More() {
		return registryFile{}, fmt.Errorf("%w: %s: data after the registry", ErrCorruptRegistry, path)
	}
	if f.Version != registryVersion {
		return registryFile{}, fmt.Errorf("%w: %s: version %d, want %d", ErrCorruptRegistry, path, f.Version, registryVersion)
	}
	for _, c := range f.Conflicts {
		if !filepath.IsAbs(c.Path) || !filepath.IsAbs(c.Original) || (c.FoundBy != FoundByEvent && c.FoundBy != FoundByScan) {
			return registryFile{}, fmt.Errorf("%w: %s: bad entry %+v", ErrCorruptRegistry, path, c)
		}
	}
	return f, nil
}

// registry is the set of open conflicts, keyed by copy path, mirrored to
// its file after every change.
type registry struct {
	path string
	hive *hive.Hive

	mu    sync.Mutex
	open  map[string]Conflict
	names map[string]string // short device id -> name, learnt along the way
	// saveErr is the last failure to write the file ("" after a success).
	saveErr string
	// checkDir, when set, says whether the palace directory may still be
	// written (palace.Palace.CheckDir); a save is refused when not.
	checkDir func() error
}

func newRegistry(path string, h *hive.Hive) *registry {
	return &registry{path: path, hive: h, open: map[string]Conflict{}, names: map[string]string{}}
}

// load reads the file. A corrupt or non-regular file is moved aside (to
// movedTo) and reported as corrupt (the registry starts empty); any other
// error leaves the registry empty too.
func (r *registry) load() (corrupt error, movedTo string, err error) {
	f, err := readRegistryFile(r.path)
	if errors.Is(err, ErrCorruptRegistry) {
		movedTo, rerr := moveCorrupt(r.path)
		return err, movedTo, rerr
	}
	if err != nil {
		return nil, "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range f.Conflicts {
		if !r.hive.Contains(c.Path) {
			continue // found in another hive
		}
		r.open[c.Path] = c
		r.learnLocked(c.Device, c.DeviceName)
	}
	return nil, "", nil
}

func (r *registry) learnLocked(short, name string) {
	if short != "" && name != "" {
		r.names[short] = name
	}
}

// learn records the name of a device.
func (r *registry) learn(short, name string) {
	r.mu.Lock()
	r.learnLocked(short, name)
	r.mu.Unlock()
}

// name returns the known name of a short device id.
func (r *registry) name(short string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.names[short]
}

// has reports whether the copy at path is registered.
func (r *registry) has(path string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.open[path]
	return ok
}

// add registers c unless its path is already open. For an open one it
// fills in a device name that was missing. It reports whether c is new.
// The file is saved after any change.
func (r *registry) add(c Conflict) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.learnLocked(c.Device, c.DeviceName)
	if old, ok := r.open[c.Path]; ok {
		if old.DeviceName == "" && c.DeviceName != "" && old.Device == c.Device {
			old.DeviceName = c.DeviceName
			r.open[c.Path] = old
			return false, r.saveLocked()
		}
		return false, nil
	}
	if c.DeviceName == "" {
		c.DeviceName = r.names[c.Device]
	}
	r.open[c.Path] = c
	return true, r.saveLocked()
}

// resolve removes the conflict of the copy at path, returning it.
func (r *registry) resolve(path string) (Conflict, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.open[path]
	if !ok {
		return Conflict{}, false, nil
	}
	delete(r.open, path)
	return c, true, r.saveLocked()
}

// reconcile applies a scan: copies on disk that are not registered are
// added (Detected and FoundBy as given by the caller in each), registered
// copies gone from disk are resolved, and registered copies take the wing
// the scan gives them (the agents globs may have changed since they were
// recorded). It returns what was added and resolved, each sorted.
func (r *registry) reconcile(onDisk []Conflict) (added, resolved []Conflict, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	present := make(map[string]bool, len(onDisk))
	rewinged := false
	for _, c := range onDisk {
		present[c.Path] = true
		if old, ok := r.open[c.Path]; ok {
			if old.Wing != c.Wing {
				old.Wing = c.Wing
				r.open[c.Path] = old
				rewinged = true
			}
			continue
		}
		// An event may have resolved it since the walk saw it.
		if fi, err := os.Lstat(c.Path); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if c.DeviceName == "" {
			c.DeviceName = r.names[c.Device]
		}
		r.open[c.Path] = c
		added = append(added, c)
	}
	for path, c := range r.open {
		if present[path] {
			continue
		}
		// Not seen by the walk: resolved only when really gone (a walk
		// that failed half-way proves nothing), or when it is reached only
		// through a link leading out of the hive, which no scan follows (a
		// record from before that rule would stay open for ever).
		// A file with conflict markers is resolved when they are gone.
		_, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) || r.hive.LeadsOut(path) || c.Markers && err == nil && !hive.FileHasConflictMarkers(path) {
			delete(r.open, path)
			resolved = append(resolved, c)
		}
	}
	sortConflicts(added)
	sortConflicts(resolved)
	if len(added) > 0 || len(resolved) > 0 || rewinged {
		err = r.saveLocked()
	}
	return added, resolved, err
}

// list returns the open conflicts, sorted; never nil.
func (r *registry) list() []Conflict {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Conflict, 0, len(r.open))
	for _, c := range r.open {
		out = append(out, c)
	}
	sortConflicts(out)
	return out
}

// count returns the number of open conflicts.
func (r *registry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.open)
}

// lastSaveError is the error of the last save, "" when it worked.
func (r *registry) lastSaveError() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.saveErr
}

// save writes the file now (after a failed save, to retry).
func (r *registry) save() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.saveLocked()
}

// saveLocked writes the registry atomically: a temporary file in the same
// directory, fsynced, renamed over the old one, and the directory fsynced.
func (r *registry) saveLocked() error {
	f := registryFile{Version: registryVersion, Hive: r.hive.Dir(), Conflicts: make([]Conflict, 0, len(r.open))}
	for _, c := range r.open {
		f.Conflicts = append(f.Conflicts, c)
	}
	sortConflicts(f.Conflicts)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode conflict registry: %w", err)
	}
	data = append(data, '\n')
	if r.checkDir != nil {
		err = r.checkDir()
	}
	if err == nil {
		err = atomicfile.Write(r.path, data, 0o600)
	}
	if err != nil {
		err = fmt.Errorf("write %s: %w", r.path, err)
		r.saveErr = err.Error()
	} else {
		r.saveErr = ""
	}
	return err
}
