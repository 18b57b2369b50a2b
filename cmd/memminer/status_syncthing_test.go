package main

import (
	"strings"
	"testing"
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
