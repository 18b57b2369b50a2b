package conflicts

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
)

// TestMarkersAreAlerted: a memory file with Git conflict markers is an
// open conflict of the daemon: alerted once, at once, with the markers
// message, listed, counted, and resolved when the markers are gone.
func TestMarkersAreAlerted(t *testing.T) {
	hv := newHiveDir(t)
	pal := filepath.Join(t.TempDir(), "palace")
	logs := newLogRecorder(t)
	var cnt counter
	comp := newComponent(t, Options{Notify: cnt.notify})
	r := startDaemon(t, pal, hv, comp, time.Hour, logs.logger())
	mem := filepath.Join(hv, "agents", "dwight", "memory.md")
	testutil.WaitFor(t, "the start scan", func() bool { return r.scans.Load() >= 1 })
	writeFile(t, mem, "# dwight\n<<<<<<< HEAD\n- likes beets\n=======\n- loves beets\n>>>>>>> other\n")
	// No tick for an hour and no request: the mine of the changed file
	// has the component scan.
	testutil.WaitFor(t, "the alert", func() bool { return cnt.get(mem) == 1 })
	l := r.list(t, "dwight")
	if len(l.Conflicts) != 1 || l.Conflicts[0].Path != mem || l.Conflicts[0].Original != mem || !l.Conflicts[0].Markers {
		t.Fatalf("list: %+v", l)
	}
	testutil.WaitFor(t, "the alert", func() bool { return cnt.get(mem) == 1 })
	if st, err := r.c.Status(context.Background()); err != nil || st.ConflictsOpen != 1 {
		t.Fatalf("conflicts_open = %d (%v), want 1", st.ConflictsOpen, err)
	}
	if n := len(logs.records("git conflict: a memory file holds conflict markers; resolve them in Git (memminer git setup merges memory files note by note)")); n != 1 {
		t.Fatalf("%d markers alerts logged, want 1", n)
	}
	writeFile(t, mem, "# dwight\n- likes beets\n- loves beets\n")
	if l := r.list(t, "dwight"); len(l.Conflicts) != 0 {
		t.Fatalf("after the markers were removed: %+v", l)
	}
}
