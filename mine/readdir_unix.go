//go:build unix

package mine

import (
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

// readDirNoFollow is os.ReadDir of a directory that is not a link: the
// open itself refuses a link, so no swap after a check can lead it away.
// It returns the directory's stat as it was before the listing too (nil
// when it could not be taken).
func readDirNoFollow(dir string) ([]fs.DirEntry, fs.FileInfo, error) {
	f, err := os.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, _ := f.Stat() // nil when it fails
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, info, err
}
