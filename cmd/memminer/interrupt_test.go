package main

import (
	"errors"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// TestMineInterrupted sends SIGINT to a real mine halfway through: it says
// how far it got and exits 130, and a second mine completes the palace.
func TestMineInterrupted(t *testing.T) {
	c := newCLI(t)
	testutil.WriteFile(t, filepath.Join(c.hive, "agents", "zoe", "memory.md"), "- The zebrafinch cage is cleaned on Fridays.\n")
	h := &heldOllama{hold: "zebrafinch", release: make(chan struct{}), reached: make(chan struct{})}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(h.free)
	c.env["OLLAMA_HOST"] = srv.URL
	c.env["MEMMINER_EMBEDDING_MODEL"] = "ollama:held"

	cmd, exited, stderr := startProcess(t, c, "--no-daemon", "mine", c.hive)
	testutil.Receive(t, "the mine to reach the held wing", h.reached)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := testutil.Receive(t, "the mine to exit", exited)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("interrupted mine: %v, want exit %d\n%s", err, exitInterrupted, stderr)
	}
	if got, want := stderr.String(), "memminer: interrupted; 4 files mined, the rest on the next mine\n"; got != want {
		t.Fatalf("interrupted mine said %q, want %q", got, want)
	}

	h.free()
	out := c.ok("--no-daemon", "mine", c.hive)
	if !strings.Contains(out, "files 5 seen, 1 changed, 4 unchanged") {
		t.Fatalf("the mine after the interrupt: %s", out)
	}
}
