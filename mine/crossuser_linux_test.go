package mine

import (
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// TestMineNeverFollowsASwappedDirectory: the same user swaps a
// subdirectory of its agent directory between a directory holding
// notes.md and a symlink to a private directory of the user mining that
// holds one too: the listing sees the directory, the read would follow
// the link.
func TestMineNeverFollowsASwappedDirectory(t *testing.T) {
	if testutil.RunSwapper(t) {
		return
	}
	atk := testutil.OtherUsersDir(t, "hive/agents/atk")
	writeFile(t, atk, "memory.md", "- the visitor's own note\n")
	testutil.SwapDirRace(t, t.Name(), filepath.Join(atk, "sub"), privateDir(t, "notes.md"), "notes.md", "- a note of its own\n")
	mineRace(t, atk)
}
