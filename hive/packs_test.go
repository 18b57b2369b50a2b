package hive

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPacksNeverAgents: whatever the agents globs match, packs/ and
// skills/ and the directories in them are no agent directories, so packs
// and skills are never mined as an agent's memory.
func TestPacksNeverAgents(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"agents/pam", "packs", "packs/old", "team/bob", "skills/published/deploy"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, globs := range [][]string{nil, {"*"}, {"*/*"}, {"packs"}, {"packs/*"}, {"skills"}, {"skills/*/*"}} {
		h, err := Open(dir, globs)
		if err != nil {
			t.Fatal(err)
		}
		wings, err := h.Wings()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wings {
			if w != "pam" && w != "bob" && w != "team" && w != "agents" {
				t.Errorf("agents %q: wing %q from packs/ or skills/", globs, w)
			}
		}
		for _, f := range []string{"packs/deploy.md", "skills/published/deploy/SKILL.md"} {
			if loc := h.Locate(filepath.Join(dir, f)); loc.Err == nil {
				t.Errorf("agents %q: %s located in wing %q", globs, f, loc.Wing)
			}
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
