// Package hivefile opens and reads the files of a hive (memory.md,
// identity.md, conflict copies): regular files only, and never in a way
// that can block. A FIFO, socket or device with a markdown name is
// refused with [ErrNotRegular] instead of hanging the reader until a
// writer appears, which no signal would interrupt.
package hivefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotRegular is returned (wrapped in an *fs.PathError) for a path that
// is not a regular file once opened.
var ErrNotRegular = errors.New("not a regular file")

// ErrLink is returned (wrapped in an *fs.PathError) when a component of a
// path that was checked to hold no symlink is one now: another user may
// have swapped it in after the check, so it is not followed.
var ErrLink = errors.New("a symlink appeared on the path after it was checked; not followed")

// ErrOutside is returned (wrapped in an *fs.PathError) for a symlink that
// resolves outside the directory its file may be read from.
var ErrOutside = errors.New("a symlink to a file outside its directory; not followed")

// The rule for every file of a hive, which other local users may own: it
// is checked and used through one descriptor. A path is opened following
// no link on the way (openNoFollow: openat2's RESOLVE_NO_SYMLINKS, else
// one component at a time with O_NOFOLLOW), so a file or directory
// swapped for a symlink after a check is refused, never followed to a
// file of the user memminer runs as; the type is checked on the opened
// descriptor (fstat), never by a stat of the path before.

// Open opens path for reading if it is a regular file. A symlink is
// followed only to a file of the directory that holds it (or below): a
// link to another user's file outside is refused with ErrOutside. The
// open itself does not block on a FIFO, and the check is made on the
// opened file, so a file swapped for a FIFO or a link after a stat is
// still refused.
func Open(path string) (*os.File, error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if !errors.Is(err, ErrLink) {
		if err != nil {
			return nil, err
		}
		return regular(f, path) // no link on the way: nothing to check
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: unwrap(err)}
	}
	return OpenIn(dir, filepath.Join(dir, filepath.Base(path)))
}

// OpenIn opens path, which lies in root, for reading if it is a regular
// file. root must be resolved already (no symlinks) and trusted: it is
// not resolved again, and a component of it swapped for a link fails the
// open. A symlink below root is followed only when it resolves inside
// root; the file is then opened by its resolved path, walked without
// following links, so a link swapped in between is refused (ErrLink).
func OpenIn(root, path string) (*os.File, error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if errors.Is(err, ErrLink) {
		real, rerr := filepath.EvalSymlinks(path)
		if rerr != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: unwrap(rerr)}
		}
		if rel, rerr := filepath.Rel(root, real); rerr != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			return nil, &fs.PathError{Op: "open", Path: path, Err: ErrOutside}
		}
		f, err = openNoFollow(real, os.O_RDONLY, 0)
	}
	if err != nil {
		return nil, err
	}
	return regular(f, path)
}

// OpenFile opens path, resolved already (no symlinks), with flag (and
// perm when it creates the file), following no link on the way: one
// swapped in since the path was resolved fails with ErrLink. Anything but
// a regular file is refused with ErrNotRegular, checked on the opened
// descriptor. The writers of memory files open them so.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := openNoFollow(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return regular(f, path)
}

// regular returns f if it is a regular file, else closes it and fails
// with ErrNotRegular.
func regular(f *os.File, path string) (*os.File, error) {
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, Kind(fi.Mode()))}
	}
	return f, nil
}

// unwrap drops the *PathError of a resolution, whose path is the
// caller's to name.
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// ReadLimited reads at most limit bytes of the regular file path (opened
// as Open does); a caller that must tell a file over its cap passes
// cap+1.
func ReadLimited(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, limit)
}

// ReadAll reads at most limit bytes of f from its start, whatever its
// offset (a writer's descriptor, say).
func ReadAll(f *os.File, limit int64) ([]byte, error) {
	// Sized by the file, as os.ReadFile does: io.ReadAll would grow its
	// buffer step by step, allocating more than twice the file.
	size := max(limit, 0)
	if fi, err := f.Stat(); err == nil && fi.Size() < limit {
		size = fi.Size() + 1 // one more byte reads EOF, or what the file grew by
	}
	data := make([]byte, 0, size)
	r := io.NewSectionReader(f, 0, max(limit, 0))
	for {
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // it grew: let append size the rest
		}
	}
}

// Kind names the type of a file that is not regular, for messages.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "irregular file"
}
