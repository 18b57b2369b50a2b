package inproc_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/inproc"
)

// TestConflictsWithoutADaemon: the scan lists the copies of the hive, or
// without one of the wings' roots; a wing neither has is refused by the
// daemon's rule (conflicts.KnownWing), naming the known wings, and with
// neither a hive nor a mined wing there is nothing to scan.
func TestConflictsWithoutADaemon(t *testing.T) {
	ctx := context.Background()
	tmp, hive := kimsHive(t)
	dir := filepath.Join(tmp, "palace")
	copyPath := filepath.Join(hive, "agents", "kim", "memory.sync-conflict-20240131-093000-ABCDEFG.md")
	if err := os.WriteFile(copyPath, []byte("# Kim\n\n- The printer moved.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	withHive := inproc.New(inproc.Options{Dir: dir, Hive: hive})
	noHive := inproc.New(inproc.Options{Dir: dir})
	if _, err := noHive.Conflicts(ctx, api.ConflictsRequest{}); !errors.Is(err, conflicts.ErrNothingToScan) {
		t.Fatalf("no hive, nothing mined: %v, want conflicts.ErrNothingToScan", err)
	}
	if _, err := withHive.Mine(ctx, api.MineRequest{Path: hive}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		s    *inproc.Service
		wing string
		want int    // open conflicts listed
		err  string // the refusal's text, when refused
	}{
		{"the hive", withHive, "", 1, ""},
		{"a wing of the hive", withHive, "kim", 1, ""},
		{"an unknown wing of the hive", withHive, "ghost", 0, `unknown wing "ghost" (known wings: kim)`},
		{"the wing roots", noHive, "", 1, ""},
		{"a wing of the palace", noHive, "kim", 1, ""},
		{"an unknown wing of the palace", noHive, "ghost", 0, `unknown wing "ghost" (known wings: kim)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := tt.s.Conflicts(ctx, api.ConflictsRequest{Wing: tt.wing})
			if tt.err != "" {
				if !errors.Is(err, palace.ErrUnknownWing) || !strings.HasSuffix(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || len(l.Conflicts) != tt.want || l.Conflicts[0].Path != copyPath {
				t.Fatalf("list = %+v, %v; want %d conflict at %s", l, err, tt.want, copyPath)
			}
		})
	}
}
