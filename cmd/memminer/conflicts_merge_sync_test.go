package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/syncthing/sttest"
)

const mergeSeed = "# Jim\n\n## Office\n\n- The printer is on the second floor.\n- Stand-up is at 9:30.\n"

// TestMergeAcrossTwoMachines makes a real conflict between two machines
// (two Syncthing instances on 127.0.0.1, each with its memminer daemon):
// both append a note to the same memory file while they cannot see each
// other. `conflicts merge --apply` on one machine (or, with --auto-merge,
// the daemons themselves) must leave both machines with the same file
// holding every note of both sides, no conflict copy on either, and no
// new conflict.
func TestMergeAcrossTwoMachines(t *testing.T) {
	for _, auto := range []bool{false, true} {
		name := "conflicts merge --apply"
		if auto {
			name = "run --auto-merge"
		}
		t.Run(name, func(t *testing.T) {
			a, b := sttest.StartPair(t)
			alpha, bravo := newMachine(t, a), newMachine(t, b)
			ms := []*machine{alpha, bravo}
			if auto {
				for _, m := range ms {
					m.args = []string{"--auto-merge"}
				}
			}
			const rel = "agents/jim/memory.md"
			alpha.appendNote(t, rel, strings.TrimSuffix(mergeSeed, "\n"))
			for _, m := range ms {
				m.start(t)
			}
			converge(t, ms, time.Now(), "the seed mined on both machines", holding("second floor", "Stand-up"))

			// Both write while they cannot see each other; bravo's
			// version is newer, so it wins and alpha's becomes the copy.
			ctx := context.Background()
			for _, m := range ms {
				if err := m.st.SetPaused(ctx, sttest.FolderID, true); err != nil {
					t.Fatal(err)
				}
			}
			alpha.appendNote(t, rel, "- The printer code is 4471 (written on alpha).")
			bravo.appendNote(t, rel, "- Jim's desk moved next to the window (written on bravo).")
			later := time.Now().Add(2 * time.Second)
			if err := os.Chtimes(bravo.path(rel), later, later); err != nil {
				t.Fatal(err)
			}
			// Each daemon mines its own edit before the machines meet
			// again, as it would any edit.
			for _, m := range ms {
				waitMined(t, m, "written on "+m.name)
			}
			for _, m := range ms {
				if err := m.st.SetPaused(ctx, sttest.FolderID, false); err != nil {
					t.Fatal(err)
				}
			}

			if !auto {
				testutil.Eventually(t, "the conflict copy on both machines", func(context.Context) (bool, error) {
					for _, m := range ms {
						if len(m.conflictRels(t)) == 0 {
							return false, nil
						}
					}
					return sameFile(alpha, bravo, rel)
				})
				out, errs, code := alpha.c.run("conflicts", "merge", "--apply")
				if code != 0 {
					t.Fatalf("conflicts merge --apply: exit %d\n%s\n%s", code, out, errs)
				}
				if !strings.Contains(out, "merged; the copy is removed") {
					t.Fatalf("conflicts merge --apply:\n%s", out)
				}
			}

			// Both machines end with one file holding every note, and
			// no copy anywhere.
			want := []string{"second floor", "Stand-up", "printer code is 4471 (written on alpha)", "next to the window (written on bravo)"}
			waitMerged(t, alpha, bravo, rel, want)
			converge(t, ms, time.Now(), "the merged file mined on both machines", holding(want...))
			for _, m := range ms {
				if cs := copiesOnDisk(t, m); len(cs) > 0 {
					t.Fatalf("%s: a new conflict copy appeared: %v", m.name, cs)
				}
				if got := m.conflictRels(t); len(got) != 0 {
					t.Fatalf("%s reports conflicts %v", m.name, got)
				}
			}
			data, err := os.ReadFile(alpha.path(rel))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(data), "(written on"); n != 2 {
				t.Fatalf("merged file holds %d written notes, want 2:\n%s", n, data)
			}
			if auto {
				// bravo's device is named in the copy: its daemon merged.
				if !strings.Contains(bravo.run.stderr.String(), "syncthing conflict merged") {
					t.Fatalf("bravo's daemon did not log the merge:\n%s", bravo.run.stderr)
				}
				// Neither alerted it as open: alpha waited for bravo's merge.
				for _, m := range ms {
					if strings.Contains(m.run.stderr.String(), "a memory file has a conflict copy") {
						t.Fatalf("%s alerted the conflict as open:\n%s", m.name, m.run.stderr)
					}
				}
			}
			// The replaced contents are kept on the machine that merged.
			merger := alpha
			if auto {
				merger = bravo
			}
			kept, err := os.ReadDir(filepath.Join(merger.c.palace, "merged"))
			if err != nil || len(kept) == 0 {
				t.Fatalf("%s kept no replaced contents: %v %v", merger.name, kept, err)
			}
		})
	}
}

// waitMined waits until m's palace holds a note with text.
func waitMined(t *testing.T, m *machine, text string) {
	t.Helper()
	testutil.Eventually(t, m.name+" to mine its edit", func(ctx context.Context) (bool, error) {
		ns, err := m.notes(ctx)
		if err != nil {
			return false, nil // caught mid-write; try again
		}
		return holding(text)(ns) == nil, nil
	})
}

// sameFile reports whether rel holds the same bytes on both machines.
// waitMerged waits until both machines have the same file rel, holding
// every text of want, and no conflict copy.
func waitMerged(t *testing.T, a, b *machine, rel string, want []string) {
	t.Helper()
	testutil.Eventually(t, "the merge on both machines, the copies gone", func(context.Context) (bool, error) {
		for _, m := range []*machine{a, b} {
			if cs := copiesOnDisk(t, m); len(cs) > 0 {
				return false, fmt.Errorf("%s still has %v", m.name, cs)
			}
			data, err := os.ReadFile(m.path(rel))
			if err != nil {
				return false, err
			}
			for _, w := range want {
				if !strings.Contains(string(data), w) {
					return false, fmt.Errorf("%s's file lacks %q:\n%s", m.name, w, data)
				}
			}
		}
		return sameFile(a, b, rel)
	})
}

func sameFile(a, b *machine, rel string) (bool, error) {
	da, err := os.ReadFile(a.path(rel))
	if err != nil {
		return false, err
	}
	db, err := os.ReadFile(b.path(rel))
	if err != nil {
		return false, err
	}
	return string(da) == string(db), nil
}

// copiesOnDisk lists the conflict copies in m's copy of the hive.
func copiesOnDisk(t *testing.T, m *machine) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(m.c.hive, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.Contains(d.Name(), ".sync-conflict-") {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
