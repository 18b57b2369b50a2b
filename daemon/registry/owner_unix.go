//go:build unix

package registry

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// ownerProblem says why fi is not owned by the current user, or "".
func ownerProblem(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Sprintf("owned by uid %d, not %d", st.Uid, os.Getuid())
	}
	return ""
}

// dirProblem says why dir cannot be trusted to hold only the current
// user's records, or "": it must be a directory (not a link to one) the
// user owns that no one else may read or write (mode 0700).
func dirProblem(dir string) string {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err.Error()
	}
	if !fi.IsDir() {
		return "not a directory"
	}
	if p := ownerProblem(fi); p != "" {
		return p
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Sprintf("mode %04o, not 0700", perm)
	}
	return ""
}
