//go:build unix

package hivefile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// specialFiles makes the files a FIFO named identity.md stands for: open
// for reading waits for a writer unless done without blocking.
func specialFiles(t *testing.T, dir string) []readCase {
	fifo := filepath.Join(dir, "identity.md")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "fifo-link.md")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	return []readCase{
		{"fifo", fifo, 100, "", ErrNotRegular},
		{"symlink to fifo", link, 100, "", ErrNotRegular},
		{"character device", os.DevNull, 100, "", ErrNotRegular},
	}
}
