package memfile

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// replace renames tmp over path. When old (the file checked, held open)
// is given, the two are exchanged atomically (renameat2 RENAME_EXCHANGE)
// and what was displaced is compared with old: a file another writer
// renamed into place after the check is put back, and the write fails with
// ErrChanged, instead of being lost. A file system without the exchange
// gets a plain rename.
func replace(tmp, path string, old *os.File) error {
	if old == nil {
		return rename(tmp, path)
	}
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	displaced, serr := os.Stat(tmp)
	held, herr := old.Stat()
	if serr == nil && herr == nil && !os.SameFile(displaced, held) {
		if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_EXCHANGE); err != nil {
			return fmt.Errorf("write %s: put back the version another writer saved during the write (it is %s): %w", path, tmp, err)
		}
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w (another writer replaced it)", path, ErrChanged)
	}
	return os.Remove(tmp)
}
