package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
	"github.com/memminer/memminer/syncthing/sttest"
)

// TestPartitionStatus: a machine cut off from both others (real Syncthing
// instances on 127.0.0.1) used to report in_sync with nothing needed.
// Status now says the folder's state is unknown and for how long the
// machine has been isolated — in JSON with and without the daemon, in
// text and in the gauges — and wake-up opens by saying its memory may be
// behind. Reconnected, it is in sync again and wake-up says nothing.
func TestPartitionStatus(t *testing.T) {
	nodes := sttest.StartCluster(t, "alpha", "bravo", "charlie")
	alpha := newMachine(t, nodes[0])
	alpha.appendNote(t, "agents/pam/memory.md", "- The deploy key rotates on Mondays")
	alpha.args = []string{"--metrics-addr", "127.0.0.1:0"}
	alpha.start(t)
	status := func(args ...string) api.Status {
		t.Helper()
		var st api.Status
		out, _ := alpha.c.runRaw(append([]string{"status", "--json"}, args...)...)
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return st
	}
	testutil.WaitFor(t, "alpha in sync with both others", func() bool {
		st := status()
		return st.Syncthing != nil && st.Syncthing.InSync && st.Syncthing.StateKnown && st.Syncthing.DevicesConnected == 2 && st.Daemon.Idle()
	})
	if out := alpha.c.ok("wake-up"); strings.Contains(out, "Memory may be behind") {
		t.Fatalf("connected wake-up warns:\n%s", out)
	}

	ctx := context.Background()
	for _, peer := range nodes[1:] {
		if err := nodes[0].SetDevicePaused(ctx, peer, true); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, "alpha to lose both others", func() bool {
		st := status()
		return st.Syncthing != nil && st.Syncthing.DevicesConnected == 0
	})
	for _, args := range [][]string{nil, {"--no-daemon"}} {
		r := status(args...).Syncthing
		if r.InSync || r.StateKnown || r.InSyncSince != nil || r.IsolatedSince == nil || r.IsolatedSeconds == nil || *r.IsolatedSeconds < 0 {
			t.Fatalf("status %v of isolated alpha: %+v", args, r)
		}
		for _, d := range r.Devices {
			if d.Connected || d.LastSeen == nil {
				t.Fatalf("status %v: device %+v", args, d)
			}
		}
	}
	if out := alpha.c.ok("status"); !strings.Contains(out, "state unknown, isolated for ") || !strings.Contains(out, "this machine's memory may be behind") {
		t.Fatalf("status:\n%s", out)
	}
	for _, args := range [][]string{{"wake-up"}, {"--no-daemon", "wake-up"}} {
		if out := alpha.c.ok(args...); !strings.HasPrefix(out, "> Memory may be behind: this machine has not reached the 2 other machines sharing the hive for ") {
			t.Fatalf("%v:\n%s", args, out)
		}
	}
	metrics := scrape(t, alpha)
	for _, want := range []string{"memminer_syncthing_state_known 0\n", "memminer_syncthing_devices_connected 0\n", "memminer_syncthing_isolated_seconds "} {
		if !strings.Contains(metrics, want) {
			t.Fatalf("metrics lack %q:\n%s", want, metrics)
		}
	}

	for _, peer := range nodes[1:] {
		if err := nodes[0].SetDevicePaused(ctx, peer, false); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, "alpha back in sync", func() bool {
		st := status()
		return st.Syncthing != nil && st.Syncthing.InSync && st.Syncthing.StateKnown && st.Syncthing.IsolatedSince == nil
	})
	if out := alpha.c.ok("wake-up"); strings.Contains(out, "Memory may be behind") {
		t.Fatalf("reconnected wake-up warns:\n%s", out)
	}
}

// scrape returns the daemon's metrics.
func scrape(t *testing.T, m *machine) string {
	t.Helper()
	st, err := daemonclient.NewClient(m.c.palace).Status(context.Background())
	if err != nil || st.Daemon == nil || st.Daemon.Metrics == nil {
		t.Fatalf("status: %+v, %v", st.Daemon, err)
	}
	resp, err := http.Get("http://" + *st.Daemon.Metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
