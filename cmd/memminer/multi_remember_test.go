package main

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/syncthing/sttest"
)

// TestManyMachinesRememberOneAgent runs one agent on four machines (real
// Syncthing on 127.0.0.1, each machine with its own `memminer run
// --auto-merge`): every machine remembers into the same wing at once, one
// machine is cut off from the others and keeps writing, and rejoins. At the
// end every note remember acknowledged is on every machine, no conflict
// copy is left anywhere, and the four palaces are identical (issue 23).
//
// With MEMMINER_BENCH_SHARED_FILE=1 it measures the design before machine
// files instead: the four machines write one memory.shared.md, and the test
// reports what was lost rather than failing on it.
func TestManyMachinesRememberOneAgent(t *testing.T) {
	shared := os.Getenv("MEMMINER_BENCH_SHARED_FILE") == "1"
	nodes := sttest.StartCluster(t, "alpha", "bravo", "charlie", "delta")
	var ms []*machine
	for _, n := range nodes {
		m := newMachine(t, n)
		m.args = []string{"--auto-merge"}
		if shared {
			m.c.env["MEMMINER_MACHINE"] = "shared"
		}
		ms = append(ms, m)
	}
	fileOf := func(m *machine) string {
		if shared {
			return "agents/ops/memory.shared.md"
		}
		return "agents/ops/memory." + m.name + ".md"
	}
	cut := ms[3]
	testutil.WriteFile(t, ms[0].path("agents/ops/memory.md"), "# ops\n\n- The staging cluster is k3s-2\n- Deploys need two approvals\n")
	seeded := time.Now()
	for _, m := range ms {
		m.start(t)
	}
	converge(t, ms, seeded, "the seed mined everywhere", holding("k3s-2", "two approvals"))

	var (
		mu                  sync.Mutex
		acked, refused      []string
		written             int
		perMachine, partway = 8, 6
	)
	// remember has every machine write n notes into wing ops at once.
	rememberAll := func(phase string, n int) {
		var wg sync.WaitGroup
		for _, m := range ms {
			wg.Go(func() {
				for i := range n {
					text := fmt.Sprintf("%s wrote fact %d while %s: the build runner %s-%d is warm", m.name, i, phase, m.name, i)
					out, errs, code := m.c.run("remember", "--wing", "ops", text)
					mu.Lock()
					written++
					if code == 0 && strings.HasPrefix(out, "remembered in "+fileOf(m)+":") {
						acked = append(acked, text)
					} else {
						refused = append(refused, fmt.Sprintf("%s: exit %d: %s%s", m.name, code, out, errs))
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	start := time.Now()
	rememberAll("connected", perMachine)

	// delta is cut off: every link to it is paused on both ends.
	ctx := context.Background()
	setCut := func(paused bool) {
		for _, m := range ms[:3] {
			for _, pair := range [][2]*machine{{m, cut}, {cut, m}} {
				err := pair[0].st.Client().DoJSON(ctx, http.MethodPatch, "/rest/config/devices/"+pair[1].st.ID().String(), map[string]bool{"paused": paused}, nil)
				if err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	setCut(true)
	testutil.Eventually(t, "delta to be cut off", func(ctx context.Context) (bool, error) {
		for _, m := range ms[:3] {
			if ok, err := m.st.IsConnected(ctx, cut.st); ok || err != nil {
				return false, err
			}
		}
		return true, nil
	})
	rememberAll("delta was cut off", partway)
	lastWrite := time.Now()
	setCut(false)
	for _, m := range ms[:3] {
		sttest.WaitConnected(t, m.st, cut.st)
	}
	want := holding(acked...)
	if shared {
		want = func([]minedNote) error { return nil }
	}
	notes, took := converge(t, ms, lastWrite, "every acknowledged note on every machine", want)
	if shared {
		lost := 0
		for _, text := range acked {
			if !slices.ContainsFunc(notes, func(n minedNote) bool { return strings.HasPrefix(n.Text, text) }) {
				lost++
			}
		}
		t.Logf("one shared file: %d notes written (%d acknowledged, %d refused, %d acknowledged and lost); palaces equal %s after the last write; conflict copies left on alpha: %d",
			written, len(acked), len(refused), lost, took.Round(time.Millisecond), len(conflictCopiesOnDisk(t, ms[0].c.hive)))
		return
	}
	if len(refused) > 0 {
		t.Errorf("%d of %d remembers not acknowledged:\n%s", len(refused), written, strings.Join(refused, "\n"))
	}
	lost := 0
	for _, text := range acked {
		if !slices.ContainsFunc(notes, func(n minedNote) bool { return strings.HasPrefix(n.Text, text) }) {
			lost++
		}
	}
	for _, m := range ms {
		if got := m.conflictRels(t); len(got) > 0 {
			t.Errorf("%s reports conflict copies %v", m.name, got)
		}
		if copies := conflictCopiesOnDisk(t, m.c.hive); len(copies) > 0 {
			t.Errorf("%s has conflict copies on disk: %v", m.name, copies)
		}
	}
	t.Logf("4 machines, one agent: %d notes written (%d acknowledged, %d lost) in %s; palaces equal (%d notes) %s after the last write, delta rejoining",
		written, len(acked), lost, lastWrite.Sub(start).Round(time.Millisecond), len(notes), took.Round(time.Millisecond))
}

// conflictCopiesOnDisk lists the conflict copies below dir.
func conflictCopiesOnDisk(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if hive.IsConflictCopy(d.Name()) {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
