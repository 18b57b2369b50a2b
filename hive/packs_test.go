package hive

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPacksNeverAgents: whatever the agents globs match, packs/ and the
// directories in it are no agent directories, so packs are never mined
// as an agent's memory.
func TestPacksNeverAgents(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"agents/pam", "packs", "packs/old", "team/bob"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, globs := range [][]string{nil, {"*"}, {"*/*"}, {"packs"}, {"packs/*"}} {
		h, err := Open(dir, globs)
		if err != nil {
			t.Fatal(err)
		}
		wings, err := h.Wings()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wings {
			if w == "packs" || w == "old" {
				t.Errorf("agents %q: wing %q from packs/", globs, w)
			}
		}
		if loc := h.Locate(filepath.Join(dir, "packs", "deploy.md")); loc.Err == nil {
			t.Errorf("agents %q: packs/deploy.md located in wing %q", globs, loc.Wing)
		}
	}
}

func TestIsInboxFile(t *testing.T) {
	for name, want := range map[string]bool{
		"inbox.md": true, "/h/agents/pam/INBOX.md": true, "memory.md": false, "inbox.markdown": false, "my-inbox.md": false,
	} {
		if got := IsInboxFile(name); got != want {
			t.Errorf("IsInboxFile(%q) = %v, want %v", name, got, want)
		}
	}
}
