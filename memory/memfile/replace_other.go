//go:build !linux

package memfile

import "os"

// replace renames tmp over path (old, the file checked, is carried over by
// the caller).
func replace(tmp, path string, _ *os.File) error { return rename(tmp, path) }
