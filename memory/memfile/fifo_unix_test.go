//go:build unix

package memfile

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadRefusesFIFO: a memory.md that is a named pipe is refused at
// once, not waited on for a writer (which no signal would interrupt).
func TestReadRefusesFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memory.md")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Read(path, 0)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Fatalf("Read(fifo) = %v, want ErrNotRegular", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Read blocked on a FIFO")
	}
}
