package hivefile

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openResolveNoLinks opens path with openat2 and RESOLVE_NO_SYMLINKS:
// the kernel refuses a symlink in any component (ELOOP, made ErrLink).
// ok is false where openat2 is not there (Linux before 5.6) or a
// sandbox refuses it: the caller walks the path itself.
func openResolveNoLinks(path string, flag int, perm fs.FileMode) (f *os.File, err error, ok bool) {
	how := unix.OpenHow{
		Flags:   uint64(flag | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	if flag&os.O_CREATE != 0 {
		how.Mode = uint64(perm.Perm())
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &how)
	switch {
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
		return nil, nil, false
	case errors.Is(err, unix.ELOOP):
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrLink}, true
	case err != nil:
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}, true
	}
	return os.NewFile(uintptr(fd), path), nil, true
}
