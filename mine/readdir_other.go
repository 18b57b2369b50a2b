//go:build !unix

package mine

import (
	"fmt"
	"io/fs"
	"os"
)

// readDirNoFollow is os.ReadDir of a directory that is not a link, with
// its stat; here the check and the listing are two steps.
func readDirNoFollow(dir string) ([]fs.DirEntry, fs.FileInfo, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, nil, err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, nil, &fs.PathError{Op: "open", Path: dir, Err: fmt.Errorf("is a symlink")}
	}
	entries, err := os.ReadDir(dir)
	return entries, fi, err
}
