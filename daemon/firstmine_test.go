package daemon

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/service/api"
)

// heldEmbedder embeds like Hashing but holds its n-th and later calls
// until release is closed, so a test can look at a daemon mid-mine.
type heldEmbedder struct {
	embedtest.Hashing
	n       int
	release chan struct{}
	mu      sync.Mutex
	calls   int
}

func (h *heldEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	h.mu.Lock()
	h.calls++
	c := h.calls
	h.mu.Unlock()
	if c >= h.n {
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.Hashing.Embed(ctx, texts)
}

func TestFirstMineProgress(t *testing.T) {
	tmp := t.TempDir()
	hive := bigHive(t, tmp, 3, 2, 5)
	h := &heldEmbedder{n: 2, release: make(chan struct{})}
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, Embedder: h, ModelSpec: "test"})

	var st api.Status
	testutil.WaitFor(t, "the first scan to count the hive's files", func() bool {
		var err error
		st, err = r.c.Status(context.Background())
		return err == nil && st.Daemon.FirstMine != nil && st.Daemon.FirstMine.FilesTotal > 0
	})
	p := st.Daemon.FirstMine
	if p.FilesTotal != 6 || p.FilesDone >= p.FilesTotal || p.Started.IsZero() {
		t.Fatalf("first mine while held: %+v, want 6 files, not all done", *p)
	}
	pr, err := r.c.Progress(context.Background())
	if err != nil || pr.FirstMine == nil || pr.FirstMine.FilesTotal != 6 {
		t.Fatalf("GET /progress while held: %+v, %v", pr, err)
	}

	close(h.release)
	st = r.idle(t, 1)
	if st.Daemon.FirstMine != nil {
		t.Fatalf("first mine still reported after the hive is mined: %+v", *st.Daemon.FirstMine)
	}
	if pr, err := r.c.Progress(context.Background()); err != nil || pr.FirstMine != nil {
		t.Fatalf("GET /progress after the first mine: %+v, %v", pr, err)
	}
	if st.Notes != 3*2*5 {
		t.Fatalf("%d notes after the first mine, want 30", st.Notes)
	}
}
