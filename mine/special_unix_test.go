//go:build unix

package mine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNamedPipeIsReportedNotRead: a FIFO with a markdown name, in an
// agent directory or mined on its own, is reported and never opened for
// a blocking read; a file that turns into one keeps its notes.
func TestNamedPipeIsReportedNotRead(t *testing.T) {
	hive := t.TempDir()
	dir := filepath.Join(hive, "agents", "angela")
	writeFile(t, hive, "agents/angela/memory.md", "- good note\n")
	turned := writeFile(t, hive, "agents/angela/notes.md", "- was a file\n")
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	mineT(t, p, dir, Options{})

	fifo := filepath.Join(dir, "identity.md")
	for _, path := range []string{fifo, turned} {
		_ = os.Remove(path)
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, target := range []string{dir, fifo} {
		var s Summary
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			s, err = Mine(context.Background(), p, target, Options{Wing: "angela"})
		}()
		select {
		case <-done:
			if err != nil {
				t.Fatalf("mine %s: %v", target, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("mine %s blocked on a FIFO", target)
		}
		found := false
		for _, pr := range s.Problems {
			if pr.Path == fifo && strings.Contains(pr.Err, "not a regular file") {
				found = true
			}
		}
		if !found {
			t.Errorf("mine %s: problems %+v, want the FIFO reported", target, s.Problems)
		}
		if target == dir && s.NotesRemoved != 0 {
			t.Errorf("mine %s removed %d notes of the file that became a FIFO", target, s.NotesRemoved)
		}
	}
}
