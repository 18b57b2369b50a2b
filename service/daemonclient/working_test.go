package daemonclient

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"testing"
	"time"
)

// TestClientWaitsForADaemonAtWork: a read the daemon takes longer than
// the answer bound over (the index of thousands of wings) is waited for
// while the daemon says it is at work, not given up on and done again by
// the client.
func TestClientWaitsForADaemonAtWork(t *testing.T) {
	dir, err := os.MkdirTemp("", "mm-working-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	saved := WorkingEvery
	WorkingEvery = 10 * time.Millisecond
	t.Cleanup(func() { WorkingEvery = saved })
	// A bound far over any pause of a loaded machine between two 102s.
	const bound = 2 * time.Second
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// More work than one bound, told every WorkingEvery.
		Working(w, func() { time.Sleep(bound + bound/2) })
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"done": "yes"})
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })

	var out map[string]string
	if err := NewClient(dir, WithAnswerTimeout(bound)).Get(context.Background(), "/index", nil, &out); err != nil || out["done"] != "yes" {
		t.Fatalf("read of a daemon at work: %v, %v", out, err)
	}
}
