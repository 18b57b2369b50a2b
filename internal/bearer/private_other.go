//go:build !unix

package bearer

import (
	"fmt"
	"io/fs"
)

// private says why fi is not a private file; without Unix modes only a
// non-regular file is refused (the file lives in the user's profile).
func private(fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file")
	}
	return nil
}
