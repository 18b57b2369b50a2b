package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/wakeup"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
)

// receive waits for a value on ch: see testutil.Receive.
func receive[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	return testutil.Receive(t, what, ch)
}

// testHive copies the example hive into a temp dir and returns its path.
func testHive(t *testing.T, dir string) string {
	t.Helper()
	hive := filepath.Join(dir, "hive")
	testutil.CopyDir(t, filepath.Join("..", "examples", "hive"), hive)
	return hive
}

// running is an in-process daemon under test.
type running struct {
	d      *Daemon
	c      *daemonclient.Client
	cancel context.CancelFunc
	done   chan struct{} // closed when Run returned
	err    error         // Run's result, once done
}

// stop stops the daemon and waits for Run to return.
func (r *running) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	ctx, cancel := testutil.WaitContext(t)
	defer cancel()
	r.wait(ctx, t)
	if r.err != nil {
		t.Fatalf("Run: %v", r.err)
	}
}

// wait waits for Run to return, failing the test when ctx ends first with
// every goroutine's stack, which show where the daemon hangs.
func (r *running) wait(ctx context.Context, t *testing.T) {
	t.Helper()
	select {
	case <-r.done:
	case <-ctx.Done():
		buf := make([]byte, 1<<20)
		t.Fatalf("the daemon did not stop; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
	}
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// start runs a daemon with opts (palace and hive must be set) and stops it
// when the test ends.
func start(t *testing.T, opts Options, setup ...func(*Daemon)) *running {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	if opts.Debounce == 0 {
		opts.Debounce = 20 * time.Millisecond
	}
	if opts.MineInterval == 0 {
		opts.MineInterval = time.Hour
	}
	if opts.ModelSpec == "" && opts.Embedder == nil {
		opts.ModelSpec = embed.Lexical
	}
	d, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, f := range setup {
		f(d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{d: d, c: daemonclient.NewClient(opts.Palace), cancel: cancel, done: make(chan struct{})}
	go func() {
		r.err = d.Run(ctx)
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		ctx, cancel := testutil.CleanupContext(t)
		defer cancel()
		r.wait(ctx, t)
	})
	return r
}

// idle waits until the daemon has scanned at least `scans` times and has
// nothing pending.
func (r *running) idle(t *testing.T, scans int64) api.Status {
	t.Helper()
	var st api.Status
	testutil.WaitFor(t, "the daemon to become idle", func() bool {
		var err error
		st, err = r.c.Status(context.Background())
		if err != nil {
			return false
		}
		i := st.Daemon
		return i.Scans >= scans && i.Idle()
	})
	return st
}

// searchFinds reports whether a search for query has a hit in wing whose
// text contains want.
func (r *running) searchFinds(t *testing.T, query, wing, want string) bool {
	t.Helper()
	res, err := r.c.Search(context.Background(), api.SearchRequest{Query: query, Results: 10})
	if err != nil {
		return false
	}
	for _, h := range res.Results {
		if h.Wing == wing && strings.Contains(h.Text, want) {
			return true
		}
	}
	return false
}

func wingOf(st api.Status, id string) (api.WingStatus, bool) {
	for _, w := range st.Wings {
		if w.ID == id {
			return w, true
		}
	}
	return api.WingStatus{}, false
}

func TestEditBecomesSearchable(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive})
	st := r.idle(t, 1)
	if !st.Active || st.Notes == 0 || len(st.Wings) != 4 || st.Daemon.Watch != "fsnotify" {
		t.Fatalf("after start: active %t, %d notes, %d wings, watch %q", st.Active, st.Notes, len(st.Wings), st.Daemon.Watch)
	}
	if w, _ := wingOf(st, "dwight"); w.LastMine == nil || w.LastMine.Trigger != triggerStart {
		t.Fatalf("dwight's last mine: %+v", w.LastMine)
	}
	testutil.AppendFile(t, filepath.Join(hive, "agents", "dwight", "memory.md"), "\n- The zebra-quartz rotation runs at noon.\n")
	testutil.WaitFor(t, "the edit to be searchable", func() bool { return r.searchFinds(t, "zebra-quartz", "dwight", "zebra-quartz") })
	st = r.idle(t, 1)
	if w, _ := wingOf(st, "dwight"); w.LastMine == nil || w.LastMine.Trigger != triggerWatch || w.LastMine.NotesAdded != 1 {
		t.Fatalf("dwight's last mine after the edit: %+v", w.LastMine)
	}
}

func TestNewAgentBecomesWing(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive})
	r.idle(t, 1)
	testutil.WriteFile(t, filepath.Join(hive, "agents", "creed", "memory.md"), "# Creed\n\n- The quarry key is under the mat.\n")
	testutil.WaitFor(t, "wing creed", func() bool { return r.searchFinds(t, "quarry key", "creed", "quarry") })
	st := r.idle(t, 1)
	if w, ok := wingOf(st, "creed"); !ok || w.Notes != 1 || len(w.Roots) != 1 {
		t.Fatalf("wing creed: %+v (found %t)", w, ok)
	}
	// A nested directory created later is watched too.
	testutil.WriteFile(t, filepath.Join(hive, "agents", "creed", "notes", "more.md"), "- Sprinkles was a good cat.\n")
	testutil.WaitFor(t, "a note in a new subdirectory", func() bool { return r.searchFinds(t, "sprinkles", "creed", "Sprinkles") })
}

// TestGlobAgentBecomesWing: with agents globs, a directory created after
// the start where a glob matches (bots/ and teams/red/agents/ not there
// yet) becomes a wing without a restart, found by fsnotify and, without
// it, by the mine loop; one whose wing id agents/pam has is listed under
// errors and never mined; a removed one's wing is kept, orphaned.
func TestGlobAgentBecomesWing(t *testing.T) {
	tests := []struct {
		name     string
		noWatch  bool
		interval time.Duration // an hour: only the watcher can notice
		trigger  string
	}{
		{"watcher", false, time.Hour, triggerWatch},
		{"mine loop", true, 20 * time.Millisecond, triggerTick},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			hive := testHive(t, tmp)
			r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, Agents: []string{"bots/*", "teams/*/agents/*"},
				NoWatch: tt.noWatch, MineInterval: tt.interval})
			if st := r.idle(t, 1); len(st.Wings) != 4 {
				t.Fatalf("%d wings at start, want the 4 of agents/", len(st.Wings))
			}
			testutil.WriteFile(t, filepath.Join(hive, "bots", "creed", "memory.md"), "# Creed\n\n- The quarry key is under the mat.\n")
			testutil.WriteFile(t, filepath.Join(hive, "teams", "red", "agents", "oscar", "memory.md"), "- Oscar audits the ledger.\n")
			testutil.WaitFor(t, "wing creed", func() bool { return r.searchFinds(t, "quarry key", "creed", "quarry") })
			testutil.WaitFor(t, "wing oscar", func() bool { return r.searchFinds(t, "audits ledger", "oscar", "ledger") })
			st := r.idle(t, 1)
			if w, ok := wingOf(st, "creed"); !ok || w.LastMine == nil || w.LastMine.Trigger != tt.trigger || len(w.Roots) != 1 || filepath.Base(filepath.Dir(w.Roots[0])) != "bots" {
				t.Fatalf("wing creed: %+v (found %t)", w, ok)
			}
			// A subdirectory created later in the new agent directory.
			testutil.WriteFile(t, filepath.Join(hive, "bots", "creed", "notes", "more.md"), "- Sprinkles was a good cat.\n")
			testutil.WaitFor(t, "a note in a new subdirectory", func() bool { return r.searchFinds(t, "sprinkles", "creed", "Sprinkles") })

			// agents/pam has wing id pam: bots/pam is not mined into it.
			testutil.WriteFile(t, filepath.Join(hive, "bots", "pam", "memory.md"), "- The forged kiln permit.\n")
			bots, _ := filepath.EvalSymlinks(filepath.Join(hive, "bots"))
			testutil.WaitFor(t, "bots/pam under errors", func() bool {
				st, err := r.c.Status(context.Background())
				e, ok := errorAt(st, filepath.Join(bots, "pam"))
				return err == nil && ok && strings.Contains(e.Error, `wing id "pam" is taken by agent directory agents/pam`)
			})
			st = r.idle(t, 1)
			if r.searchFinds(t, "forged kiln permit", "pam", "forged") {
				t.Fatal("bots/pam was mined into wing pam")
			}
			if w, _ := wingOf(st, "pam"); len(w.Roots) != 1 || filepath.Base(filepath.Dir(w.Roots[0])) != "agents" {
				t.Fatalf("wing pam's roots: %q", w.Roots)
			}

			// Moved out in one step, then removed: os.RemoveAll alone
			// deletes a file at a time, and a mine between two deletions
			// would keep only the notes not yet deleted.
			if err := os.Rename(filepath.Join(hive, "bots", "creed"), filepath.Join(tmp, "creed-gone")); err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(filepath.Join(tmp, "creed-gone")); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, "creed orphaned", func() bool {
				st, err := r.c.Status(context.Background())
				w, _ := wingOf(st, "creed")
				return err == nil && w.Orphaned && w.Notes == 2
			})
		})
	}
}

func TestMineLoopWithoutWatch(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, NoWatch: true, MineInterval: 20 * time.Millisecond})
	st := r.idle(t, 1)
	if st.Daemon.Watch != "off" {
		t.Fatalf("watch = %q, want off", st.Daemon.Watch)
	}
	testutil.AppendFile(t, filepath.Join(hive, "agents", "pam", "memory.md"), "\n- The kiln schedule moved to Thursdays.\n")
	testutil.WriteFile(t, filepath.Join(hive, "agents", "toby", "memory.md"), "- Toby keeps the incident binder.\n")
	testutil.WaitFor(t, "the edit found by the mine loop", func() bool { return r.searchFinds(t, "kiln schedule", "pam", "kiln") })
	testutil.WaitFor(t, "the new agent found by the mine loop", func() bool { return r.searchFinds(t, "incident binder", "toby", "binder") })
	st = r.idle(t, 1)
	if w, _ := wingOf(st, "pam"); w.LastMine == nil || w.LastMine.Trigger != triggerTick {
		t.Fatalf("pam's last mine: %+v", w.LastMine)
	}
}

// TestMineLoopRereadsRacilyCleanFile: an edit of the same size that keeps
// the file's mtime (coarse timestamps, an edit in the same second as the
// mine) is found by the mine loop, because a file mined right after it was
// written is read again rather than trusted on mtime and size.
func TestMineLoopRereadsRacilyCleanFile(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	path := filepath.Join(hive, "agents", "pam", "memory.md")
	testutil.WriteFile(t, path, "- The kiln is fired on Mondays.\n")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, NoWatch: true, MineInterval: 20 * time.Millisecond})
	r.idle(t, 1)
	if !r.searchFinds(t, "kiln", "pam", "kiln") {
		t.Fatal("the first mine did not index the kiln note")
	}
	testutil.WriteFile(t, path, "- The oven is fired on Mondays.\n")
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the same-size, same-mtime edit found by the mine loop", func() bool { return r.searchFinds(t, "oven", "pam", "oven") })
}

// TestSettledFileIsReadOnce: a file mined before it settled is read again
// by the mine loop only until a read finds it unchanged after it settled;
// from then on its stat is trusted, so it is not hashed at every tick.
func TestSettledFileIsReadOnce(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	path := filepath.Join(hive, "agents", "pam", "memory.md")
	// Written 1.5 s ago: mined before it settles, settled soon after.
	written := time.Now().Add(-1500 * time.Millisecond)
	if err := os.Chtimes(path, written, written); err != nil {
		t.Fatal(err)
	}
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, NoWatch: true, MineInterval: 20 * time.Millisecond})
	r.idle(t, 1)
	resolved, _ := filepath.EvalSymlinks(path)
	// Recorded as settled: mined, or read unchanged, more than two seconds
	// (mine's racy window) after its last write.
	testutil.WaitFor(t, "pam's memory.md recorded as settled", func() bool {
		src, ok := r.d.p.Source("pam", resolved)
		return ok && src.Mined.Sub(src.Mtime) > 2*time.Second
	})
	if !r.searchFinds(t, "Dark mode", "pam", "Dark mode") {
		t.Fatal("pam's notes are not searchable")
	}
}

func TestOverflowFallsBackToScan(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	opts := Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, dropEvents: true}
	errs := make(chan error, 1)
	r := start(t, opts, func(d *Daemon) { d.testErrs = errs })
	r.idle(t, 1)
	testutil.AppendFile(t, filepath.Join(hive, "agents", "jim", "memory.md"), "\n- The teapot note is in the drawer.\n")
	// The event was lost; the overflow the kernel reports makes up for it.
	errs <- fsnotify.ErrEventOverflow
	testutil.WaitFor(t, "the change found after the overflow", func() bool { return r.searchFinds(t, "teapot", "jim", "teapot") })
	st := r.idle(t, 2)
	if w, _ := wingOf(st, "jim"); w.LastMine == nil || w.LastMine.Trigger != triggerOverflow {
		t.Fatalf("jim's last mine: %+v", w.LastMine)
	}
}

func TestRemovedAgentIsOrphanedNotDeleted(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, MineInterval: 20 * time.Millisecond})
	st := r.idle(t, 1)
	before, _ := wingOf(st, "angela")
	if err := os.RemoveAll(filepath.Join(hive, "agents", "angela")); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "angela orphaned", func() bool {
		st, err := r.c.Status(context.Background())
		w, _ := wingOf(st, "angela")
		return err == nil && w.Orphaned
	})
	st = r.idle(t, st.Daemon.Scans+2)
	after, _ := wingOf(st, "angela")
	if after.Notes != before.Notes || after.Notes == 0 {
		t.Fatalf("angela's notes: %d before removal, %d after", before.Notes, after.Notes)
	}
	// An agent whose markdown is all gone keeps its notes too.
	if err := os.Remove(filepath.Join(hive, "agents", "jim", "memory.md")); err != nil {
		t.Fatal(err)
	}
	st = r.idle(t, st.Daemon.Scans+2)
	if w, _ := wingOf(st, "jim"); w.Notes == 0 {
		t.Fatalf("jim's notes were dropped with his file: %+v", w)
	}
}

func TestFailingFileBacksOff(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	bad := filepath.Join(hive, "agents", "kevin", "memory.md")
	testutil.WriteFile(t, bad, "- chili \xff\xfe recipe\n")
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, NoWatch: true, MineInterval: 5 * time.Millisecond})
	const ticks = 60
	st := r.idle(t, ticks)
	resolved, _ := filepath.EvalSymlinks(bad)
	var fe *api.FileError
	for i := range st.Daemon.Errors {
		if st.Daemon.Errors[i].Path == resolved {
			fe = &st.Daemon.Errors[i]
		}
	}
	if fe == nil {
		t.Fatalf("no error for %s in %+v", bad, st.Daemon.Errors)
	}
	if !strings.Contains(fe.Error, "UTF-8") || fe.Wing != "kevin" {
		t.Fatalf("error entry: %+v", fe)
	}
	checkBackoff(t, fe.Failures, st.Daemon.Scans)
	testutil.WriteFile(t, bad, "- chili recipe, fixed\n")
	testutil.WaitFor(t, "the fixed file to mine", func() bool { return r.searchFinds(t, "chili recipe", "kevin", "fixed") })
	testutil.WaitFor(t, "the error to clear", func() bool {
		st, err := r.c.Status(context.Background())
		return err == nil && len(st.Daemon.Errors) == 0
	})
}

// checkBackoff checks that something failing at every try failed as often
// as the backoff retries it in scans scans of the mine loop (the start
// scan and its ticks): at the first two, then after 1, 3, 7, … skipped
// ticks (up to maxRetrySkip-1), never once per tick. The scans are those
// status reported, not those asked for: under load the loop may run many
// more before a status read finds the daemon idle. (The count can differ
// by one when a tick comes between status's reads.)
func checkBackoff(t *testing.T, failures int, scans int64) {
	t.Helper()
	want := 0
	for at, skip := int64(1), int64(1); at <= scans; at, skip = at+skip, min(2*skip, maxRetrySkip) {
		want++
	}
	if failures < 3 || failures < want-1 || failures > want+1 {
		t.Fatalf("%d failures in %d scans; want %d (a doubling backoff), and at least 3", failures, scans, want)
	}
}

func TestRestartMinesNothingUnchanged(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	pal := filepath.Join(tmp, "palace")
	emb := &embedtest.Hashing{}
	r := start(t, Options{Palace: pal, Hive: hive, Embedder: emb, ModelSpec: "test"})
	r.idle(t, 1)
	if emb.Texts() == 0 {
		t.Fatal("nothing embedded on the first start")
	}
	r.stop(t)
	emb.Reset()
	r = start(t, Options{Palace: pal, Hive: hive, Embedder: emb, ModelSpec: "test"})
	st := r.idle(t, 1)
	if emb.Calls() != 0 || st.Daemon.Mines != 0 {
		t.Fatalf("restart embedded %d texts in %d mines; want none", emb.Texts(), st.Daemon.Mines)
	}
	if st.Notes == 0 || st.Model != "test" {
		t.Fatalf("restarted status: %d notes, model %q", st.Notes, st.Model)
	}
}

// gatedEmbedder embeds like Hashing but, from its n-th call on, blocks
// until its context ends, so a test can stop the daemon mid-mine.
type gatedEmbedder struct {
	embedtest.Hashing
	n       int
	mu      sync.Mutex
	calls   int
	reached chan struct{}
}

func (g *gatedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	g.mu.Lock()
	g.calls++
	c := g.calls
	g.mu.Unlock()
	if c == g.n {
		close(g.reached)
	}
	if c >= g.n {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return g.Hashing.Embed(ctx, texts)
}

// bigHive writes agents×files memory files of notes each.
func bigHive(t testing.TB, dir string, agents, files, notes int) string {
	t.Helper()
	hive := filepath.Join(dir, "hive")
	for a := range agents {
		for f := range files {
			var b strings.Builder
			fmt.Fprintf(&b, "# Agent %d file %d\n\n", a, f)
			for n := range notes {
				fmt.Fprintf(&b, "- Fact %d of file %d of agent %d: the word%d goes with the word%d.\n", n, f, a, (a*7+n)%97, (f*13+n)%89)
			}
			testutil.WriteFile(t, filepath.Join(hive, "agents", fmt.Sprintf("agent%02d", a), fmt.Sprintf("memory%d.md", f)), b.String())
		}
	}
	return hive
}

// checkConsistent opens the palace and checks every wing loads and every
// source's notes are present.
func checkConsistent(t *testing.T, dir string, emb embed.Embedder) map[string][]string {
	t.Helper()
	p, err := palace.Open(context.Background(), dir, palace.Options{Embedder: emb, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Damaged(); len(d) > 0 {
		t.Fatalf("damaged wings after stop: %+v", d)
	}
	ids := map[string][]string{}
	for _, w := range p.Wings() {
		have := map[string]bool{}
		for _, n := range p.Notes(w.ID) {
			have[n.ID] = true
			ids[w.ID] = append(ids[w.ID], n.ID)
			if emb != nil && p.Vector(w.ID, n.ID) == nil {
				t.Fatalf("note %s of wing %s has no vector", n.ID, w.ID)
			}
		}
		total := 0
		for _, s := range p.Sources(w.ID) {
			total += len(s.NoteIDs)
			for _, id := range s.NoteIDs {
				if !have[id] {
					t.Fatalf("wing %s: source %s lists note %s, which is missing", w.ID, s.Path, id)
				}
			}
		}
		if total != len(have) {
			t.Fatalf("wing %s: sources list %d notes, wing has %d", w.ID, total, len(have))
		}
		slices.Sort(ids[w.ID])
	}
	return ids
}

func TestStopDuringLargeMineLeavesConsistentPalace(t *testing.T) {
	tmp := t.TempDir()
	hive := bigHive(t, tmp, 12, 4, 40)
	pal := filepath.Join(tmp, "palace")
	g := &gatedEmbedder{n: 20, reached: make(chan struct{})}
	r := start(t, Options{Palace: pal, Hive: hive, Embedder: g, ModelSpec: "test"})
	receive(t, "the mine to reach the gate", g.reached)
	r.stop(t)
	partial := checkConsistent(t, pal, &embedtest.Hashing{})
	got := 0
	for _, ids := range partial {
		got += len(ids)
	}
	if got == 0 || got >= 12*4*40 {
		t.Fatalf("%d notes saved; want a partial mine", got)
	}

	// A restart finishes the job; the result is what one clean mine gives.
	emb := &embedtest.Hashing{}
	r = start(t, Options{Palace: pal, Hive: hive, Embedder: emb, ModelSpec: "test"})
	r.idle(t, 1)
	r.stop(t)
	final := checkConsistent(t, pal, emb)

	fresh := filepath.Join(tmp, "fresh")
	p, err := palace.Open(context.Background(), fresh, palace.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mine.Mine(context.Background(), p, hive, mine.Options{}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	want := checkConsistent(t, fresh, emb)
	if len(final) != len(want) {
		t.Fatalf("%d wings after restart, %d from a clean mine", len(final), len(want))
	}
	for w, ids := range want {
		if !slices.Equal(final[w], ids) {
			t.Fatalf("wing %s: %d notes after restart, %d from a clean mine", w, len(final[w]), len(ids))
		}
	}
}

func TestMineRequestsWhileRunning(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive})
	r.idle(t, 1)
	extra := filepath.Join(tmp, "notes")
	testutil.WriteFile(t, filepath.Join(extra, "a.md"), "- The aardvark audit is due Monday.\n")
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 4 {
		wg.Add(3)
		go func() {
			defer wg.Done()
			rep, err := r.c.Mine(ctx, api.MineRequest{Path: extra, Wing: "research"})
			if err == nil && rep.Result.FilesSeen != 1 {
				err = fmt.Errorf("mine saw %d files", rep.Result.FilesSeen)
			}
			errs <- err
		}()
		go func() {
			defer wg.Done()
			testutil.AppendFile(t, filepath.Join(hive, "agents", "pam", "memory.md"), fmt.Sprintf("\n- Concurrent fact %d.\n", i))
			_, err := r.c.Mine(ctx, api.MineRequest{Path: hive})
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := r.c.Search(ctx, api.SearchRequest{Query: "build", Results: 3})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, "every concurrent fact", func() bool {
		res, err := r.c.Search(ctx, api.SearchRequest{Query: "concurrent fact", Wings: []string{"pam"}, Results: 10})
		n := 0
		for _, h := range res.Results {
			if strings.Contains(h.Text, "Concurrent fact") {
				n++
			}
		}
		return err == nil && n == 4
	})
	if !r.searchFinds(t, "aardvark", "research", "aardvark") {
		t.Fatal("the handed-over mine is not searchable")
	}
	r.idle(t, 1)
	r.stop(t)
	checkConsistent(t, filepath.Join(tmp, "palace"), nil)
}

func TestClientErrors(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	pal := filepath.Join(tmp, "palace")
	ctx := context.Background()
	if _, err := daemonclient.NewClient(pal).Status(ctx); !errors.Is(err, api.ErrNotRunning) {
		t.Fatalf("status without a daemon: %v", err)
	}
	r := start(t, Options{Palace: pal, Hive: hive})
	r.idle(t, 1)
	tests := []struct {
		name string
		req  api.SearchRequest
		want error
		msg  string
	}{
		{"unknown wing", api.SearchRequest{Query: "x", Wings: []string{"nobody"}}, palace.ErrUnknownWing, "known wings: angela, dwight, jim, pam"},
		{"unknown excluded wing", api.SearchRequest{Query: "x", ExcludeWings: []string{"nobody"}}, palace.ErrUnknownWing, `"nobody" (known wings: angela, dwight, jim, pam)`},
		{"other model", api.SearchRequest{Query: "x", Model: "ollama:other"}, api.ErrOtherModel, "uses model lexical, not ollama:other"},
		{"empty query", api.SearchRequest{Query: "  "}, nil, "search needs a QUERY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.c.Search(ctx, tt.req)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("error %v; want %v with %q", err, tt.want, tt.msg)
			}
		})
	}
	// The refusal names the daemon's model, so the caller's advice can.
	_, err := r.c.Search(ctx, api.SearchRequest{Query: "x", Model: "ollama:other"})
	var om *api.OtherModelError
	if !errors.As(err, &om) || om.Daemon != "lexical" || om.Caller != "ollama:other" || om.PID != os.Getpid() {
		t.Fatalf("other model: %v; want an *OtherModelError naming lexical and ollama:other", err)
	}
	if _, err := r.c.Mine(ctx, api.MineRequest{Path: "relative/path"}); err == nil || !strings.Contains(err.Error(), "not absolute") {
		t.Fatalf("relative mine path: %v", err)
	}
	rep, err := r.c.Mine(ctx, api.MineRequest{Path: filepath.Join(hive, "missing")})
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("mine of a missing path: %v (%+v)", err, rep)
	}
}

func TestOneDaemonPerPalace(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	pal := filepath.Join(tmp, "palace")
	start(t, Options{Palace: pal, Hive: hive})
	// The second daemon asks the socket instead of waiting out a lock the
	// first one holds for good.
	done := make(chan error, 1)
	go func() {
		// Longer than the test waits: a daemon that waited for the lock
		// would time the test out, not fail with ErrLocked.
		d, err := New(context.Background(), Options{Palace: pal, Hive: hive, Logger: testLogger(t), LockTimeout: 2 * time.Until(testutil.WaitDeadline(t))})
		if err == nil {
			d.Close()
		}
		done <- err
	}()
	err := receive(t, "the second daemon to ask the running one (not wait for the palace lock)", done)
	want := fmt.Sprintf("a memminer daemon (pid %d) already serves this palace", os.Getpid())
	if !errors.Is(err, ErrAlreadyRunning) || !strings.Contains(err.Error(), want) {
		t.Fatalf("second daemon: %v; want ErrAlreadyRunning with %q", err, want)
	}
	info, err := os.Stat(SocketPath(pal))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Type() != fs.ModeSocket || info.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, want a 0600 socket", info.Mode())
	}
}

func TestPalaceLockedByAnotherWriter(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	pal := filepath.Join(tmp, "palace")
	// A writer that is no daemon (memminer mine, say) has no socket: the
	// lock decides.
	p, err := palace.Open(context.Background(), pal, palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = New(context.Background(), Options{Palace: pal, Hive: hive, Logger: testLogger(t)})
	if !errors.Is(err, palace.ErrLocked) || errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("daemon beside another writer: %v, want ErrLocked", err)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	file := filepath.Join(tmp, "file")
	testutil.WriteFile(t, file, "x")
	tests := []struct {
		name string
		opts Options
		msg  string
	}{
		{"no hive", Options{Palace: filepath.Join(tmp, "p1")}, "no hive set"},
		{"missing hive", Options{Palace: filepath.Join(tmp, "p2"), Hive: filepath.Join(tmp, "nope")}, "no such file"},
		{"hive is a file", Options{Palace: filepath.Join(tmp, "p3"), Hive: file}, "not a directory"},
		{"remote metrics", Options{Palace: filepath.Join(tmp, "p4"), Hive: hive, MetricsAddr: "0.0.0.0:0"}, `metrics address "0.0.0.0:0" is reachable from other machines; use 127.0.0.1:0 or ::1`},
		{"bad metrics address", Options{Palace: filepath.Join(tmp, "p5"), Hive: hive, MetricsAddr: "9464"}, "want host:port"},
		{"long socket path", Options{Palace: filepath.Join(tmp, strings.Repeat("p", 120)), Hive: hive}, "longer than"},
		{"agents directory as hive", Options{Palace: filepath.Join(tmp, "p6"), Hive: filepath.Join(hive, "agents")}, "has no agents/ directory; it looks like the agents directory of hive " + hive},
		{"bad agents glob", Options{Palace: filepath.Join(tmp, "p7"), Hive: hive, Agents: []string{"bots/*", "../x/*"}}, `agents: pattern "../x/*" has a ".." element`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Logger = testLogger(t)
			d, err := New(context.Background(), tt.opts)
			if err == nil {
				d.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("New: %v; want an error with %q", err, tt.msg)
			}
		})
	}
}

func TestStaleSocketIsReplaced(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	pal := filepath.Join(tmp, "palace")
	r := start(t, Options{Palace: pal, Hive: hive})
	r.idle(t, 1)
	r.stop(t)
	if _, err := os.Stat(SocketPath(pal)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("socket left after stop: %v", err)
	}
	// A crash leaves the socket file behind.
	testutil.WriteFile(t, SocketPath(pal), "")
	if _, err := daemonclient.NewClient(pal).Status(context.Background()); !errors.Is(err, api.ErrNotRunning) {
		t.Fatalf("status on a stale socket: %v", err)
	}
	r = start(t, Options{Palace: pal, Hive: hive})
	if st := r.idle(t, 1); !st.Active {
		t.Fatal("daemon not active after replacing a stale socket")
	}
}

func TestWakeUpMatchesDirect(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	pal := filepath.Join(tmp, "palace")
	r := start(t, Options{Palace: pal, Hive: hive})
	r.idle(t, 1)
	ctx := context.Background()
	p, err := palace.Open(ctx, pal, palace.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []wakeup.Options{{}, {Tokens: 200, Wing: "dwight"}} {
		want, err := wakeup.Build(p, wakeup.Options{Tokens: opts.Tokens, Wing: opts.Wing, ReadFile: wakeup.ReadFileLimited})
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.c.WakeUp(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got.Markdown() != want.Markdown() || got.Tokens != want.Tokens || len(got.Story) != len(want.Story) {
			t.Fatalf("digest through the socket differs:\n%s\n--- direct\n%s", got.Markdown(), want.Markdown())
		}
	}
	_, err = r.c.WakeUp(ctx, wakeup.Options{Wing: "nobody"})
	if !errors.Is(err, wakeup.ErrUnknownWing) || !strings.Contains(err.Error(), "known wings: angela, dwight, jim, pam") {
		t.Fatalf("unknown wing: %v", err)
	}
}

func TestMetrics(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, MetricsAddr: "127.0.0.1:0"})
	r.idle(t, 1)
	if _, err := r.c.Search(context.Background(), api.SearchRequest{Query: "db-2"}); err != nil {
		t.Fatal(err)
	}
	body := r.metrics(t)
	fams := parseExposition(t, body)
	if f := fams["memminer_notes"]; f == nil || len(f.GetMetric()) != 4 {
		t.Errorf("memminer_notes parsed as %v", f)
	}
	for _, want := range []string{
		`memminer_notes{wing="dwight"} 11`,
		`memminer_mines_total{result="ok",trigger="start"} 4`,
		`memminer_mine_duration_seconds_count 4`,
		`memminer_search_duration_seconds_count 1`,
		`memminer_remember_duration_seconds_count 0`,
		`memminer_conflicts_open 0`,
		`memminer_mine_failures_total 0`,
		`process_resident_memory_bytes`,
	} {
		if !strings.Contains(string(body), want+"\n") && !strings.Contains(string(body), want+" ") {
			t.Errorf("metrics lack %q", want)
		}
	}
	st, err := r.c.Status(context.Background())
	if err != nil || st.Daemon.Metrics == nil || *st.Daemon.Metrics != r.d.MetricsAddr() {
		t.Fatalf("status metrics address %v, %v", st.Daemon.Metrics, err)
	}
	// Status carries the same counts as numbers, and the last hour.
	act := st.Daemon.Activity
	if act == nil || act.SearchSeconds.Count != 1 || act.MineSeconds.Count != 4 || len(act.SearchSeconds.Counts) != len(act.SearchSeconds.Bounds)+1 ||
		!slices.Contains(act.Mines, api.MineCount{Trigger: "start", Result: "ok", Count: 4}) || len(act.Recent) == 0 || len(act.Recent) > 2 {
		t.Fatalf("status activity: %+v", act)
	}
	var searches, mines int
	for _, m := range act.Recent {
		searches, mines = searches+m.Searches, mines+m.Mines
	}
	if searches != 1 || mines != 4 {
		t.Errorf("the last hour counts %d searches and %d mines, want 1 and 4", searches, mines)
	}
}

// TestTimeline: a timeline counts each minute of the last hour in its own
// slot and gives the minutes with counts, oldest first; it forgets a
// minute an hour on, when its slot is reused.
func TestTimeline(t *testing.T) {
	start := time.Date(2026, 12, 1, 10, 0, 30, 0, time.UTC)
	minute := func(d time.Duration, searches int) api.Minute {
		return api.Minute{At: start.Add(d).Truncate(time.Minute), Searches: searches}
	}
	tests := []struct {
		name string
		adds []time.Duration // after start, each a search
		at   time.Duration   // when it is read
		want []api.Minute
	}{
		{name: "one minute", adds: []time.Duration{0, 10 * time.Second}, at: 0, want: []api.Minute{minute(0, 2)}},
		{name: "two minutes apart", adds: []time.Duration{0, 2 * time.Minute}, at: 3 * time.Minute, want: []api.Minute{minute(0, 1), minute(2*time.Minute, 1)}},
		{name: "an hour on, the slot reused", adds: []time.Duration{0, time.Hour}, at: time.Hour, want: []api.Minute{minute(time.Hour, 1)}},
		{name: "an hour on, nothing since", adds: []time.Duration{0}, at: time.Hour, want: []api.Minute{}},
		{name: "59 minutes on, still there", adds: []time.Duration{0}, at: 59 * time.Minute, want: []api.Minute{minute(0, 1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tl timeline
			for _, d := range tt.adds {
				tl.add(start.Add(d), countSearch)
			}
			if got := tl.last(start.Add(tt.at)); !slices.Equal(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// metrics scrapes the daemon's metrics endpoint.
func (r *running) metrics(t *testing.T) string {
	t.Helper()
	resp, err := http.Get("http://" + r.d.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

func TestMetricsAddrLoopbackOnly(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:9464", false, true},
		{"[::1]:9464", false, true},
		{"localhost:9464", false, true},
		{"0.0.0.0:9464", false, false},
		{":9464", false, false},
		{"192.0.2.1:9464", false, false},
		{"0.0.0.0:9464", true, true},
		{"127.0.0.1", false, false},
		{"127.0.0.1:http-nope", false, false},
	}
	for _, tt := range tests {
		err := CheckMetricsAddr(tt.addr, tt.remote)
		if (err == nil) != tt.ok {
			t.Errorf("CheckMetricsAddr(%q, %t) = %v, want ok=%t", tt.addr, tt.remote, err, tt.ok)
		}
	}
}

// testComponent records what the daemon offers a component.
type testComponent struct {
	scanned chan struct{}
}

func (c *testComponent) Name() string { return "test" }
func (c *testComponent) Run(ctx context.Context, h *Host) error {
	<-ctx.Done()
	return nil
}
func (c *testComponent) Scanned(context.Context, *Host) {
	select {
	case c.scanned <- struct{}{}:
	default:
	}
}
func (c *testComponent) ConflictsOpen(context.Context) int { return 2 }
func (c *testComponent) Status() any                       { return map[string]string{"state": "watching"} }
func (c *testComponent) Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /conflicts", func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]int{"open": 2})
	})
}

func TestComponentPlugsIn(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	c := &testComponent{scanned: make(chan struct{}, 1)}
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, Components: []Component{c}})
	receive(t, "the component to be told of the start scan", c.scanned)
	st := r.idle(t, 1)
	if st.ConflictsOpen != 2 || st.Daemon.Components["test"] == nil {
		t.Fatalf("status: conflicts_open %d, components %v", st.ConflictsOpen, st.Daemon.Components)
	}
	var got map[string]int
	if err := r.c.Get(context.Background(), "/conflicts", nil, &got); err != nil || got["open"] != 2 {
		t.Fatalf("component route: %v, %v", got, err)
	}
}

// logBuffer collects a daemon's log lines and passes them on to t.Log.
type logBuffer struct {
	t     *testing.T
	mu    sync.Mutex
	lines []string
}

func (b *logBuffer) Write(p []byte) (int, error) {
	line := strings.TrimRight(string(p), "\n")
	b.t.Log(line)
	b.mu.Lock()
	b.lines = append(b.lines, line)
	b.mu.Unlock()
	return len(p), nil
}

// count returns how many lines hold every one of parts.
func (b *logBuffer) count(parts ...string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, l := range b.lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			n++
		}
	}
	return n
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// errorAt returns the status error reported for path.
func errorAt(st api.Status, path string) (api.FileError, bool) {
	for _, e := range st.Daemon.Errors {
		if e.Path == path {
			return e, true
		}
	}
	return api.FileError{}, false
}

// minedPalace mines hive, and a notes directory outside it as wing
// research, into the palace in pal with emb (nil: lexically), the way
// memminer mine does; it returns the notes directory.
func minedPalace(t *testing.T, pal, hive string, emb embed.Embedder) string {
	t.Helper()
	extra := filepath.Join(filepath.Dir(hive), "notes")
	testutil.WriteFile(t, filepath.Join(extra, "a.md"), "- The aardvark audit is due Monday.\n")
	ctx := context.Background()
	p, err := palace.Open(ctx, pal, palace.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := mine.Mine(ctx, p, hive, mine.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := mine.Mine(ctx, p, extra, mine.Options{Wing: "research"}); err != nil {
		t.Fatal(err)
	}
	return extra
}

// TestModelBackReembedsWings: wings mined lexically while the model was
// unavailable are re-embedded when the daemon starts with the model, even
// those no agent directory of the hive mines, so search works again.
func TestModelBackReembedsWings(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	pal := filepath.Join(tmp, "palace")
	minedPalace(t, pal, hive, nil)
	// angela's agent is gone; her wing is kept, so it is searched too.
	if err := os.RemoveAll(filepath.Join(hive, "agents", "angela")); err != nil {
		t.Fatal(err)
	}
	emb := &embedtest.Hashing{}
	r := start(t, Options{Palace: pal, Hive: hive, Embedder: emb})
	st := r.idle(t, 1)
	if st.Model != emb.Model() || len(st.Wings) != 5 {
		t.Fatalf("status model %q, %d wings", st.Model, len(st.Wings))
	}
	for _, w := range st.Wings {
		if w.Model != emb.Model() {
			t.Errorf("wing %s still embedded with %s", w.ID, w.Model)
		}
	}
	if emb.Texts() != st.Notes {
		t.Errorf("embedded %d texts for %d notes; want each note once", emb.Texts(), st.Notes)
	}
	if len(st.Daemon.Errors) != 0 {
		t.Errorf("errors: %+v", st.Daemon.Errors)
	}
	if _, err := r.c.Search(context.Background(), api.SearchRequest{Query: "db-2"}); err != nil {
		t.Fatalf("search after the re-embedding: %v", err)
	}
	for _, c := range []struct{ query, wing, want string }{
		{"aardvark audit", "research", "aardvark"},
		{"db-2", "dwight", "db-2"},
	} {
		if !r.searchFinds(t, c.query, c.wing, c.want) {
			t.Errorf("search %q finds nothing in wing %s", c.query, c.wing)
		}
	}
	r.stop(t)

	// Saved: a restart has nothing left to embed.
	emb.Reset()
	r = start(t, Options{Palace: pal, Hive: hive, Embedder: emb})
	st = r.idle(t, 1)
	if emb.Calls() != 0 || st.Daemon.Mines != 0 {
		t.Fatalf("restart embedded %d texts in %d mines; want none", emb.Texts(), st.Daemon.Mines)
	}
}

// TestLexicalDaemonKeepsVectors: a daemon running lexically because the
// model is unavailable searches every wing without touching its vectors,
// so nothing needs re-embedding once the model is back.
func TestLexicalDaemonKeepsVectors(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	pal := filepath.Join(tmp, "palace")
	emb := &embedtest.Hashing{}
	minedPalace(t, pal, hive, emb)
	r := start(t, Options{Palace: pal, Hive: hive, ModelSpec: emb.Model(), ModelError: "model files missing"})
	st := r.idle(t, 1)
	if st.Available || st.Daemon.Mines != 0 {
		t.Fatalf("lexical daemon: available %t, %d mines", st.Available, st.Daemon.Mines)
	}
	for _, w := range st.Wings {
		if w.Model != emb.Model() {
			t.Errorf("wing %s re-embedded with %s by a lexical daemon", w.ID, w.Model)
		}
	}
	if !r.searchFinds(t, "aardvark audit", "research", "aardvark") {
		t.Fatal("a lexical daemon does not search the embedded wings")
	}
	r.stop(t)
	emb.Reset()
	r = start(t, Options{Palace: pal, Hive: hive, Embedder: emb})
	if st := r.idle(t, 1); emb.Calls() != 0 || st.Daemon.Mines != 0 {
		t.Fatalf("the model's return embedded %d texts in %d mines; want none", emb.Texts(), st.Daemon.Mines)
	}
}

// switchEmbedder embeds like Hashing, or fails while fail is set.
type switchEmbedder struct {
	embedtest.Hashing
	fail atomic.Bool
}

func (s *switchEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if s.fail.Load() {
		return nil, errors.New("model server unreachable")
	}
	return s.Hashing.Embed(ctx, texts)
}

// TestFailedReembedBacksOff: a re-embedding that fails shows in status,
// is retried with the same backoff as a failing file, and clears once the
// model answers.
func TestFailedReembedBacksOff(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	pal := filepath.Join(tmp, "palace")
	extra := minedPalace(t, pal, hive, nil)
	extra, _ = filepath.EvalSymlinks(extra)
	agents, _ := filepath.EvalSymlinks(filepath.Join(hive, "agents"))
	emb := &switchEmbedder{}
	emb.fail.Store(true)
	r := start(t, Options{Palace: pal, Hive: hive, Embedder: emb, NoWatch: true, MineInterval: 5 * time.Millisecond})
	const ticks = 60
	st := r.idle(t, ticks)
	research, ok := errorAt(st, extra)
	if !ok || research.Wing != "research" || !strings.Contains(research.Error, "re-embed with model test-hashing: ") || !strings.Contains(research.Error, "unreachable") {
		t.Fatalf("no re-embed error for wing research in %+v", st.Daemon.Errors)
	}
	checkBackoff(t, research.Failures, st.Daemon.Scans)
	if e, ok := errorAt(st, filepath.Join(agents, "dwight")); !ok || !strings.Contains(e.Error, "unreachable") {
		t.Fatalf("no error for dwight's agent directory in %+v", st.Daemon.Errors)
	}
	emb.fail.Store(false)
	testutil.WaitFor(t, "the errors to clear", func() bool {
		st, err := r.c.Status(context.Background())
		return err == nil && len(st.Daemon.Errors) == 0
	})
	st = r.idle(t, 1)
	for _, w := range st.Wings {
		if w.Model != emb.Model() {
			t.Errorf("wing %s still embedded with %s", w.ID, w.Model)
		}
	}
	if !r.searchFinds(t, "aardvark audit", "research", "aardvark") {
		t.Fatal("wing research not searchable after the model came back")
	}
}

// TestBadAgentNamesShowInStatus: an agent directory whose name is no wing
// id is skipped with one warning and listed under errors, whether it was
// there at start or appears later; the other agents are mined as usual.
// TestSymlinkedAgents: an agent directory that is a symlink into the hive
// is mined into the wing of its own name, and the watcher sees its edits;
// one leading out of the hive is not mined, nor watched, and status says
// why.
func TestSymlinkedAgents(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	testutil.WriteFile(t, filepath.Join(hive, "shared", "dave", "memory.md"), "- Carol sells the paper.\n")
	testutil.WriteFile(t, filepath.Join(tmp, "outside", "evil", "memory.md"), "- The vault code is 1234.\n")
	links := map[string]string{
		"carol": filepath.Join(hive, "shared", "dave"),
		"evil":  filepath.Join(tmp, "outside", "evil"),
		"dw":    filepath.Join(hive, "agents", "dwight"), // an alias: would steal dwight's watch
	}
	for link, target := range links {
		if err := os.Symlink(target, filepath.Join(hive, "agents", link)); err != nil {
			t.Fatal(err)
		}
	}
	watchers := make(chan *watcher, 1)
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive}, func(d *Daemon) { d.testWatcher = func(w *watcher) { watchers <- w } })
	st := r.idle(t, 1)
	agents, _ := filepath.EvalSymlinks(filepath.Join(hive, "agents"))
	if e, ok := errorAt(st, filepath.Join(agents, "evil")); !ok || !strings.Contains(e.Error, "outside the hive") {
		t.Errorf("errors: %+v", st.Daemon.Errors)
	}
	if _, ok := wingOf(st, "evil"); ok {
		t.Error("the link leading out of the hive became a wing")
	}
	if !r.searchFinds(t, "Carol paper", "carol", "Carol") {
		t.Error("the link inside the hive was not mined into wing carol")
	}
	if e, ok := errorAt(st, filepath.Join(agents, "dw")); !ok || !strings.Contains(e.Error, "mined twice") {
		t.Errorf("errors: %+v", st.Daemon.Errors)
	}
	testutil.AppendFile(t, filepath.Join(hive, "agents", "dwight", "memory.md"), "- The boiler room key is blue.\n")
	testutil.WaitFor(t, "dwight's edit, beside a link to his directory", func() bool { return r.searchFinds(t, "boiler room key", "dwight", "boiler") })
	// The mine loop never ticks (an hour): only the watcher can notice.
	testutil.AppendFile(t, filepath.Join(hive, "agents", "carol", "memory.md"), "- Carol also sells staplers.\n")
	testutil.WaitFor(t, "the edit through the link", func() bool { return r.searchFinds(t, "staplers", "carol", "staplers") })
	w := <-watchers
	for _, p := range w.fw.WatchList() {
		if strings.Contains(p, "evil") || strings.Contains(p, filepath.Join("agents", "dw")+string(filepath.Separator)) || strings.HasSuffix(p, filepath.Join("agents", "dw")) || strings.HasPrefix(p, filepath.Join(tmp, "outside")) {
			t.Errorf("watching %s, below a link that leads out of the hive", p)
		}
	}
}

// TestRenamedTeamIsWatched: after a directory holding agent directories
// is renamed, edits below its new name are seen by the watcher (inotify
// keeps the moved watches under their old paths).
func TestRenamedTeamIsWatched(t *testing.T) {
	tmp := t.TempDir()
	hive := testHive(t, tmp)
	testutil.WriteFile(t, filepath.Join(hive, "teams", "blue", "agents", "oscar", "memory.md"), "- Oscar audits the ledger.\n")
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, Agents: []string{"teams/*/agents/*"}})
	r.idle(t, 1)
	if err := os.Rename(filepath.Join(hive, "teams", "blue"), filepath.Join(hive, "teams", "red")); err != nil {
		t.Fatal(err)
	}
	red, _ := filepath.EvalSymlinks(filepath.Join(hive, "teams", "red", "agents", "oscar"))
	testutil.WaitFor(t, "wing oscar mined from its new place", func() bool {
		st, err := r.c.Status(context.Background())
		w, _ := wingOf(st, "oscar")
		return err == nil && slices.Contains(w.Roots, red)
	})
	r.idle(t, 1)
	testutil.AppendFile(t, filepath.Join(red, "memory.md"), "- Oscar moved to the red team.\n")
	testutil.WaitFor(t, "the edit below the new name", func() bool { return r.searchFinds(t, "red team", "oscar", "red team") })
}

func TestBadAgentNamesShowInStatus(t *testing.T) {
	tests := []struct {
		name     string
		noWatch  bool
		interval time.Duration
		scans    int64 // scans to wait for before counting warnings
	}{
		// The mine loop never ticks: only the watcher can notice.
		{"watcher", false, time.Hour, 1},
		{"mine loop", true, 5 * time.Millisecond, 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			hive := testHive(t, tmp)
			testutil.WriteFile(t, filepath.Join(hive, "agents", "Bad Name", "memory.md"), "- Never mined.\n")
			logs := &logBuffer{t: t}
			r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, NoWatch: tt.noWatch, MineInterval: tt.interval, Logger: logs.logger()})
			agents, _ := filepath.EvalSymlinks(filepath.Join(hive, "agents"))
			st := r.idle(t, 1)
			if e, ok := errorAt(st, filepath.Join(agents, "Bad Name")); !ok || !strings.HasPrefix(e.Error, `not a valid wing id: wing id "Bad Name" is not valid`) {
				t.Fatalf("errors at start: %+v", st.Daemon.Errors)
			}
			if len(st.Wings) != 4 {
				t.Fatalf("%d wings, want the 4 valid agents", len(st.Wings))
			}

			later := filepath.Join(agents, "Also Bad!")
			testutil.WriteFile(t, filepath.Join(later, "memory.md"), "- Never mined either.\n")
			testutil.WriteFile(t, filepath.Join(hive, "agents", "creed", "memory.md"), "- The quarry key is under the mat.\n")
			testutil.WaitFor(t, "the new directory under errors", func() bool {
				st, err := r.c.Status(context.Background())
				e, ok := errorAt(st, later)
				return err == nil && ok && strings.HasPrefix(e.Error, "not a valid wing id: ")
			})
			testutil.WaitFor(t, "wing creed", func() bool { return r.searchFinds(t, "quarry key", "creed", "quarry") })
			st = r.idle(t, tt.scans)
			for _, dir := range []string{"Bad Name", "Also Bad!"} {
				if n := logs.count("level=WARN", "not a valid wing id", dir); n != 1 {
					t.Errorf("%d warnings for %s in %d scans; want 1", n, dir, st.Daemon.Scans)
				}
			}

			if err := os.RemoveAll(later); err != nil {
				t.Fatal(err)
			}
			testutil.WaitFor(t, "the removed directory to leave errors", func() bool {
				st, err := r.c.Status(context.Background())
				_, ok := errorAt(st, later)
				return err == nil && !ok && len(st.Daemon.Errors) == 1
			})
		})
	}
}

// TestHiveWithoutAgents: a hive with no agents/ directory yet starts, says
// so in the log and in status, and mines agents once they appear.
func TestHiveWithoutAgents(t *testing.T) {
	tmp := t.TempDir()
	hive := filepath.Join(tmp, "hive")
	testutil.WriteFile(t, filepath.Join(hive, "README.md"), "# The team's hive\n")
	logs := &logBuffer{t: t}
	r := start(t, Options{Palace: filepath.Join(tmp, "palace"), Hive: hive, Logger: logs.logger()})
	st := r.idle(t, 1)
	if e, ok := errorAt(st, hive); !ok || !strings.HasPrefix(e.Error, "no agents/ directory") || len(st.Daemon.Errors) != 1 {
		t.Fatalf("errors: %+v", st.Daemon.Errors)
	}
	if n := logs.count("level=WARN", "no agents/ directory"); n != 1 {
		t.Fatalf("%d warnings about the missing agents/ directory; want 1", n)
	}
	testutil.WriteFile(t, filepath.Join(hive, "agents", "creed", "memory.md"), "- The quarry key is under the mat.\n")
	testutil.WaitFor(t, "wing creed", func() bool { return r.searchFinds(t, "quarry key", "creed", "quarry") })
	testutil.WaitFor(t, "the warning to clear", func() bool {
		st, err := r.c.Status(context.Background())
		return err == nil && len(st.Daemon.Errors) == 0
	})
}
