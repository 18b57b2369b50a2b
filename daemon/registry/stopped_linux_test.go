package registry

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

// TestListMarksAStoppedDaemon: a daemon stopped with SIGSTOP, whose
// socket still accepts, is listed as running and stopped; once resumed,
// as running only.
func TestListMarksAStoppedDaemon(t *testing.T) {
	pid := testutil.SleepingProcess(t)
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "daemons")
	rec := Record{PID: pid, Palace: "/p/palace", Hive: "/p/hive", Socket: listen(t, tmp, "p.sock"), Started: time.Now().UTC()}
	if _, err := Register(dir, rec); err != nil {
		t.Fatal(err)
	}
	stopped := func() bool {
		recs, err := List(context.Background(), dir)
		if err != nil || len(recs) != 1 {
			t.Fatalf("List = %+v, %v; want the one record", recs, err)
		}
		return recs[0].Stopped
	}
	if stopped() {
		t.Fatal("a running daemon is listed as stopped")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the stopped daemon listed as stopped", stopped)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the resumed daemon listed as running", func() bool { return !stopped() })
}
