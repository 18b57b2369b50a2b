//go:build unix

package bearer

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// private says why fi is not a file only the current user can read.
func private(fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file")
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("mode %04o", perm)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("owned by uid %d, not %d", st.Uid, os.Getuid())
	}
	return nil
}
