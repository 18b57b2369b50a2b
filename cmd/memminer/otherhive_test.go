package main

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/service/daemonclient"
)

// TestMineOfAnotherHiveThroughTheDaemon: a daemon serving one hive once
// mined a copy of it on request and, at its next scan, mined its own
// hive back over the copy (the copy's notes gone, every flip re-embedded).
// It refuses such a mine instead, and leaves the palace as it was; a mine
// of its own hive, and of markdown outside every hive with --wing, still
// goes through it.
func TestMineOfAnotherHiveThroughTheDaemon(t *testing.T) {
	c := newCLI(t)
	tmp := filepath.Dir(c.palace)
	r := startRun(t, c, c.hive, "--no-syncthing", "--mine-interval", "1h")
	r.idle(t, c)
	copyHive := filepath.Join(tmp, "hive4")
	testutil.CopyDir(t, c.hive, copyHive)
	testutil.AppendFile(t, filepath.Join(copyHive, "agents", "jim", "memory.md"), "\n- The copied hive keeps the teapot in the annex.\n")
	testutil.WriteFile(t, filepath.Join(tmp, "notes", "a", "n.md"), "- The loose notes name the quarry road.\n")

	wings := func() map[string]string {
		t.Helper()
		st, err := daemonclient.NewClient(c.palace).Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, w := range st.Wings {
			out[w.ID] = fmt.Sprint(w.Notes, w.Roots)
		}
		return out
	}
	refusal := "memminer: the running daemon (pid $PID) serves hive $HIVE; a mine of %s would be undone at its next scan: " +
		"stop the daemon (memminer stop, or Ctrl-C its run), or mine into another palace with --palace\n"
	for _, tc := range []struct {
		name   string
		args   []string
		refuse bool   // else it mines
		found  string // a search that finds a note after it, if any
	}{
		{"copy of the hive", []string{"mine", copyHive}, true, ""},
		{"its agents directory", []string{"mine", filepath.Join(copyHive, "agents")}, true, ""},
		{"its agent directory", []string{"mine", filepath.Join(copyHive, "agents", "jim")}, true, ""},
		{"its agent directory into its wing", []string{"mine", filepath.Join(copyHive, "agents", "jim"), "--wing", "jim"}, true, ""},
		{"its agent directory, dry run", []string{"mine", filepath.Join(copyHive, "agents", "jim"), "--dry-run"}, true, ""},
		{"the daemon's hive", []string{"mine", c.hive}, false, ""},
		{"the daemon's agent directory", []string{"mine", filepath.Join(c.hive, "agents", "jim")}, false, ""},
		{"markdown outside every hive", []string{"mine", filepath.Join(tmp, "notes", "a"), "--wing", "a"}, false, "quarry road"},
		{"the copy's agent into a wing of its own", []string{"mine", filepath.Join(copyHive, "agents", "jim"), "--wing", "copyjim"}, false, "teapot annex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := wings()
			out, stderr, code := c.run(tc.args...)
			if !tc.refuse {
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if tc.found != "" {
					c.ok("search", tc.found)
				}
				return
			}
			want := fmt.Sprintf(refusal, c.scrub(tc.args[1]))
			if got := pidRe.ReplaceAllString(stderr, "${1}$$PID"); code != exitError || out != "" || got != want {
				t.Fatalf("exit %d, stdout %q, stderr\n%s\nwant exit %d and\n%s", code, out, got, exitError, want)
			}
			if after := wings(); !reflect.DeepEqual(after, before) {
				t.Fatalf("the palace changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
	if _, _, code := c.run("search", "teapot annex", "--wing", "jim"); code == 0 {
		t.Error("the copy's note reached the daemon's wing")
	}

	// Without the daemon the mine is refused at once, not after the lock
	// timeout (an hour here: a wait would hang the test), and says whose
	// the palace is.
	c.env["MEMMINER_LOCK_TIMEOUT"] = "1h"
	_, stderr, code := c.run("--no-daemon", "mine", copyHive)
	if want := "memminer: the palace at $PALACE is held by the running daemon: stop it (memminer stop, or Ctrl-C its run) to mine with --no-daemon, or mine without --no-daemon to hand it the mine\n"; code != exitError || stderr != want {
		t.Fatalf("--no-daemon mine of the copy while the daemon runs: exit %d, %s", code, stderr)
	}
	r.idle(t, c)
}
