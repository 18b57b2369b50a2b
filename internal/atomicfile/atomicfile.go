// Package atomicfile replaces files so that a reader, or a crash, sees
// the old content or the new, never a part: the data goes to a temporary
// file beside the target, is fsynced and renamed over it, and the
// directory is fsynced. A writer killed half-way leaves its temporary
// file behind; [RemoveStale] clears those, and must be called only by the
// one process allowed to write the directory (the palace's lock holder).
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Write replaces path with data, the file getting mode perm.
func Write(path string, data []byte, perm fs.FileMode) error {
	return WriteFunc(path, perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteFunc replaces path with what write writes to the temporary file,
// the file getting mode perm: a large file is streamed to disk rather than
// built in memory first. write may seek and write at offsets (to fill in
// a header last); the file is synced, closed and renamed after it returns
// nil, and removed if it returns an error.
func WriteFunc(path string, perm fs.FileMode, write func(f *os.File) error) (err error) {
	dir := filepath.Dir(path)
	f, err := CreateTemp(path)
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory, so that a rename in it survives a crash.
// File systems that cannot sync directories are not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// CreateTemp creates the temporary file a write of path goes through,
// beside it: ".NAME.tmp-N", a hidden name that mine, the daemon and the
// index skip, and the one IsTemp and RemoveStale know. Every writer that
// replaces a file by renaming over it names its temporary file so.
func CreateTemp(path string) (*os.File, error) {
	return os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
}

// tempName matches the temporary files CreateTemp makes (".NAME.tmp-123"),
// and ".NAME.123.tmp" and ".NAME.memminer-123", which earlier versions
// made; its first group is NAME, the file written.
var tempName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\.(.+)\.(?:tmp-[0-9]+|[0-9]+\.tmp|memminer-[0-9]+)$`)
})

// IsTemp reports whether a file name is that of a temporary file Write
// makes: never the target of a write, only a leftover or one in flight.
func IsTemp(name string) bool {
	_, ok := tempTarget(name)
	return ok
}

// tempTarget is the name of the file the temporary file name was to
// replace, and false for a name that is no temporary file.
func tempTarget(name string) (string, bool) {
	// Most names are not hidden: no need to compile the pattern for them.
	if !strings.HasPrefix(name, ".") {
		return "", false
	}
	m := tempName().FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// RemoveStale removes the temporary files of interrupted writes in dir
// (not below it) and returns how many it removed and their size. entries,
// when not nil, is dir's listing the caller just made. target, when not
// empty, limits it to the temporary files of writes of dir's file of that
// name. Call it only as the one process allowed to write what it removes
// (the palace's lock holder, the holder of a memory file's directory
// lock): a write in flight would lose its temporary file.
func RemoveStale(dir string, entries []fs.DirEntry, target string) (removed int, bytes int64, err error) {
	if entries == nil {
		if entries, err = os.ReadDir(dir); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return 0, 0, nil
			}
			return 0, 0, err
		}
	}
	var errs []error
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if of, ok := tempTarget(e.Name()); !ok || (target != "" && of != target) {
			continue
		}
		var size int64
		if info, err := e.Info(); err == nil {
			size = info.Size()
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		removed++
		bytes += size
	}
	return removed, bytes, errors.Join(errs...)
}
