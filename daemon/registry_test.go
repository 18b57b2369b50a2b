package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/daemon/registry"
)

// TestDaemonRecordsItselfWhileServing checks the daemon's record in the
// registry of running daemons: there while it serves, gone once it stopped.
func TestDaemonRecordsItselfWhileServing(t *testing.T) {
	tmp := t.TempDir()
	reg := filepath.Join(tmp, "run", "memminer", "daemons")
	palaceDir := filepath.Join(tmp, "palace")
	r := start(t, Options{Palace: palaceDir, Hive: testHive(t, tmp), Registry: reg})
	r.idle(t, 1)
	recs, err := registry.List(context.Background(), reg)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("records while serving: %+v", recs)
	}
	rec := recs[0]
	if rec.PID != os.Getpid() || rec.Palace != palaceDir || rec.Socket != r.d.SocketPath() || rec.Hive != filepath.Join(tmp, "hive") || rec.Started.IsZero() {
		t.Fatalf("record %+v", rec)
	}
	r.stop(t)
	entries, err := os.ReadDir(reg)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("the stopped daemon left %v", entries)
	}
}

// TestDaemonServesWithoutRegistry checks that a registry that cannot be
// written (a sandboxed system service) keeps no daemon from serving.
func TestDaemonServesWithoutRegistry(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: testHive(t, tmp), Registry: filepath.Join(file, "daemons")})
	if st := r.idle(t, 1); len(st.Wings) == 0 {
		t.Fatalf("the daemon mined nothing: %+v", st)
	}
	r.stop(t)
}
