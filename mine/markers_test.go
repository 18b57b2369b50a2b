package mine

import (
	"path/filepath"
	"testing"

	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/memory/govern"
)

// TestMineMarksNotesInConflict mines a file with Git conflict markers:
// the notes between them once each, stale with ConflictReason, the
// markers never; once resolved, the kept note is no longer marked.
func TestMineMarksNotesInConflict(t *testing.T) {
	hv := t.TempDir()
	marked := "# Dwight\n\n- beets\n<<<<<<< ours\n- bears eat honey\n=======\n- bears eat beets\n>>>>>>> theirs\n"
	mem := writeFile(t, hv, "agents/dwight/memory.md", marked)
	p := openPalace(t, filepath.Join(t.TempDir(), "palace"), &embedtest.Hashing{})
	mineT(t, p, filepath.Join(hv, "agents/dwight"), Options{})
	got := map[string]govern.Note{}
	for _, n := range p.Notes("dwight") {
		got[n.Text] = n.Governance
	}
	if len(got) != 3 {
		t.Fatalf("notes %v, want beets and both versions", got)
	}
	for text, inConflict := range map[string]bool{"beets": false, "bears eat honey": true, "bears eat beets": true} {
		g := got[text]
		if (g.Status == govern.Stale && g.Reason == ConflictReason) != inConflict {
			t.Errorf("%q: governance %+v, in conflict %v", text, g, inConflict)
		}
	}
	writeFile(t, hv, "agents/dwight/memory.md", "# Dwight\n\n- beets\n- bears eat honey\n")
	bump(t, mem)
	mineT(t, p, filepath.Join(hv, "agents/dwight"), Options{})
	for _, n := range p.Notes("dwight") {
		if n.Governance.Status == govern.Stale {
			t.Errorf("%q still marked after the conflict was resolved: %+v", n.Text, n.Governance)
		}
	}
}
