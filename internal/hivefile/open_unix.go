//go:build unix

package hivefile

import (
	"os"
	"syscall"
)

// openNonBlocking opens path with O_NONBLOCK: opening a FIFO for reading
// without it waits for a writer. Reads of a regular file ignore the flag.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
