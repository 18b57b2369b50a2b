package palace

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFlushRefusesAReplacedDir: after the palace directory is moved away
// (and a new one made at its path, as `mine --palace P` would), or
// removed, the writer holding the old lock writes nothing there.
func TestFlushRefusesAReplacedDir(t *testing.T) {
	for _, how := range []string{"moved", "moved and recreated", "removed"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			dir := filepath.Join(root, "palace")
			p := openT(t, dir, nil, false)
			src := Source{Path: "/hive/agents/a/memory.md", Agent: "a", Hash: "h", Size: 1, Mtime: time.Unix(100, 0).UTC()}
			if _, err := p.ApplySource(ctx, "a", src, []Note{note("n1", "", "a note", 1)}); err != nil {
				t.Fatal(err)
			}
			if err := p.CheckDir(); err != nil {
				t.Fatalf("CheckDir before the move: %v", err)
			}
			switch how {
			case "removed":
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
			default:
				if err := os.Rename(dir, filepath.Join(root, "palace-moved")); err != nil {
					t.Fatal(err)
				}
				if how == "moved and recreated" {
					if err := os.MkdirAll(filepath.Join(dir, wingsDir), 0o700); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := p.Flush(); !errors.Is(err, ErrDirReplaced) {
				t.Fatalf("Flush after the directory was %s: %v, want ErrDirReplaced", how, err)
			}
			if how == "moved and recreated" {
				entries, _ := os.ReadDir(filepath.Join(dir, wingsDir))
				if _, err := os.Stat(filepath.Join(dir, manifestName)); err == nil || len(entries) > 0 {
					t.Errorf("the new directory was written: manifest %v, wings %v", err, entries)
				}
			}
		})
	}
}
