package hive

import (
	"path/filepath"
	"testing"
)

func TestSourceName(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	mkdirs(t, real, "agents/dwight/memory.md", "team/bob/memory.md")
	link := filepath.Join(dir, "link")
	symlink(t, real, link)
	h, err := Open(link, []string{"team/*"})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(dir, "copy", "agents", "dwight", "memory.md")
	tests := []struct {
		name string
		h    *Hive
		path string
		want string
	}{
		{"in the hive", h, filepath.Join(link, "agents", "dwight", "memory.md"), "agents/dwight/memory.md"},
		{"in the hive by its real path", h, filepath.Join(real, "agents", "dwight", "memory.md"), "agents/dwight/memory.md"},
		{"a glob's agent directory", h, filepath.Join(real, "team", "bob", "memory.md"), "team/bob/memory.md"},
		{"outside the hive", h, elsewhere, elsewhere},
		{"no hive: from agents/", nil, elsewhere, "agents/dwight/memory.md"},
		{"no hive: the last agents/", nil, filepath.Join(dir, "agents", "x", "agents", "dwight", "notes", "a.md"), "agents/dwight/notes/a.md"},
		{"no hive: agents/ holds no agent directory", nil, filepath.Join(dir, "agents", "memory.md"), filepath.Join(dir, "agents", "memory.md")},
		{"no hive: no agents/", nil, filepath.Join(real, "team", "bob", "memory.md"), filepath.Join(real, "team", "bob", "memory.md")},
	}
	for _, tt := range tests {
		if got := SourceName(tt.h, tt.path); got != tt.want {
			t.Errorf("%s: SourceName(%s) = %q, want %q", tt.name, tt.path, got, tt.want)
		}
	}
}
