package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// TestCLIDamagedWingImmutableWings: one byte flipped in one wing file of
// a palace whose wings directory is immutable (chattr +i: the lock can be
// taken, no wing can be written). search, status and wake-up serve every
// wing, the damaged one rebuilt in memory, and say so.
func TestCLIDamagedWingImmutableWings(t *testing.T) {
	testutil.NeedRoot(t, "chattr +i")
	c := newCLI(t)
	c.ok("mine", c.hive)
	wing := filepath.Join(c.palace, "wings", "pam.wing")
	data, err := os.ReadFile(wing)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x01
	if err := os.WriteFile(wing, data, 0o600); err != nil {
		t.Fatal(err)
	}
	wings := filepath.Dir(wing)
	if out, err := exec.Command("chattr", "+i", wings).CombinedOutput(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chattr +i: %v %s", err, out)
		}
		t.Skipf("chattr +i: %v %s (the file system may not support it)", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", wings).Run() })
	for _, args := range [][]string{
		{"search", "electron-vite", "--json"},
		{"status", "--json"},
		{"wake-up", "--json"},
	} {
		out, stderr, code := c.run(args...)
		if code != 0 || !strings.Contains(stderr, "cannot save repairs") || !strings.Contains(stderr, "wing pam was damaged") || !strings.Contains(stderr, "in memory") {
			t.Fatalf("%s: exit %d, stderr %q", args[0], code, stderr)
		}
		served := strings.Contains(out, `"pam"`)
		if args[0] != "search" {
			served = served && strings.Contains(out, `"dwight"`)
		}
		if !served {
			t.Errorf("%s: not every wing served:\n%s", args[0], out)
		}
	}
	if after, err := os.ReadFile(wing); err != nil || string(after) != string(data) {
		t.Errorf("the damaged wing file changed: %v", err)
	}
}
