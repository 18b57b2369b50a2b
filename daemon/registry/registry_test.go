package registry

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

// listen serves a Unix socket in dir until the test ends, as a daemon's
// control socket does, and returns its path.
func listen(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	testutil.HangUpServer(t, path, "")
	return path
}

// exitedPID is the pid of a process that has exited.
func exitedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestRegisterListUnregister(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "memminer", "daemons")
	started := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
	recs := []Record{
		{PID: os.Getpid(), Palace: "/q/palace", Hive: "/q/hive", Socket: listen(t, tmp, "q.sock"), Started: started},
		{PID: os.Getpid(), Palace: "/p/palace", Hive: "/p/hive", Socket: listen(t, tmp, "p.sock"), Started: started},
	}
	var unregister []func() error
	for _, r := range recs {
		u, err := Register(dir, r)
		if err != nil {
			t.Fatal(err)
		}
		unregister = append(unregister, u)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("registry directory: %v, %v", info, err)
	}
	got, err := List(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	// Sorted by palace; both in this one process, each with its own record.
	if want := []Record{recs[1], recs[0]}; !slices.Equal(got, want) {
		t.Fatalf("List = %+v, want %+v", got, want)
	}
	if err := unregister[0](); err != nil {
		t.Fatal(err)
	}
	if err := unregister[0](); err != nil {
		t.Fatalf("a second unregister: %v", err)
	}
	if got, _ := List(context.Background(), dir); !slices.Equal(got, recs[1:]) {
		t.Fatalf("after unregister: %+v", got)
	}
}

// TestListSkipsStale checks which records List returns and which files
// it removes: a dead daemon's record goes, files that are no record of a
// gone daemon stay.
func TestListSkipsStale(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "daemons")
	live := Record{PID: os.Getpid(), Palace: "/live", Socket: listen(t, tmp, "live.sock")}
	stale := []Record{
		// killed (kill -9): the process is gone, its socket file is left
		{PID: exitedPID(t), Palace: "/killed", Socket: listen(t, tmp, "killed.sock")},
		// the pid lives on (reused), nothing listens on the socket
		{PID: os.Getpid(), Palace: "/reused", Socket: filepath.Join(tmp, "missing.sock")},
	}
	for _, r := range append([]Record{live}, stale...) {
		if _, err := Register(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	junk := map[string]string{
		"garbage.json":        "{not json",
		"incomplete.json":     `{"pid": 1}`,
		"notes.txt":           "not a record",
		".1-abc.json.tmp-123": "a write in flight",
	}
	for name, content := range junk {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := List(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []Record{live}) {
		t.Fatalf("List = %+v, want only %+v", got, live)
	}
	want := []string{fileName(live)}
	for name := range junk {
		want = append(want, name)
	}
	slices.Sort(want)
	if have := names(t, dir); !slices.Equal(have, want) {
		t.Fatalf("files left: %v, want %v", have, want)
	}
}

func TestListMissingDir(t *testing.T) {
	got, err := List(context.Background(), filepath.Join(t.TempDir(), "none"))
	if err != nil || got != nil {
		t.Fatalf("List of a missing directory = %v, %v", got, err)
	}
}

func TestListStopsWithContext(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "daemons")
	if _, err := Register(dir, Record{PID: os.Getpid(), Palace: "/x", Socket: listen(t, tmp, "x.sock")}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := List(ctx, dir)
	if err != nil || len(got) != 0 {
		t.Fatalf("List after cancel = %v, %v", got, err)
	}
	if len(names(t, dir)) != 1 { // the record, untouched
		t.Fatalf("files: %v", names(t, dir))
	}
}

func TestDir(t *testing.T) {
	env := map[string]string{"XDG_RUNTIME_DIR": "/run/user/7", "HOME": "/home/u"}
	if got := Dir(func(k string) string { return env[k] }); got != "/run/user/7/memminer/daemons" {
		t.Fatalf("Dir = %s", got)
	}
}
