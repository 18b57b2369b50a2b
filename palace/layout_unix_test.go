//go:build unix

package palace

import (
	"os"
	"syscall"
	"testing"
)

// TestWingFileFIFOIsRepaired: a named pipe where a wing file should be
// once blocked every open of the palace in its read.
func TestWingFileFIFOIsRepaired(t *testing.T) {
	testWrongKindOfWingFile(t, "named pipe", func(path string) error {
		return syscall.Mkfifo(path, 0o600)
	}, func(t *testing.T, aside string) {
		if fi, err := os.Lstat(aside); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("the pipe set aside: %v, %v", fi, err)
		}
	})
}
