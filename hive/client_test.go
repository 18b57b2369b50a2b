package hive

import "testing"

func TestClientOf(t *testing.T) {
	for _, tc := range []struct {
		rel, client string
	}{
		{ClientMemoryDirName("claude-code", "laptop") + "/MEMORY.md", "claude-code"},
		{"claude-code-memory.laptop/imported/-home-dwight-src-app/db.md", "claude-code"},
		{"codex-memory.ci-2/notes.md", "codex"},
		{"claude-code-memory.laptop", ""},            // a file, not a folder
		{"memory.laptop.md", ""},                     // remember's file
		{"notes/claude-code-memory.laptop/x.md", ""}, // not the first folder
		{"claude-code-memory.Laptop/x.md", ""},       // no machine name as written
		{"claude-code-memory./x.md", ""},
		{"-memory.laptop/x.md", ""},
		{"-x-memory.laptop/x.md", ""},
		{"Claude-memory.laptop/x.md", ""},
		{"team notes-memory.laptop/x.md", ""},
	} {
		got, ok := ClientOf(tc.rel)
		if got != tc.client || ok != (tc.client != "") {
			t.Errorf("ClientOf(%q) = %q, %v; want %q", tc.rel, got, ok, tc.client)
		}
	}
}
