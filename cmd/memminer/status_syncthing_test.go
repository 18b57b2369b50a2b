package main

import (
	"strings"
	"testing"

	"github.com/memminer/memminer/service/api"
)

// TestStatusSyncthingDisabled checks that status says Syncthing is
// disabled, and by what, rather than that it is not reachable: with a
// daemon run --no-syncthing, and without a daemon when the environment
// turns it off.
func TestStatusSyncthingDisabled(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	c.env["MEMMINER_SYNCTHING"] = "false"
	want := "syncthing:   disabled by MEMMINER_SYNCTHING=false: replication not checked\n"
	if out := c.ok("status"); !strings.Contains(out, want) {
		t.Errorf("status without a daemon:\n%s\nwant a line %q", out, want)
	}
	delete(c.env, "MEMMINER_SYNCTHING")
	r := startRun(t, c, c.hive, "--no-syncthing", "--mine-interval", "1h")
	r.idle(t, c)
	want = "syncthing:   disabled by --no-syncthing: replication not checked\n"
	if out := c.ok("status"); !strings.Contains(out, want) {
		t.Errorf("status of a daemon run --no-syncthing:\n%s\nwant a line %q", out, want)
	}
}

// TestAutoMergeNote: status's conflicts line says how many open copies
// the automatic merge retries and how many need a person.
func TestAutoMergeNote(t *testing.T) {
	info := func(st any) *api.DaemonInfo {
		return &api.DaemonInfo{Components: map[string]any{"conflicts": st}}
	}
	tests := []struct {
		d    *api.DaemonInfo
		want string
	}{
		{nil, ""},
		{info(map[string]any{"auto_merge": map[string]any{"enabled": false}}), ""},
		{info(map[string]any{"auto_merge": map[string]any{"enabled": true}}), ""},
		{info(map[string]any{"auto_merge": map[string]any{"enabled": true, "retrying": 1, "needs_person": 2}}),
			" (1 being merged again automatically; 2 need a person (memminer conflicts merge))"},
	}
	for _, tt := range tests {
		if got := autoMergeNote(tt.d); got != tt.want {
			t.Errorf("autoMergeNote = %q, want %q", got, tt.want)
		}
	}
}
