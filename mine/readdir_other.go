//go:build !unix

package mine

import (
	"fmt"
	"io/fs"
	"os"
)

// readDirNoFollow is os.ReadDir of a directory that is not a link; here
// the check and the listing are two steps.
func readDirNoFollow(dir string) ([]fs.DirEntry, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: fmt.Errorf("is a symlink")}
	}
	return os.ReadDir(dir)
}
