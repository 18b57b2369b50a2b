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

// TestMineNeverFollowsASwappedLink: another user, who owns an agent
// directory of a shared hive, swaps its identity.md between a file and a
// symlink to a private file of the user mining, as fast as it can; no
// mine, in any try, takes the private file's notes into the wing (where
// search, wake-up and INDEX.md would show them as that user's).
func TestMineNeverFollowsASwappedLink(t *testing.T) {
	if testutil.RunSwapper(t) {
		return
	}
	atk := testutil.OtherUsersDir(t, "hive/agents/atk")
	writeFile(t, atk, "memory.md", "- the visitor's own note\n")
	const secret = "the deploy key is in vault seven"
	private := filepath.Join(t.TempDir(), "private.md")
	if err := os.WriteFile(private, []byte("- "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.SwapRace(t, t.Name(), filepath.Join(atk, "identity.md"), private, "# Visitor\n- an identity of its own\n")

	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	mined := 0
	for try := range 2000 {
		s, err := Mine(context.Background(), p, atk, Options{Wing: "atk"})
		if err != nil {
			t.Fatalf("try %d: %v", try, err)
		}
		for _, n := range p.Notes("atk") {
			if strings.Contains(n.Text, secret) {
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
