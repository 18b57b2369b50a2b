package syncthing_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/syncthing"
	"github.com/memminer/memminer/syncthing/sttest"
)

func TestFolderOf(t *testing.T) {
	folders := map[string]syncthing.Folder{
		"home": {ID: "home", Path: "~/"},
		"hive": {ID: "hive", Path: "~/sync/hive"},
		"srv":  {ID: "srv", Path: "/srv/hive"},
	}
	tests := []struct {
		dir  string
		want string
	}{
		{"/home/ops/sync/hive", "hive"},
		{"/home/ops/sync/hive/agents/pam", "hive"},
		{"/home/ops/sync/hivemind", "home"},
		{"/srv/hive", "srv"},
		{"/srv", ""},
		{"/srv/hive2", ""},
	}
	for _, tt := range tests {
		f, ok := syncthing.FolderOf(folders, "/home/ops", tt.dir)
		if tt.want == "" && ok || tt.want != "" && f.ID != tt.want {
			t.Errorf("FolderOf(%s) = %q, %t; want %q", tt.dir, f.ID, ok, tt.want)
		}
	}
}

// TestReplication: a real pair reports the hive's folder in sync with the
// other device connected, what a node still needs while it is paused, and
// ErrNoFolder for a directory no folder holds.
func TestReplication(t *testing.T) {
	a, b := sttest.StartPair(t)
	ctx := context.Background()
	hive := filepath.Join(a.FolderPath(), "agents")
	if err := os.MkdirAll(hive, 0o755); err != nil {
		t.Fatal(err)
	}
	var r syncthing.Replication
	testutil.Eventually(t, "alpha's folder in sync with bravo connected", func(ctx context.Context) (bool, error) {
		var err error
		r, err = a.Client().Replication(ctx, hive)
		return err == nil && r.InSync() && r.Connected() == 1, err
	})
	if r.Folder != sttest.FolderID || r.Path != a.FolderPath() || len(r.Devices) != 1 || r.Devices[0].Name != b.Name() || r.Devices[0].ID != b.ID() || r.StateChanged.IsZero() {
		t.Fatalf("replication = %+v", r)
	}

	// Paused, alpha does not fetch what bravo writes.
	if err := a.SetPaused(ctx, sttest.FolderID, true); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.FolderPath(), "memory.md"), []byte("- a fact\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "alpha paused", func(ctx context.Context) (bool, error) {
		r, err := a.Client().Replication(ctx, hive)
		return err == nil && r.Paused && !r.InSync(), err
	})
	if err := a.SetPaused(ctx, sttest.FolderID, false); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, "alpha to fetch bravo's file", func(ctx context.Context) (bool, error) {
		r, err := a.Client().Replication(ctx, hive)
		if err != nil || !r.InSync() {
			return false, err
		}
		_, err = os.Stat(filepath.Join(a.FolderPath(), "memory.md"))
		return err == nil, nil
	})

	if _, err := a.Client().Replication(ctx, t.TempDir()); !errors.Is(err, syncthing.ErrNoFolder) {
		t.Fatalf("a directory outside every folder: %v", err)
	}
}

// TestReplicationPartition: a node cut off from every peer does not
// report itself in sync although it needs nothing it has heard of: the
// state is unknown, it says since when it has been isolated, and each
// peer's completion and last contact. Reconnected, it is in sync again.
func TestReplicationPartition(t *testing.T) {
	nodes := sttest.StartCluster(t, "alpha", "bravo", "charlie")
	a := nodes[0]
	ctx := context.Background()
	hive := a.FolderPath()
	testutil.Eventually(t, "alpha in sync with both peers", func(ctx context.Context) (bool, error) {
		r, err := a.Client().Replication(ctx, hive)
		return err == nil && r.InSync() && r.Connected() == 2, err
	})
	r, err := a.Client().Replication(ctx, hive)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range r.Devices {
		if d.Completion == nil || d.Completion.Percent != 100 || d.ConnectedSince.IsZero() {
			t.Fatalf("connected peer %s: %+v", d.Name, d)
		}
	}
	if _, isolated := r.IsolatedSince(); isolated {
		t.Fatal("isolated with both peers connected")
	}

	cut := time.Now()
	for _, peer := range nodes[1:] {
		if err := a.SetDevicePaused(ctx, peer, true); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, "alpha to see both peers gone", func(ctx context.Context) (bool, error) {
		var err error
		r, err = a.Client().Replication(ctx, hive)
		return err == nil && r.Connected() == 0, err
	})
	if r.InSync() || r.Known() || r.NeedFiles != 0 || r.State != "idle" {
		t.Fatalf("isolated alpha: in sync %t, known %t, need %d, state %s", r.InSync(), r.Known(), r.NeedFiles, r.State)
	}
	since, isolated := r.IsolatedSince()
	if !isolated || since.IsZero() || since.After(time.Now()) || since.Before(cut.Add(-time.Minute)) {
		t.Fatalf("isolated since %s (%t), cut at %s", since, isolated, cut)
	}

	for _, peer := range nodes[1:] {
		if err := a.SetDevicePaused(ctx, peer, false); err != nil {
			t.Fatal(err)
		}
	}
	testutil.Eventually(t, "alpha back in sync", func(ctx context.Context) (bool, error) {
		r, err := a.Client().Replication(ctx, hive)
		return err == nil && r.InSync() && r.Connected() == 2, err
	})
}

// BenchmarkReplication is what status and every wake-up pay to ask a real
// Syncthing how the hive's folder stands (two other devices).
func BenchmarkReplication(b *testing.B) {
	nodes := sttest.StartCluster(b, "alpha", "bravo", "charlie")
	a := nodes[0]
	ctx := context.Background()
	testutil.Eventually(b, "alpha connected to both", func(ctx context.Context) (bool, error) {
		r, err := a.Client().Replication(ctx, a.FolderPath())
		return err == nil && r.Connected() == 2, err
	})
	b.ResetTimer()
	for b.Loop() {
		if _, err := a.Client().Replication(ctx, a.FolderPath()); err != nil {
			b.Fatal(err)
		}
	}
}
