//go:build !linux

package sttest

import (
	"os"
	"time"
)

// changeTime is not implemented here; callers fall back to the time a file
// was first seen.
func changeTime(os.FileInfo) (time.Time, bool) { return time.Time{}, false }
