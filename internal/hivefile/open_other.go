//go:build !unix

package hivefile

import (
	"io/fs"
	"os"
)

// openNoFollow opens path; outside Unix opening a file does not wait for
// a writer, and links are not checked on the way (there is no
// O_NOFOLLOW): the check of the resolved path is all there is.
func openNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}
