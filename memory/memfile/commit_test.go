package memfile

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestHooks: every successful Write reaches the hooks with the writer's
// description, after the file holds the new bytes; a refused write and a
// removed hook do not.
func TestHooks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "memory.md")
	var mu sync.Mutex
	var got []Change
	var seen []string
	remove := AddHook(func(_ context.Context, c Change) {
		if filepath.Dir(c.Path) != dir {
			return // another test's write
		}
		data, _ := os.ReadFile(c.Path)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, c)
		seen = append(seen, string(data))
	})
	ctx := Describe(context.Background(), "dwight", "remember: beets\nsecond line")
	s, _ := Read(path, 0)
	if err := Write(ctx, s, []byte("- beets\n")); err != nil {
		t.Fatal(err)
	}
	// A stale snapshot is refused: no hook.
	if err := Write(ctx, s, []byte("- other\n")); err == nil {
		t.Fatal("a write over a changed file succeeded")
	}
	s, _ = Read(path, 0)
	if err := Write(context.Background(), s, []byte("- beets\n- bears\n")); err != nil {
		t.Fatal(err)
	}
	remove()
	s, _ = Read(path, 0)
	if err := Write(ctx, s, []byte("- after\n")); err != nil {
		t.Fatal(err)
	}
	want := []Change{{Path: path, Author: "dwight", Message: "remember: beets"}, {Path: path}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("hooks were told %+v, want %+v", got, want)
	}
	if seen[0] != "- beets\n" || seen[1] != "- beets\n- bears\n" {
		t.Fatalf("hooks saw %q", seen)
	}
}
