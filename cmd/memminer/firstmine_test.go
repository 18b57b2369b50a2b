package main

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
)

// heldOllama is an Ollama server on 127.0.0.1 that embeds every text as a
// vector made from its words, and holds every /api/embed call with a text
// containing the word `hold` until release is closed: a mine of those
// notes takes as long as a test wants, while queries are answered.
type heldOllama struct {
	hold    string
	release chan struct{}
	once    sync.Once
	// reached, when set, is closed when the first call is held.
	reached     chan struct{}
	reachedOnce sync.Once
}

// free lets every held call, and all later ones, through.
func (h *heldOllama) free() { h.once.Do(func() { close(h.release) }) }

func (h *heldOllama) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	held := false
	for _, text := range req.Input {
		held = held || strings.Contains(text, h.hold)
	}
	if held {
		if h.reached != nil {
			h.reachedOnce.Do(func() { close(h.reached) })
		}
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
	}
	out := struct {
		Embeddings [][]float32 `json:"embeddings"`
	}{}
	for _, text := range req.Input {
		v := make([]float32, 16)
		for _, word := range strings.Fields(strings.ToLower(text)) {
			f := fnv.New32a()
			f.Write([]byte(word))
			v[f.Sum32()%16]++
		}
		v[0] += 0.5 // never all zero
		out.Embeddings = append(out.Embeddings, v)
	}
	_ = json.NewEncoder(w).Encode(out)
}

// heldRun starts a daemon on c's hive embedding through h.
func heldRun(t *testing.T, c *cli, h *heldOllama) {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Cleanup(h.free) // before the daemon stops: cleanups run last first
	c.env["OLLAMA_HOST"] = srv.URL
	c.env["MEMMINER_EMBEDDING_MODEL"] = "ollama:held"
	startRun(t, c, c.hive)
}

// TestFirstMineEmptyPalace checks what search and wake-up say while the
// daemon's first mine has not put any wing in yet.
func TestFirstMineEmptyPalace(t *testing.T) {
	tmp := t.TempDir()
	c := newCLIAt(t, tmp, filepath.Join(tmp, "hive"))
	testutil.WriteFile(t, filepath.Join(c.hive, "agents", "zoe", "memory.md"), "- The zebrafinch cage is cleaned on Fridays.\n")
	heldRun(t, c, &heldOllama{hold: "zebrafinch", release: make(chan struct{})})
	testutil.WaitFor(t, "the first scan to count the hive", func() bool {
		st, err := daemonclient.NewClient(c.palace).Status(context.Background())
		return err == nil && st.Daemon.FirstMine != nil && st.Daemon.FirstMine.FilesTotal == 1
	})
	for _, args := range [][]string{{"search", "cage"}, {"wake-up"}} {
		_, stderr, code := c.run(args...)
		if want := "memminer: the daemon serving $PALACE is mining the hive for the first time (in progress: 0 of 1 file); ask again in a moment\n"; code != exitError || stderr != want {
			t.Errorf("%s during the first mine: exit %d, stderr %q; want %q", args[0], code, stderr, want)
		}
	}
	if out, _, _ := c.run("search", "cage", "--json"); !strings.Contains(out, `"results": []`) {
		t.Errorf("search --json during the first mine: %s", out)
	}
}

// TestFirstMineShows checks what status and search say while the daemon's
// first mine of a hive is under way, and after it.
func TestFirstMineShows(t *testing.T) {
	c := newCLI(t)
	// Held, so the other four wings are in and this one is not.
	testutil.WriteFile(t, filepath.Join(c.hive, "agents", "zoe", "memory.md"), "- The zebrafinch cage is cleaned on Fridays.\n")
	h := &heldOllama{hold: "zebrafinch", release: make(chan struct{})}
	heldRun(t, c, h)

	var st api.Status
	testutil.WaitFor(t, "the first scan to count the hive", func() bool {
		var err error
		st, err = daemonclient.NewClient(c.palace).Status(context.Background())
		return err == nil && st.Daemon.FirstMine != nil && st.Daemon.FirstMine.FilesTotal > 0
	})
	testutil.WaitFor(t, "the four free wings to be mined", func() bool {
		var err error
		st, err = daemonclient.NewClient(c.palace).Status(context.Background())
		return err == nil && st.Daemon.FirstMine != nil && st.Daemon.FirstMine.FilesDone == 4
	})
	if p := st.Daemon.FirstMine; p.FilesTotal != 5 || p.ETASeconds == nil {
		t.Fatalf("first mine while held: %+v; want 4 of 5 files with an ETA", *p)
	}
	if out := c.ok("status"); !strings.Contains(out, "first mine:  in progress: 4 of 5 files, about ") {
		t.Fatalf("status during the first mine:\n%s", out)
	}
	out, stderr, code := c.run("search", "db-2")
	if code != 0 || !strings.Contains(out, "db-2") || !strings.HasPrefix(stderr, "memminer: note: the daemon's first mine is in progress: 4 of 5 files, about ") ||
		!strings.HasSuffix(stderr, " left: this answer comes from the wings mined so far, the rest is coming\n") {
		t.Fatalf("search during the first mine: exit %d\n%s%s", code, out, stderr)
	}

	h.free()
	testutil.WaitFor(t, "the first mine to end", func() bool {
		st, err := daemonclient.NewClient(c.palace).Status(context.Background())
		return err == nil && st.Daemon.Idle() && st.Daemon.FirstMine == nil
	})
	if out := c.ok("status"); strings.Contains(out, "first mine:") {
		t.Fatalf("status after the first mine still shows it:\n%s", out)
	}
	out, stderr, code = c.run("search", "db-2")
	if code != 0 || strings.Contains(stderr, "first mine") || !strings.Contains(out, "db-2") {
		t.Fatalf("search after the first mine: exit %d\n%s%s", code, out, stderr)
	}
}

// TestMineHandedToDaemonShowsProgress hands a mine to a daemon busy with
// its first mine: the command says what it waits for, then mines.
func TestMineHandedToDaemonShowsProgress(t *testing.T) {
	defer func(d time.Duration) { progressLineEvery = d }(progressLineEvery)
	progressLineEvery = time.Millisecond
	c := newCLI(t)
	testutil.WriteFile(t, filepath.Join(c.hive, "agents", "zoe", "memory.md"), "- The zebrafinch cage is cleaned on Fridays.\n")
	h := &heldOllama{hold: "zebrafinch", release: make(chan struct{})}
	heldRun(t, c, h)
	testutil.WaitFor(t, "the first mine to hold", func() bool {
		st, err := daemonclient.NewClient(c.palace).Status(context.Background())
		return err == nil && st.Daemon.FirstMine != nil && st.Daemon.FirstMine.FilesDone == 4
	})

	extra := filepath.Join(t.TempDir(), "notes.md")
	testutil.WriteFile(t, extra, "- The kettle descales monthly.\n")
	stderr := &syncBuffer{}
	var stdout bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run(context.Background(), []string{"mine", extra, "--wing", "kitchen"}, &stdout, stderr, func(k string) string { return c.env[k] })
	}()
	testutil.WaitFor(t, "the mine to say what it waits for", func() bool {
		return strings.Contains(stderr.String(), "memminer: waiting for the daemon's first mine 80% (4 of 5)\n")
	})
	h.free()
	if got := testutil.Receive(t, "the handed mine to end", code); got != 0 {
		t.Fatalf("mine handed to the daemon: exit %d\n%s", got, stderr)
	}
	if !strings.Contains(stdout.String(), "mined wing kitchen: files 1 seen, 1 changed") {
		t.Fatalf("mine handed to the daemon printed %q", stdout.String())
	}
}
