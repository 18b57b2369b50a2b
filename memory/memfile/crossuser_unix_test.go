//go:build unix

package memfile

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// TestAppendNeverFollowsASwappedLink: another user, who owns the agent
// directory, swaps its memory file between a file and a symlink to a
// private file of the user appending (a shell start-up file, say) as
// fast as it can; no read-then-append, in any try, writes to the private
// file (the approver of an inbox item would have run the line at the
// next login).
func TestAppendNeverFollowsASwappedLink(t *testing.T) {
	if testutil.RunSwapper(t) {
		return
	}
	dir := testutil.OtherUsersDir(t, "atk")
	const private = "# my shell start-up\n"
	rc := filepath.Join(t.TempDir(), ".bashrc")
	if err := os.WriteFile(rc, []byte(private), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "memory.laptop.md")
	stopSwapper := testutil.SwapRace(t, t.Name(), file, rc, "# Memory\n")

	appended := 0
	for try := range 2000 {
		s, err := Read(file, 0)
		if err == nil && AppendEnd(context.Background(), s, []byte("- x; touch /tmp/pwned\n"), true) == nil {
			appended++
		}
		if got, err := os.ReadFile(rc); err != nil || string(got) != private {
			t.Fatalf("try %d: the private file was written through the other user's link: %q, %v", try, got, err)
		}
	}
	if appended > 0 {
		return
	}
	// The swapper can leave no window between a read and its append (it
	// did, once in 2,000 tries on a fast run): the append path must still
	// work on the file once the other user stops, or the test proves
	// nothing.
	stopSwapper()
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("# Memory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Read(file, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := AppendEnd(context.Background(), s, []byte("- x\n"), true); err != nil {
		t.Fatalf("no try appended during the race, and none after it: %v", err)
	}
	if got, err := os.ReadFile(rc); err != nil || string(got) != private {
		t.Fatalf("the private file was written: %q, %v", got, err)
	}
}
