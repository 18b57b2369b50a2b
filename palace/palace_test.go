package palace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace/internal/manifest"
)

func TestLexTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Build the web bundle", []string{"build", "web", "bundl"}},
		{"electron-vite builds", []string{"electron-vite", "electron", "vite", "build"}},
		{"db-2 is primary", []string{"db-2", "db", "2", "primari"}},
		{"ERR_NO_SPACE.", []string{"err_no_space", "err", "space"}},
		{"the agent's notes", []string{"agent", "note"}},
		{"v1.2.3", []string{"v1.2.3", "v1", "2", "3"}},
		{"東京 Café", []string{"東", "京", "café"}},
		{"--- ... ???", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := lexTerms(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("lexTerms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLexIndexRanksAndForgets(t *testing.T) {
	x := newLexIndex()
	x.add("a", "Production Postgres runs on db-2; db-1 is a replica")
	x.add("b", "The web bundle is built with electron-vite")
	x.add("c", "Postgres backups run nightly")
	got := x.search("db-2 postgres", 10)
	if len(got) != 2 || got[0].id != "a" || got[1].id != "c" {
		t.Fatalf("search = %+v, want a then c", got)
	}
	x.remove("a", "Production Postgres runs on db-2; db-1 is a replica")
	if got := x.search("db-2", 10); len(got) != 0 {
		t.Fatalf("after remove, search = %+v", got)
	}
	if x.totalLen != int(x.docs[x.byID["b"]].length+x.docs[x.byID["c"]].length) {
		t.Fatalf("totalLen %d out of step with docs", x.totalLen)
	}
	// Re-adding an id replaces it rather than double counting.
	x.add("b", "electron-vite")
	x.add("b", "electron-vite")
	if df := x.df[x.termIDs["electron-vite"]]; df != 1 {
		t.Fatalf("df after re-add: %d", df)
	}
	if got := x.search("vite", 10); len(got) != 1 || got[0].id != "b" {
		t.Fatalf("search after re-add = %+v", got)
	}
}

func TestLexIndexCompacts(t *testing.T) {
	x := newLexIndex()
	for i := range 200 {
		x.add(fmt.Sprint("n", i), fmt.Sprintf("note %d about topic%d", i, i%7))
	}
	for i := range 190 {
		x.remove(fmt.Sprint("n", i), fmt.Sprintf("note %d about topic%d", i, i%7))
	}
	if len(x.docs) >= 200 || x.live != 10 {
		t.Fatalf("not compacted: %d docs, %d live", len(x.docs), x.live)
	}
	got := x.search("topic3", 10)
	want := []string{"n192", "n199"}
	if len(got) != len(want) {
		t.Fatalf("after compaction search = %+v", got)
	}
	for i := range want {
		if got[i].id != want[i] {
			t.Fatalf("after compaction search = %+v, want %v", got, want)
		}
	}
}

func note(id, heading, text string, line int) Note {
	return Note{ID: id, Heading: heading, Text: text, Line: line, Agent: "a"}
}

func openT(t *testing.T, dir string, e embed.Embedder, readOnly bool) *Palace {
	t.Helper()
	p, err := Open(context.Background(), dir, Options{Embedder: e, ReadOnly: readOnly})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestApplyFlushReopen(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	emb := &embedtest.Hashing{}
	p := openT(t, dir, emb, false)
	src := Source{Path: "/hive/agents/dwight/memory.md", Agent: "dwight", Hash: "h1", Size: 10, Mtime: time.Unix(100, 0).UTC()}
	notes := []Note{note("n1", "Infra", "Postgres runs on db-2", 3), note("n2", "Build", "web bundle via electron-vite", 7)}
	ch, err := p.ApplySource(ctx, "dwight", src, notes)
	if err != nil {
		t.Fatal(err)
	}
	if ch != (Change{Added: 2, Embedded: 2}) || emb.Texts() != 2 {
		t.Fatalf("change %+v, embedded %d texts", ch, emb.Texts())
	}
	// Same notes again, one moved: nothing embedded, line updated.
	emb.Reset()
	notes[1].Line = 9
	ch, err = p.ApplySource(ctx, "dwight", src, notes)
	if err != nil {
		t.Fatal(err)
	}
	if ch != (Change{Unchanged: 2}) || emb.Calls() != 0 {
		t.Fatalf("change %+v, embed calls %d", ch, emb.Calls())
	}
	// Drop one, add one.
	ch, err = p.ApplySource(ctx, "dwight", src, []Note{notes[0], note("n3", "Infra", "pgbouncer in transaction mode", 4)})
	if err != nil {
		t.Fatal(err)
	}
	if ch != (Change{Added: 1, Removed: 1, Unchanged: 1, Embedded: 1}) {
		t.Fatalf("change %+v", ch)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()

	q := openT(t, dir, emb, true)
	if d := q.Damaged(); len(d) != 0 {
		t.Fatalf("damaged after clean reopen: %+v", d)
	}
	ws := q.Wings()
	if len(ws) != 1 || ws[0].ID != "dwight" || ws[0].Notes != 2 || ws[0].Sources != 1 || ws[0].Model != "test-hashing" {
		t.Fatalf("wings = %+v", ws)
	}
	hits, err := q.Search(ctx, "pgbouncer", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].ID != "n3" || hits[0].Source != src.Path || hits[0].Line != 4 || !hits[0].Mtime.Equal(src.Mtime) {
		t.Fatalf("hits = %+v", hits)
	}
	if v := q.Vector("dwight", "n1"); len(v) != 64 {
		t.Fatalf("vector after reopen has %d dims", len(v))
	}
	s, ok := q.Source("dwight", src.Path)
	if !ok || !slices.Equal(s.NoteIDs, []string{"n1", "n3"}) {
		t.Fatalf("source = %+v", s)
	}
}

func TestPermissions(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, nil, false)
	if _, err := p.ApplySource(context.Background(), "w", Source{Path: "/x.md"}, []Note{note("n", "", "text", 1)}); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	check := func(path string, want os.FileMode) {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", filepath.Base(path), got, want)
		}
	}
	check(dir, 0o700)
	check(filepath.Join(dir, manifestName), 0o600)
	check(filepath.Join(dir, wingsDir, "w"+wingExt), 0o600)
	check(filepath.Join(dir, lockName), 0o600)
}

func TestCorruptWingIsReported(t *testing.T) {
	ctx := context.Background()
	corruptions := map[string]func(path string) error{
		"truncated": func(path string) error {
			fi, err := os.Stat(path)
			if err != nil {
				return err
			}
			return os.Truncate(path, fi.Size()/2)
		},
		"flipped byte": func(path string) error {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			b[len(b)-3] ^= 0xff
			return os.WriteFile(path, b, 0o600)
		},
		"garbage": func(path string) error { return os.WriteFile(path, []byte("not a wing"), 0o600) },
		"empty":   func(path string) error { return os.WriteFile(path, nil, 0o600) },
		"missing": os.Remove,
	}
	for name, corrupt := range corruptions {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "palace")
			p := openT(t, dir, &embedtest.Hashing{}, false)
			p.AddRoot("dwight", "/hive/agents/dwight")
			p.AddRoot("pam", "/hive/agents/pam")
			for _, w := range []string{"dwight", "pam"} {
				if _, err := p.ApplySource(ctx, w, Source{Path: "/hive/agents/" + w + "/memory.md"}, []Note{note(w+"1", "", "fact about "+w, 1)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := p.Flush(); err != nil {
				t.Fatal(err)
			}
			p.Close()
			if err := corrupt(filepath.Join(dir, wingsDir, "dwight"+wingExt)); err != nil {
				t.Fatal(err)
			}

			q := openT(t, dir, &embedtest.Hashing{}, false)
			d := q.Damaged()
			if len(d) != 1 || d[0].Wing != "dwight" || !errors.Is(d[0].Err, ErrCorrupt) && name != "truncated" {
				t.Fatalf("damaged = %+v", d)
			}
			if !slices.Equal(d[0].Roots, []string{"/hive/agents/dwight"}) || !slices.Equal(d[0].Sources, []string{"/hive/agents/dwight/memory.md"}) {
				t.Fatalf("damage does not say where to rebuild from: %+v", d[0])
			}
			// The healthy wing is intact, and flushing never overwrites the damaged one.
			if hits, err := q.Search(ctx, "fact", SearchOptions{Wings: []string{"pam"}}); err != nil || len(hits) != 1 {
				t.Fatalf("pam search = %v, %v", hits, err)
			}
			if err := q.Flush(); err != nil {
				t.Fatal(err)
			}
			man, err := manifest.Read(filepath.Join(dir, manifestName))
			if err != nil || len(man.Wings["dwight"].Sources) != 1 {
				t.Fatalf("manifest lost the damaged wing's sources: %+v, %v", man.Wings["dwight"], err)
			}
		})
	}
}

func TestCorruptManifestIsRebuilt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, nil, false)
	if _, err := p.ApplySource(context.Background(), "w", Source{Path: "/x.md"}, []Note{note("n", "", "text", 1)}); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if err := os.WriteFile(filepath.Join(dir, manifestName), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	q := openT(t, dir, nil, false)
	if len(q.Damaged()) != 0 || len(q.Wings()) != 1 {
		t.Fatalf("wings %+v damaged %+v", q.Wings(), q.Damaged())
	}
	if err := q.Flush(); err != nil {
		t.Fatal(err)
	}
	if man, err := manifest.Read(filepath.Join(dir, manifestName)); err != nil || len(man.Wings) != 1 {
		t.Fatalf("manifest not rewritten: %+v %v", man, err)
	}
}

func TestSecondWriterIsRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "palace")
	// A lock file left longer than the pid written over it is cut.
	testutil.WriteFile(t, filepath.Join(dir, lockName), "123456789012345678901234567890\n")
	openT(t, dir, nil, false)
	_, err := Open(context.Background(), dir, Options{LockTimeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("(pid %d)", os.Getpid())) {
		t.Fatalf("second writer: %v", err)
	}
	// Readers never wait for the lock.
	if _, err := Open(context.Background(), dir, Options{ReadOnly: true}); err != nil {
		t.Fatalf("reader: %v", err)
	}
}

func TestSearchErrors(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, nil, false)
	if _, err := p.Search(ctx, "anything", SearchOptions{}); !errors.Is(err, ErrEmpty) {
		t.Fatalf("empty palace: %v", err)
	}
	if _, err := p.ApplySource(ctx, "pam", Source{Path: "/p.md"}, []Note{note("n", "", "text", 1)}); err != nil {
		t.Fatal(err)
	}
	_, err := p.Search(ctx, "text", SearchOptions{Wings: []string{"nope"}})
	if !errors.Is(err, ErrUnknownWing) || !strings.Contains(err.Error(), "pam") {
		t.Fatalf("unknown wing: %v", err)
	}
	if _, err := p.Search(ctx, "  ", SearchOptions{}); err == nil {
		t.Fatal("empty query accepted")
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	// The wing holds lexical notes; a palace with a model must not mix them.
	q := openT(t, dir, &embedtest.Hashing{}, true)
	_, err = q.Search(ctx, "text", SearchOptions{})
	var mm *ModelMismatchError
	if !errors.Is(err, ErrModelMismatch) || !errors.As(err, &mm) || len(mm.Wings) != 1 || mm.Wings[0].ID != "pam" || mm.Wings[0].Model != "lexical" ||
		err.Error() != "wing pam (lexical) was embedded with another model than test-hashing" {
		t.Fatalf("model mismatch: %v", err)
	}
	// Re-embedding makes the wing searchable with vectors.
	if n, err := q.Reembed(ctx, "pam"); err != nil || n != 1 {
		t.Fatalf("reembed: %d %v", n, err)
	}
	if hits, err := q.Search(ctx, "text", SearchOptions{}); err != nil || len(hits) != 1 {
		t.Fatalf("after reembed: %v %v", hits, err)
	}
}

func TestHybridFindsByVectorAndWord(t *testing.T) {
	ctx := context.Background()
	p := openT(t, filepath.Join(t.TempDir(), "palace"), &embedtest.Hashing{}, false)
	notes := []Note{
		note("a", "", "alpha beta gamma", 1),
		note("b", "", "delta epsilon", 2),
		note("c", "", "zeta eta theta", 3),
	}
	if _, err := p.ApplySource(ctx, "w", Source{Path: "/w.md"}, notes); err != nil {
		t.Fatal(err)
	}
	hits, err := p.Search(ctx, "epsilon", SearchOptions{Results: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 || hits[0].ID != "b" || hits[0].Score != 1 {
		t.Fatalf("hits = %+v", hits)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Fatalf("hits not sorted: %+v", hits)
		}
	}
}

// TestConcurrentApplyAndSearch is meant for -race: searches run while a
// writer changes and flushes the wing.
func TestConcurrentApplyAndSearch(t *testing.T) {
	ctx := context.Background()
	p := openT(t, filepath.Join(t.TempDir(), "palace"), &embedtest.Hashing{}, false)
	if _, err := p.ApplySource(ctx, "w", Source{Path: "/w.md"}, []Note{note("seed", "", "seed note", 1)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := p.Search(ctx, "note", SearchOptions{}); err != nil {
					t.Error(err)
					return
				}
				_ = p.Wings()
			}
		}()
	}
	for i := range 50 {
		ns := []Note{note("seed", "", "seed note", 1), note(fmt.Sprint("n", i), "", fmt.Sprint("note number ", i), 2)}
		if _, err := p.ApplySource(ctx, "w", Source{Path: "/w.md"}, ns); err != nil {
			t.Fatal(err)
		}
		if i%10 == 0 {
			if err := p.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(done)
	wg.Wait()
	if ws := p.Wings(); ws[0].Notes != 2 {
		t.Fatalf("notes = %d, want 2", ws[0].Notes)
	}
}

func TestNormalizeWingID(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"dwight", "dwight", true},
		{"Dwight", "dwight", true},
		{"agent-1.b_c", "agent-1.b_c", true},
		{"../x", "", false},
		{"a/b", "", false},
		{"", "", false},
		{".hidden", "", false},
		{"a..b", "", false},
		{"-x", "", false},
		{strings.Repeat("a", 65), "", false},
	}
	for _, tt := range tests {
		got, err := NormalizeWingID(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("NormalizeWingID(%q) = %q, %v", tt.in, got, err)
		}
	}
}

func TestLexIndexCompactionDropsDeadTerms(t *testing.T) {
	x := newLexIndex()
	for i := range 300 {
		x.add(fmt.Sprint("n", i), fmt.Sprintf("word%d shared", i))
	}
	for i := range 299 {
		x.remove(fmt.Sprint("n", i), fmt.Sprintf("word%d shared", i))
	}
	// Tombstones wait for the next compaction (at most 64 of them here); their
	// terms go with it, so 300 distinct words do not stay for one live note.
	if len(x.termIDs) > 70 || len(x.lists) != len(x.df) {
		t.Fatalf("dead terms kept: %d term ids, %d postings, %d df", len(x.termIDs), len(x.lists), len(x.df))
	}
	if got := x.search("word299 shared", 5); len(got) != 1 || got[0].id != "n299" {
		t.Fatalf("search after compaction = %+v", got)
	}
	x.add("again", "word5 shared")
	if got := x.search("word5", 5); len(got) != 1 || got[0].id != "again" {
		t.Fatalf("re-added term = %+v", got)
	}
}

// TestFailedApplyChangesNothing: an embedder that changes its vector size
// is refused before the wing is touched, so nothing is half-applied.
func TestFailedApplyChangesNothing(t *testing.T) {
	ctx := context.Background()
	emb := &embedtest.Hashing{Dim: 64}
	p := openT(t, filepath.Join(t.TempDir(), "palace"), emb, false)
	if _, err := p.ApplySource(ctx, "w", Source{Path: "/a.md"}, []Note{note("a", "", "alpha note", 1)}); err != nil {
		t.Fatal(err)
	}
	emb.Dim = 32
	_, err := p.ApplySource(ctx, "w", Source{Path: "/b.md"}, []Note{note("b", "", "beta note", 1)})
	if err == nil || !strings.Contains(err.Error(), "dimensions") {
		t.Fatalf("dimension change accepted: %v", err)
	}
	if ws := p.Wings(); ws[0].Notes != 1 || ws[0].Sources != 1 {
		t.Fatalf("failed apply changed the wing: %+v", ws)
	}
	emb.Dim = 64
	hits, err := p.Search(ctx, "beta alpha note", SearchOptions{})
	if err != nil || len(hits) != 1 || hits[0].ID != "a" {
		t.Fatalf("search after failed apply: %+v %v", hits, err)
	}
}

// TestLateLockKeepsNewerManifestEntries: a reader that locks later to save
// a repair must not drop from the manifest a wing another writer added
// after the reader loaded the palace.
func TestLateLockKeepsNewerManifestEntries(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	w := openT(t, dir, nil, false)
	if _, err := w.ApplySource(ctx, "pam", Source{Path: "/p.md"}, []Note{note("p", "", "pam note", 1)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	w.Close()

	reader := openT(t, dir, nil, true)
	// Another writer adds wing jim meanwhile.
	w2 := openT(t, dir, nil, false)
	if _, err := w2.ApplySource(ctx, "jim", Source{Path: "/j.md"}, []Note{note("j", "", "jim note", 1)}); err != nil {
		t.Fatal(err)
	}
	if err := w2.Flush(); err != nil {
		t.Fatal(err)
	}
	w2.Close()

	if err := reader.Lock(ctx, 0); err != nil {
		t.Fatal(err)
	}
	reader.manifestDirty = true
	if err := reader.Flush(); err != nil {
		t.Fatal(err)
	}
	man, err := manifest.Read(filepath.Join(dir, manifestName))
	if err != nil || len(man.Wings["jim"].Sources) != 1 || len(man.Wings["pam"].Sources) != 1 {
		t.Fatalf("manifest after late flush: %+v %v", man.Wings, err)
	}
}

// The wing's chromem-go collection is its vector store: search and Flush
// read what it holds, and Open loads the wing file into it.
func TestVectorsLiveInTheCollection(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	emb := &embedtest.Hashing{}
	p := openT(t, dir, emb, false)
	notes := []Note{note("a", "", "alpha apples", 1), note("b", "", "bravo bananas", 3)}
	if _, err := p.ApplySource(ctx, "w", Source{Path: "/w.md"}, notes); err != nil {
		t.Fatal(err)
	}
	if n := p.wings["w"].vecs.coll.Count(); n != 2 {
		t.Fatalf("collection holds %d vectors, want 2", n)
	}
	// Give note b the vector of a text about cherries, in the collection only.
	vs, err := emb.Embed(ctx, []string{"cherries"})
	if err != nil || !normalize(vs[0]) {
		t.Fatal(err)
	}
	p.mu.Lock()
	if err := p.wings["w"].vecs.add(ctx, p.db, "w", "b", vs[0]); err != nil {
		t.Fatal(err)
	}
	p.wings["w"].invalidate()
	p.thaw("w")
	p.wings["w"].dirty = true
	p.mu.Unlock()
	hits, err := p.Search(ctx, "cherries", SearchOptions{Mode: VectorOnly, Results: 1})
	if err != nil || len(hits) != 1 || hits[0].ID != "b" {
		t.Fatalf("vector search = %v, %v; want b, whose vector in the collection is about cherries", hits, err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	q := openT(t, dir, emb, true)
	if got := q.Vector("w", "b"); !slices.Equal(got, vs[0]) {
		t.Fatalf("vector of b after reopen = %v, want the collection's %v", got, vs[0])
	}
	if n := q.wings["w"].vecs.coll.Count(); n != 2 {
		t.Fatalf("reopened collection holds %d vectors, want 2", n)
	}
}

// A wing file whose vectors cannot be loaded leaves no collection behind
// for the empty wing that replaces it.
func TestFailedLoadLeavesNoVectors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "palace")
	if err := os.MkdirAll(filepath.Join(dir, wingsDir), 0o700); err != nil {
		t.Fatal(err)
	}
	// Two notes with zero-length vectors: the file checks out, chromem-go refuses them.
	a, b := note("a", "", "alpha", 1), note("b", "", "bravo", 2)
	m := &wingMeta{ID: "w", Model: "test-hashing", Notes: storedNotes(&a, &b), VecIDs: []string{"a", "b"}}
	err := atomicfile.WriteFunc(filepath.Join(dir, wingsDir, "w"+wingExt), 0o600, func(f *os.File) error {
		return writeWing(f, m, [][]float32{{}, {}})
	})
	if err != nil {
		t.Fatal(err)
	}
	p := openT(t, dir, &embedtest.Hashing{}, true)
	if d := p.Damaged(); len(d) != 1 || d[0].Wing != "w" {
		t.Fatalf("damaged = %+v", d)
	}
	if c := p.db.GetCollection("w", nil); c != nil {
		t.Fatalf("a collection of %d vectors is left for the damaged wing", c.Count())
	}
}

// TestApplySourceReusesVectorsAndOwnership: a new id whose text the wing
// holds takes its vector without the embedder, and a note taken over by
// another source is not removed with the source it left.
func TestApplySourceReusesVectorsAndOwnership(t *testing.T) {
	ctx := context.Background()
	emb := &embedtest.Hashing{}
	p := openT(t, filepath.Join(t.TempDir(), "palace"), emb, false)
	old := Source{Path: "/old/agents/dwight/memory.md", Hash: "h"}
	if _, err := p.ApplySource(ctx, "dwight", old, []Note{note("a1", "Infra", "Postgres runs on db-2", 1)}); err != nil {
		t.Fatal(err)
	}
	want := p.Vector("dwight", "a1")
	emb.Reset()
	// Same text under a new id (an id of an older format): no embedding.
	ch, err := p.ApplySource(ctx, "dwight", old, []Note{note("b1", "Infra", "Postgres runs on db-2", 1)})
	if err != nil {
		t.Fatal(err)
	}
	if ch != (Change{Added: 1, Removed: 1, Embedded: 0}) || emb.Calls() != 0 || !slices.Equal(p.Vector("dwight", "b1"), want) {
		t.Fatalf("change %+v, embed calls %d", ch, emb.Calls())
	}
	// The same id from a new path (a moved hive), then the old path gone.
	moved := Source{Path: "/new/agents/dwight/memory.md", Hash: "h"}
	if ch, err := p.ApplySource(ctx, "dwight", moved, []Note{note("b1", "Infra", "Postgres runs on db-2", 1)}); err != nil || ch != (Change{Unchanged: 1}) {
		t.Fatalf("change %+v, %v", ch, err)
	}
	if n, err := p.RemoveSource("dwight", old.Path); err != nil || n != 0 {
		t.Fatalf("removing the old path removed %d notes, %v", n, err)
	}
	ns := p.Notes("dwight")
	if len(ns) != 1 || ns[0].Source != moved.Path || emb.Calls() != 0 {
		t.Fatalf("notes %+v, embed calls %d", ns, emb.Calls())
	}
	// Two live sources listing one id: it stays while either does.
	twin := Source{Path: "/other/agents/dwight/memory.md", Hash: "h"}
	if _, err := p.ApplySource(ctx, "dwight", twin, []Note{note("b1", "Infra", "Postgres runs on db-2", 1)}); err != nil {
		t.Fatal(err)
	}
	if n, _ := p.RemoveSource("dwight", twin.Path); n != 0 || len(p.Notes("dwight")) != 1 || p.Notes("dwight")[0].Source != moved.Path {
		t.Fatalf("removed %d, notes %+v", n, p.Notes("dwight"))
	}
	if n, _ := p.RemoveSource("dwight", moved.Path); n != 1 || len(p.Notes("dwight")) != 0 {
		t.Fatalf("removed %d, notes %+v", n, p.Notes("dwight"))
	}
}

func TestVersionsKeepEarlierContents(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := openT(t, dir, nil, false)
	apply := func(hash string, notes ...Note) {
		t.Helper()
		if _, err := p.ApplySource(ctx, "w", Source{Path: "/m.md", Hash: hash, Frontmatter: map[string]string{"v": hash}}, notes); err != nil {
			t.Fatal(err)
		}
	}
	apply("h1", note("a", "S", "alpha", 3))
	apply("h1", note("a", "S", "alpha", 3)) // same content: no new version
	apply("h2", note("a", "S", "alpha", 3), note("b", "S", "beta", 4))
	for i := 3; i <= 2+MaxEarlierVersions+1; i++ {
		apply(fmt.Sprintf("h%d", i), note(fmt.Sprintf("n%d", i), "", fmt.Sprintf("text %d", i), 1))
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	p = openT(t, dir, nil, true)
	vs := p.Versions("w", "/m.md")
	if len(vs) != 1+MaxEarlierVersions {
		t.Fatalf("%d versions, want %d", len(vs), 1+MaxEarlierVersions)
	}
	last := 2 + MaxEarlierVersions + 1
	for i, v := range vs {
		want := fmt.Sprintf("h%d", last-i)
		if v.Hash != want || v.Frontmatter["v"] != want {
			t.Errorf("version %d is %s (frontmatter %v), want %s", i, v.Hash, v.Frontmatter, want)
		}
	}
	if n := vs[0].Notes; len(n) != 1 || n[0].Text != fmt.Sprintf("text %d", last) {
		t.Errorf("latest notes %+v", n)
	}
	if p.Versions("w", "/other.md") != nil || p.Versions("nope", "/m.md") != nil {
		t.Error("versions of an unknown file")
	}
}

func TestVersionsHoldTheNotesOfEachContent(t *testing.T) {
	p := openT(t, t.TempDir(), nil, false)
	ctx := context.Background()
	if _, err := p.ApplySource(ctx, "w", Source{Path: "/m.md", Hash: "h1"}, []Note{note("a", "S", "alpha", 3), note("b", "S", "beta", 4)}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ApplySource(ctx, "w", Source{Path: "/m.md", Hash: "h2"}, []Note{note("a", "S", "alpha", 5)}); err != nil {
		t.Fatal(err)
	}
	vs := p.Versions("w", "/m.md")
	if len(vs) != 2 {
		t.Fatalf("%d versions", len(vs))
	}
	got := fmt.Sprint(vs[1].Notes)
	if want := fmt.Sprint([]VersionNote{{"S", "alpha", 3}, {"S", "beta", 4}}); got != want {
		t.Errorf("earlier notes %s, want %s", got, want)
	}
	if got := fmt.Sprint(vs[0].Notes); got != fmt.Sprint([]VersionNote{{"S", "alpha", 5}}) {
		t.Errorf("latest notes %s", got)
	}
}

// A palace whose files were classified by an older govern.Version (or by
// none) is classified again when it is read, so search and wake-up leave
// its superseded notes out before the next mine upgrades it.
func TestOlderGovernanceIsReclassifiedOnLoad(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, nil, false)
	sources := []struct {
		src   Source
		notes []Note
	}{
		{Source{Path: "/h/a/old.md", Mtime: time.Unix(100, 0).UTC()}, // mined before governance
			[]Note{note("inline", "", "The port is 7001 (superseded)", 1), note("plain", "", "The port is 7002", 2)}},
		{Source{Path: "/h/a/fm.md", Governed: govern.Version - 1, Frontmatter: map[string]string{
			"status": "superseded", "review_date": "2026-10-01T00:00:00Z"}},
			[]Note{note("frontmatter", "", "The port is 7003", 1)}},
		{Source{Path: "/h/a/new.md", Governed: govern.Version}, // current: kept as stored
			[]Note{note("current", "", "The port is 7004 (superseded)", 1)}},
	}
	for _, s := range sources {
		if _, err := p.ApplySource(ctx, "a", s.src, s.notes); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()

	q := openT(t, dir, nil, true)
	got := map[string]govern.Note{}
	for _, n := range q.Notes("a") {
		got[n.ID] = n.Governance
	}
	want := map[string]govern.Status{"inline": govern.Superseded, "plain": govern.None, "frontmatter": govern.Superseded, "current": govern.None}
	for id, st := range want {
		if got[id].Status != st {
			t.Errorf("note %s: status %q, want %q", id, got[id].Status, st)
		}
	}
	if r := got["frontmatter"].Review; !r.Equal(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("review date from stored frontmatter = %v", r)
	}
	hits, err := q.Search(ctx, "port", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.ID == "inline" || h.ID == "frontmatter" {
			t.Errorf("superseded note %s of an older palace found by search", h.ID)
		}
	}
}
