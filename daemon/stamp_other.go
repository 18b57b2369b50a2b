//go:build !linux

package daemon

import "os"

// statOf stats path, following links: mtime and size (where stat(2)
// has no portable field for the change time).
func statOf(path string) (statKey, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return statKey{}, false
	}
	t := fi.ModTime().UnixNano()
	return statKey{size: fi.Size(), mode: uint32(fi.Mode()), mtime: t, ctime: t}, true
}
