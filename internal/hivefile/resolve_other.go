//go:build unix && !linux

package hivefile

import (
	"io/fs"
	"os"
)

// openResolveNoLinks: only Linux has openat2; the caller walks the path.
func openResolveNoLinks(string, int, fs.FileMode) (*os.File, error, bool) {
	return nil, nil, false
}
