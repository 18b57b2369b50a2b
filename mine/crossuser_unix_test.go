//go:build unix

package mine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// privateNote is the note of a private file of the user mining (0600),
// in a directory of its own, that another user tries to have mined.
const privateNote = "the deploy key is in vault seven"

// privateDir makes that directory, with the note in file name.
func privateDir(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("- "+privateNote+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// mineRace mines agent directory atk, which another user swaps as fast
// as it can, 2,000 times; no mine, in any try, may take the private note
// into the wing (where search, wake-up and INDEX.md would show it as
// that user's).
func mineRace(t *testing.T, atk string) {
	t.Helper()
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	mined := 0
	for try := range 2000 {
		s, err := Mine(context.Background(), p, atk, Options{Wing: "atk"})
		if err != nil {
			t.Fatalf("try %d: %v", try, err)
		}
		for _, n := range p.Notes("atk") {
			if strings.Contains(n.Text, privateNote) {
				t.Fatalf("try %d: the private file was mined into the other user's wing: %q from %s", try, n.Text, n.Source)
			}
		}
		if s.FilesChanged > 0 {
			mined++
		}
	}
	if mined == 0 {
		t.Fatal("no try mined the directory at all")
	}
}

// TestMineNeverFollowsASwappedLink: another user, who owns an agent
// directory of a shared hive, swaps its identity.md between a file and a
// symlink to a private file of the user mining.
func TestMineNeverFollowsASwappedLink(t *testing.T) {
	if testutil.RunSwapper(t) {
		return
	}
	atk := testutil.OtherUsersDir(t, "hive/agents/atk")
	writeFile(t, atk, "memory.md", "- the visitor's own note\n")
	testutil.SwapRace(t, t.Name(), filepath.Join(atk, "identity.md"), filepath.Join(privateDir(t, "private.md"), "private.md"), "# Visitor\n- an identity of its own\n")
	mineRace(t, atk)
}
