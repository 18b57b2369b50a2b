package daemon

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/wakeup"
)

// brokenDaemon listens on the socket of a palace in a temp dir and, like
// a daemon killed mid-answer, reads each request and closes the
// connection after writing part of an answer (or none). It returns the
// palace dir.
func brokenDaemon(t *testing.T, partial string) string {
	t.Helper()
	// Unix socket paths are short: a temp dir of its own, not t.TempDir's.
	dir, err := os.MkdirTemp("", "mm-broken-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.Listen("unix", SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
					return
				}
				_, _ = conn.Write([]byte(partial))
			}()
		}
	}()
	return filepath.Clean(dir)
}

// TestClientConnectionLostMidAnswer: when the daemon dies during an
// answer, the reads (and a mine, which the CLI can do itself) fail with
// ErrNotRunning, so the CLI falls back to the palace; a forget, which
// may have happened, does not.
func TestClientConnectionLostMidAnswer(t *testing.T) {
	answers := map[string]string{
		"no answer":      "",
		"headers only":   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n",
		"part of a body": "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"hits\": [{\"wi",
		"chunked, cut":   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"hits\": [{\"win",
	}
	for name, partial := range answers {
		t.Run(name, func(t *testing.T) {
			c := NewClient(brokenDaemon(t, partial))
			ctx := context.Background()
			calls := map[string]func() error{
				"status":    func() error { _, err := c.Status(ctx); return err },
				"search":    func() error { _, err := c.Search(ctx, SearchRequest{Query: "x"}); return err },
				"wake-up":   func() error { _, err := c.WakeUp(ctx, wakeup.Options{}); return err },
				"conflicts": func() error { var out map[string]any; return c.Get(ctx, "/conflicts", nil, &out) },
				"mine":      func() error { _, err := c.Mine(ctx, MineRequest{Path: "/hive"}); return err },
			}
			for call, fn := range calls {
				if err := fn(); !errors.Is(err, ErrNotRunning) {
					t.Errorf("%s: %v, want an error matching ErrNotRunning", call, err)
				}
			}
			if _, err := c.Forget(ctx, ForgetRequest{Wing: "a"}); err == nil || errors.Is(err, ErrNotRunning) {
				t.Errorf("forget: %v, want an error that is not ErrNotRunning", err)
			}
		})
	}
}
