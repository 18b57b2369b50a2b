package sttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/testutil"
)

// Conflict describes a conflict made by [ProduceConflict].
type Conflict struct {
	// Rel is the conflicting file relative to the folder root, in slash form.
	Rel string
	// Winner is the node whose version stays under the original name;
	// Loser is the node whose version becomes the conflict copy.
	Winner, Loser *Node
	// WinnerContent and LoserContent are what each side wrote.
	WinnerContent, LoserContent []byte
	// On is the node on whose disk the conflict copy appeared first.
	On *Node
	// CopyPath is the conflict copy's absolute path on On.
	CopyPath string
	// CopyRel is CopyPath relative to the folder root, in slash form.
	CopyRel string
	// Appeared is when the copy appeared on On's disk: its inode change
	// time where the platform has one (Syncthing creates the copy by a
	// rename), otherwise when it was first seen.
	Appeared time.Time
}

// ProduceConflict makes Syncthing create a real conflict copy of rel (a
// slash-separated path inside [FolderID]): it pauses the folder on both
// nodes, writes different content on each side (the winner's with the
// newer modification time, which is what decides the conflict), resumes
// both and waits until a new conflict copy of rel appears on either disk.
func ProduceConflict(t testing.TB, winner, loser *Node, rel string) Conflict {
	t.Helper()
	ctx, cancel := testutil.WaitContext(t)
	defer cancel()
	nodes := []*Node{winner, loser}
	before := map[*Node][]string{}
	for _, n := range nodes {
		before[n] = conflictCopies(t, n, rel)
	}
	for _, n := range nodes {
		if err := n.SetPaused(ctx, FolderID, true); err != nil {
			t.Fatalf("sttest: %v", err)
		}
	}
	for _, n := range nodes {
		testutil.Eventually(t, n.name+" to pause "+FolderID, func(ctx context.Context) (bool, error) {
			// A paused folder has no runner, and so an empty state.
			st, err := n.FolderState(ctx, FolderID)
			return st == "", err
		})
	}
	stamp := time.Now()
	c := Conflict{
		Rel:           rel,
		Winner:        winner,
		Loser:         loser,
		WinnerContent: fmt.Appendf(nil, "# memory\nwritten by %s at %s\n", winner.name, stamp.Format(time.RFC3339Nano)),
		LoserContent:  fmt.Appendf(nil, "# memory\nwritten by %s at %s, the losing side\n", loser.name, stamp.Format(time.RFC3339Nano)),
	}
	writeFile(t, loser, rel, c.LoserContent, stamp.Add(-5*time.Second))
	writeFile(t, winner, rel, c.WinnerContent, stamp)
	for _, n := range nodes {
		if err := n.SetPaused(ctx, FolderID, false); err != nil {
			t.Fatalf("sttest: %v", err)
		}
	}
	for {
		for _, n := range nodes {
			for _, p := range conflictCopies(t, n, rel) {
				if slices.Contains(before[n], p) {
					continue
				}
				seen := time.Now()
				c.On, c.CopyPath, c.Appeared = n, p, seen
				if fi, err := os.Stat(p); err == nil {
					if ct, ok := changeTime(fi); ok && !ct.After(seen) {
						c.Appeared = ct
					}
				}
				r, err := filepath.Rel(n.folderPath, p)
				if err != nil {
					t.Fatalf("sttest: %v", err)
				}
				c.CopyRel = filepath.ToSlash(r)
				return c
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("sttest: no conflict copy of %s appeared before the test's deadline", rel)
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// WaitContent waits until rel on n holds want.
func WaitContent(t testing.TB, n *Node, rel string, want []byte) {
	t.Helper()
	path := filepath.Join(n.folderPath, filepath.FromSlash(rel))
	testutil.Eventually(t, fmt.Sprintf("%s on %s to hold %q", rel, n.name, want), func(context.Context) (bool, error) {
		got, err := os.ReadFile(path)
		if err != nil {
			return false, err
		}
		return string(got) == string(want), nil
	})
}

// WriteFile writes content to rel inside n's copy of [FolderID], creating
// directories as needed.
func WriteFile(t testing.TB, n *Node, rel string, content []byte) {
	t.Helper()
	writeFile(t, n, rel, content, time.Time{})
}

func writeFile(t testing.TB, n *Node, rel string, content []byte, mtime time.Time) {
	t.Helper()
	path := filepath.Join(n.folderPath, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatalf("sttest: %v", err)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatalf("sttest: %v", err)
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatalf("sttest: %v", err)
		}
	}
}

// conflictCopies lists the conflict copies of rel on n's disk.
func conflictCopies(t testing.TB, n *Node, rel string) []string {
	t.Helper()
	path := filepath.Join(n.folderPath, filepath.FromSlash(rel))
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		t.Fatalf("sttest: %v", err)
	}
	var out []string
	for _, e := range entries {
		if cn, ok := hive.ParseConflictName(e.Name()); ok && cn.Original == base {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}
