//go:build unix

package hivefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// openNoFollow opens path (absolute, or made so) following no symlink
// on the way: one anywhere, even swapped in a moment ago, fails with
// ErrLink instead of being followed. On Linux the kernel walks the path
// so (openat2 with RESOLVE_NO_SYMLINKS), one system call; elsewhere, or
// where openat2 is refused, the walk is made one component at a time,
// each opened relative to the descriptor of the directory before it
// with O_NOFOLLOW. O_NONBLOCK keeps a FIFO's open from waiting for a writer;
// reads and writes of a regular file ignore it.
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if f, err, ok := openResolveNoLinks(path, flag, perm); ok {
		return f, err
	}
	return openWalk(path, flag, perm)
}

// openWalk is openNoFollow one component at a time.
func openWalk(path string, flag int, perm fs.FileMode) (*os.File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	dir, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	parts := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	for _, name := range parts[:len(parts)-1] {
		next, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			err = linkError(dir, name, err)
			_ = unix.Close(dir)
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		_ = unix.Close(dir)
		dir = next
	}
	name := parts[len(parts)-1]
	fd, err := unix.Openat(dir, name, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		err = linkError(dir, name, err)
		_ = unix.Close(dir)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	_ = unix.Close(dir)
	return os.NewFile(uintptr(fd), path), nil
}

// linkError is err, the failed open of name in dir, as ErrLink when name
// is a symlink (O_NOFOLLOW's ELOOP, or ENOTDIR with O_DIRECTORY).
func linkError(dir int, name string, err error) error {
	if !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
		return err
	}
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return ErrLink
	}
	return err
}
