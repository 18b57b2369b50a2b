//go:build unix

package mine

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/palace"
)

// waitSettled waits until the change time of every directory at paths has
// settled, so that a listing of it is recorded.
func waitSettled(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		info, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		changed, ok := palace.ChangeTime(info)
		if !ok {
			t.Skip("this system's stat gives no change time: no listing is recorded")
		}
		for !settledAt(changed, time.Now()) {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func paths(files []candidate) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.path
	}
	return out
}

// A listing the manifest keeps stands for a listing of the directory only
// while it is what one would find: after each kind of change to an agent
// directory, the files a mine takes are those a listing finds now, and
// they come from the manifest exactly for the directories whose entries
// did not change.
func TestListingHoldsOnlyWhileCurrent(t *testing.T) {
	past := time.Now().Add(-time.Hour)
	write := func(t *testing.T, path, text string) {
		testutil.WriteFile(t, path, text)
		if err := os.Chtimes(path, past, past); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		agent  string
		before func(t *testing.T, dir string) // before the listing is recorded
		after  func(t *testing.T, dir string)
		holds  bool // the recorded listing still stands after
	}{
		{agent: "same", holds: true},
		{agent: "two-files", before: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "notes.md"), "- a second file.\n")
		}, holds: true},
		{agent: "hidden-dir", before: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".stversions", "old.md"), "- not mined.\n")
		}, holds: true},
		{agent: "appended", after: func(t *testing.T, dir string) {
			// An append changes the file, not the directory.
			testutil.AppendFile(t, filepath.Join(dir, "memory.md"), "- appended.\n")
		}, holds: true},
		{agent: "added", after: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "notes.md"), "- a new file.\n")
		}},
		{agent: "removed", before: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "notes.md"), "- to be removed.\n")
		}, after: func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "notes.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{agent: "renamed", before: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "notes.md"), "- to be renamed.\n")
		}, after: func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "notes.md"), filepath.Join(dir, "later.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{agent: "replaced", after: func(t *testing.T, dir string) {
			// An atomic write: a new file renamed over the old.
			tmp := filepath.Join(dir, ".memory.md.tmp")
			write(t, tmp, "# Memory\n\n- replaced whole.\n")
			if err := os.Rename(tmp, filepath.Join(dir, "memory.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{agent: "linked", before: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "real.txt"), "- behind a link.\n")
		}, after: func(t *testing.T, dir string) {
			if err := os.Symlink("real.txt", filepath.Join(dir, "link.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{agent: "subdir", after: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "sub", "deep.md"), "- in a subdirectory.\n")
		}},
		{agent: "other-file", after: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "notes.txt"), "not markdown\n")
		}},
		{agent: "fifo", after: func(t *testing.T, dir string) {
			if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{agent: "touched", after: func(t *testing.T, dir string) {
			if err := os.Chtimes(dir, past, past); err != nil {
				t.Fatal(err)
			}
		}},
		{agent: "swapped", after: func(t *testing.T, dir string) {
			// Another directory of the same entries and times in its place.
			if err := os.Rename(dir, dir+".old"); err != nil {
				t.Fatal(err)
			}
			testutil.CopyDir(t, dir+".old", dir)
			if err := os.RemoveAll(dir + ".old"); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{filepath.Join(dir, "memory.md"), dir} {
				if err := os.Chtimes(p, past, past); err != nil {
					t.Fatal(err)
				}
			}
		}},
		// Never recorded: what such a listing finds can change while the
		// directory's stat does not.
		{agent: "subdir-before", before: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "sub", "deep.md"), "- in a subdirectory.\n")
		}},
		{agent: "link-before", before: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "real.txt"), "- behind a link.\n")
			if err := os.Symlink("real.txt", filepath.Join(dir, "link.md")); err != nil {
				t.Fatal(err)
			}
		}},
	}

	base := t.TempDir()
	hive, dir := filepath.Join(base, "hive"), filepath.Join(base, "palace")
	var dirs []string
	for _, c := range cases {
		d := filepath.Join(hive, "agents", c.agent)
		write(t, filepath.Join(d, "memory.md"), "# Memory\n\n- "+c.agent+" keeps the build green.\n")
		if c.before != nil {
			c.before(t, d)
		}
		dirs = append(dirs, d)
	}
	waitSettled(t, dirs...)
	// The first mine records the listings, the second takes them.
	for range 2 {
		minePlanT(t, dir, hive, Options{})
	}
	for _, c := range cases {
		if c.after != nil {
			c.after(t, filepath.Join(hive, "agents", c.agent))
		}
	}

	pl := NewPlan(hive, Options{})
	told := map[string]palace.ManifestWing{}
	p, err := palace.Open(context.Background(), dir, palace.Options{Unchanged: func(id string, w palace.ManifestWing) bool {
		told[id] = w
		return pl.Unchanged(id, w)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := MinePlan(context.Background(), p, pl); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.agent, func(t *testing.T) {
			i, ok := pl.job[c.agent]
			if !ok {
				t.Fatalf("no job for %s", c.agent)
			}
			j := pl.jobs[i]
			fresh := j
			fresh.files, fresh.problems = collect(j)
			if !slices.Equal(paths(j.files), paths(fresh.files)) || !reflect.DeepEqual(j.problems, fresh.problems) {
				t.Fatalf("the mine took files %v, problems %v; a listing finds %v, %v", paths(j.files), j.problems, paths(fresh.files), fresh.problems)
			}
			listed, holds := listedFiles(j, told[c.agent])
			if holds != c.holds {
				t.Fatalf("the recorded listing holds: %v, want %v", holds, c.holds)
			}
			if holds && (!slices.Equal(paths(listed), paths(fresh.files)) || len(fresh.problems) > 0) {
				t.Fatalf("the recorded listing gives %v; a listing finds %v, %v", paths(listed), paths(fresh.files), fresh.problems)
			}
		})
	}
}
