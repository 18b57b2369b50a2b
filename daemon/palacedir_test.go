package daemon

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/palace"
)

// TestMovedPalaceStopsTheDaemon: after `mv P P-moved` and a new palace
// made at P (as `mine --palace P` does, taking P's new lock at once), the
// daemon, whose lock guards P-moved, writes nothing into the new P and
// stops with an error that says why; the new P's socket is left alone.
func TestMovedPalaceStopsTheDaemon(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	dir := filepath.Join(tmp, "palace")
	r := start(t, Options{Palace: dir, Hive: hive})
	r.idle(t, 1)

	if err := os.Rename(dir, filepath.Join(tmp, "palace-moved")); err != nil {
		t.Fatal(err)
	}
	other, err := palace.Open(context.Background(), dir, palace.Options{})
	if err != nil {
		t.Fatalf("a new writer at the old path: %v", err)
	}
	defer other.Close()
	socket := SocketPath(dir)
	if err := os.WriteFile(socket, nil, 0o600); err != nil { // stands for another daemon's socket
		t.Fatal(err)
	}
	// Give the daemon something to write.
	testutil.AppendFile(t, filepath.Join(hive, "agents", "dwight", "memory.md"), "\n- The zebra-quartz rotation runs at noon.\n")
	<-r.done
	if !errors.Is(r.err, palace.ErrDirReplaced) {
		t.Fatalf("Run = %v, want an error matching palace.ErrDirReplaced", r.err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "wings"))
	if err != nil || len(entries) != 0 {
		t.Errorf("the daemon wrote into the new palace: %v, %v", entries, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
		t.Error("the daemon wrote a manifest into the new palace")
	}
	if _, err := os.Stat(socket); err != nil {
		t.Errorf("the daemon removed the socket at the old path: %v", err)
	}
}
