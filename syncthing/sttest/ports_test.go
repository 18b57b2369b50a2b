package sttest

import (
	"net"
	"strconv"
	"sync"
	"testing"
)

func TestPickPortsOutsideEphemeralRange(t *testing.T) {
	lo, hi := ephemeralRange()
	seen := map[int]bool{}
	for range 50 {
		ports, err := pickPorts(2)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			if p >= lo && p <= hi {
				t.Errorf("port %d lies in the ephemeral range %d-%d", p, lo, hi)
			}
			if p < lowestPort || p > 65535 {
				t.Errorf("port %d outside %d-65535", p, lowestPort)
			}
			if seen[p] {
				t.Errorf("port %d handed out twice", p)
			}
			seen[p] = true
		}
	}
}

// TestStartRetriesTakenPorts takes a node's GUI or sync port right before
// Syncthing binds it, as another process picking the same port would:
// start-up must move to fresh ports, not fail.
func TestStartRetriesTakenPorts(t *testing.T) {
	bin := Binary(t)
	for _, which := range []string{"gui", "sync"} {
		t.Run(which, func(t *testing.T) {
			var mu sync.Mutex
			var taken []int
			beforeStart = func(n *Node) {
				mu.Lock()
				defer mu.Unlock()
				if len(taken) > 0 {
					return
				}
				port := n.guiPort
				if which == "sync" {
					port = n.listenPort
				}
				ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
				if err != nil {
					t.Errorf("take port %d: %v", port, err)
					return
				}
				t.Cleanup(func() { _ = ln.Close() })
				taken = append(taken, port)
			}
			t.Cleanup(func() { beforeStart = nil })
			n, err := newNode(t, bin, "alpha")
			if err != nil {
				t.Fatalf("newNode with a taken %s port: %v", which, err)
			}
			if len(taken) != 1 {
				t.Fatalf("no port was taken")
			}
			if n.guiPort == taken[0] || n.listenPort == taken[0] {
				t.Errorf("node runs on the taken port %d", taken[0])
			}
			if err := n.waitListening(t.Context()); err != nil {
				t.Errorf("after retry: %v", err)
			}
		})
	}
}
