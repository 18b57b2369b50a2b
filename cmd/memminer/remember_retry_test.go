package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/internal/testutil"
)

// TestRememberDaemonDiesAnswering: a daemon that wrote the note and died
// before it answered is not a failure, and the note is not written twice
// (issue 23, item 6).
func TestRememberDaemonDiesAnswering(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	c.ok("mine", c.hive)
	path := filepath.Join(c.hive, "agents", "jim", "memory.laptop.md")
	ln, err := net.Listen("unix", daemon.SocketPath(c.palace))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req daemon.RememberRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Error(err)
		}
		// What the daemon writes, then it dies: no answer at all.
		note := "# jim's memory\n\n- " + req.Text + " (added " + time.Now().Format(time.DateOnly) + ")\n"
		if err := os.WriteFile(path, []byte(note), 0o644); err != nil {
			t.Error(err)
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.Close()
		ln.Close()
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	out, errs, code := c.run("remember", "--wing", "jim", "The fire drill is on Friday")
	if code != 0 || !strings.HasPrefix(out, "remembered in agents/jim/memory.laptop.md:3 (note ") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want the note reported written", code, out, errs)
	}
	if got := testutil.ReadFile(t, path); strings.Count(got, "fire drill") != 1 {
		t.Fatalf("memory.laptop.md = %q, want the note once", got)
	}
	if out := c.ok("search", "fire drill", "--wing", "jim", "-n", "1"); !strings.Contains(out, "memory.laptop.md:3") {
		t.Errorf("search: %s", out)
	}
}
