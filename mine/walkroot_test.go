package mine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// TestWalkRootIsWalkDir: walkRoot calls fn as filepath.WalkDir does, less
// its first call, for the root, for trees of every kind collect meets.
func TestWalkRootIsWalkDir(t *testing.T) {
	tests := map[string]func(t *testing.T, root string){
		"files": func(t *testing.T, root string) {
			testutil.WriteFile(t, filepath.Join(root, "memory.md"), "- a\n")
			testutil.WriteFile(t, filepath.Join(root, "b.md"), "- b\n")
			testutil.WriteFile(t, filepath.Join(root, "c.txt"), "c\n")
		},
		"subdirectories": func(t *testing.T, root string) {
			testutil.WriteFile(t, filepath.Join(root, "memory.md"), "- a\n")
			testutil.WriteFile(t, filepath.Join(root, "notes", "deep", "x.md"), "- x\n")
			testutil.WriteFile(t, filepath.Join(root, ".hidden", "y.md"), "- y\n")
			testutil.WriteFile(t, filepath.Join(root, "z", "z.md"), "- z\n")
		},
		"links and a fifo": func(t *testing.T, root string) {
			testutil.WriteFile(t, filepath.Join(root, "memory.md"), "- a\n")
			testutil.WriteFile(t, filepath.Join(root, "in", "x.md"), "- x\n")
			for name, target := range map[string]string{"file.md": "memory.md", "dir": "in", "broken.md": "gone"} {
				if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
					t.Fatal(err)
				}
			}
			if err := syscall.Mkfifo(filepath.Join(root, "fifo.md"), 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"empty": func(t *testing.T, root string) {},
		"missing": func(t *testing.T, root string) {
			if err := os.Remove(root); err != nil {
				t.Fatal(err)
			}
		},
		"a link": func(t *testing.T, root string) {
			// As if the agent directory were swapped for a link leaving the
			// hive after the hive was listed.
			outside := t.TempDir()
			testutil.WriteFile(t, filepath.Join(outside, "secret.md"), "- outside\n")
			if err := os.Remove(root); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, root); err != nil {
				t.Fatal(err)
			}
		},
		"a file": func(t *testing.T, root string) {
			if err := os.Remove(root); err != nil {
				t.Fatal(err)
			}
			testutil.WriteFile(t, root, "- not a directory\n")
		},
	}
	for name, setup := range tests {
		t.Run(name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "agent")
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
			setup(t, root)
			var want, got []string
			record := func(calls *[]string) fs.WalkDirFunc {
				return func(path string, d fs.DirEntry, err error) error {
					call := path
					if d != nil && path != root {
						call += fmt.Sprintf(" %v", d.Type())
					}
					if err != nil {
						call += " error: " + unwrapPathErr(err).Error()
					}
					*calls = append(*calls, call)
					if d != nil && d.IsDir() && path != root && d.Name() == ".hidden" {
						return fs.SkipDir
					}
					return nil
				}
			}
			_ = filepath.WalkDir(root, record(&want))
			walkRoot(root, record(&got))
			if len(want) > 0 && want[0] == root {
				want = want[1:] // the call walkRoot leaves out
			}
			if name == "a link" {
				// WalkDir does not follow a root that is a link; walkRoot
				// refuses to list it, so nothing outside is collected.
				if len(got) != 1 || got[0] != root+" error: not a directory" {
					t.Fatalf("walkRoot of a link: %q", got)
				}
				return
			}
			if name == "a file" {
				// WalkDir passes a root that is no directory to fn as an
				// entry; walkRoot, whose root was listed as one, says it
				// cannot list it. Either way no file is collected.
				if len(got) != 1 || got[0] != root+" error: not a directory" {
					t.Fatalf("walkRoot of a file: %q", got)
				}
				return
			}
			if !slices.Equal(got, want) {
				t.Errorf("walkRoot calls\n%q\nwant (WalkDir's)\n%q", got, want)
			}
		})
	}
}
