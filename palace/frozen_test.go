package palace

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace/internal/wingfile"
)

// frozenPalace writes a palace of two wings, with governance, neighbours,
// several files and removed notes (the index's tombstones), and returns
// its directory.
func frozenPalace(t *testing.T, e embed.Embedder) string {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, e, false)
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	mtime := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	for _, w := range []string{"alpha", "beta"} {
		for f, file := range []string{"memory.md", "notes/ops.md"} {
			path := "/hive/agents/" + w + "/" + file
			var notes []Note
			for i := range 40 {
				n := note(fmt.Sprintf("%s-%d-%d", w, f, i), fmt.Sprintf("Infra > Part %d", i/5),
					fmt.Sprintf("postgres-%d runs on db-%d with pgbouncer %s #ops", i%9, i%4, w), i+3)
				n.Agent = w
				switch i % 7 {
				case 0:
					n.Governance = govern.Note{Status: govern.Approved, Reason: "approved", Date: day, Tags: []string{"ops"}}
				case 3:
					n.Governance = govern.Note{Status: govern.Superseded, Reason: "superseded", Date: day.AddDate(0, -3, 0)}
				case 5:
					n.Governance = govern.Note{Review: day.AddDate(0, -1, 0), Tags: []string{"db", "ops"}}
				}
				notes = append(notes, n)
			}
			src := Source{Path: path, Agent: w, Mtime: mtime, Hash: "h1", Governed: govern.Version}
			if _, err := p.ApplySource(ctx, w, src, notes); err != nil {
				t.Fatal(err)
			}
			// Mined again with notes gone and changed: the index keeps
			// tombstones, which the file leaves out.
			src.Hash = "h2"
			kept := append([]Note{}, notes[5:30]...)
			kept[0].Text = "pgbouncer moved to the vault cluster"
			if _, err := p.ApplySource(ctx, w, src, kept); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	return dir
}

// A search of a palace opened read-only reads its wings frozen, from the
// index sections of their files, and finds what a search of the same
// wings whole (as a writer holds them) finds: every hit, score and field,
// with every mode and filter.
func TestFrozenSearchIsTheWholeWingsSearch(t *testing.T) {
	for _, e := range []embed.Embedder{nil, &embedtest.Hashing{Dim: 16}} {
		t.Run(fmt.Sprint(e != nil), func(t *testing.T) {
			dir := frozenPalace(t, e)
			frozen := openT(t, dir, e, true)
			for id, w := range frozen.wings {
				if w.fz == nil {
					t.Fatalf("wing %s was not opened frozen", id)
				}
			}
			whole := openT(t, dir, e, false)
			now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			modes := []Mode{LexicalOnly}
			if e != nil {
				modes = append(modes, Hybrid, VectorOnly)
			}
			for _, mode := range modes {
				for _, f := range []Filters{{}, {IncludeSuperseded: true}, {Status: govern.Approved}, {Fresh: true}, {Tags: []string{"db"}},
					{Since: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)}} {
					f.Now = now
					for _, q := range []string{"pgbouncer vault", "postgres-3 on db-1", "beta ops", "nothing matches this"} {
						opts := SearchOptions{Mode: mode, Filters: f, Results: 8}
						want, werr := whole.Search(context.Background(), q, opts)
						got, gerr := frozen.Search(context.Background(), q, opts)
						if fmt.Sprint(werr) != fmt.Sprint(gerr) {
							t.Fatalf("%v %+v %q: error %v, want %v", mode, f, q, gerr, werr)
						}
						if g, w := testutil.IndentJSON(t, got), testutil.IndentJSON(t, want); g != w {
							t.Fatalf("%v %+v %q: frozen search\n%s\nwant\n%s", mode, f, q, g, w)
						}
					}
				}
			}
			for id := range frozen.wings {
				if frozen.wings[id].fz == nil {
					t.Fatalf("a search thawed wing %s", id)
				}
			}
			// Anything else reads the wing whole, the same as a writer.
			for _, id := range []string{"alpha", "beta"} {
				if g, w := testutil.IndentJSON(t, frozen.Notes(id)), testutil.IndentJSON(t, whole.Notes(id)); g != w {
					t.Fatalf("notes of thawed %s\n%s\nwant\n%s", id, g, w)
				}
				if g, w := testutil.IndentJSON(t, frozen.Sources(id)), testutil.IndentJSON(t, whole.Sources(id)); g != w {
					t.Fatalf("sources of thawed %s\n%s\nwant\n%s", id, g, w)
				}
			}
		})
	}
}

// arrayAt returns the file offset of index array sec of the version 3
// wing file at path, read from its table of contents.
func arrayAt(t *testing.T, path string, sec int) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	toc := data[wingfile.HeaderLen+16*sec:]
	if binary.LittleEndian.Uint32(toc[8:]) == 0 {
		t.Fatalf("array %d is empty", sec)
	}
	return wingfile.HeaderLen + int64(binary.LittleEndian.Uint64(toc))
}

// flipByte flips a bit of the byte at at of the file at path, in place.
func flipByte(t *testing.T, path string, at int64) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[at] ^= 0x40
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	// Same size and modification time: the file's seal (wingfile.Seal) must
	// still tell it was changed.
	if err := os.Chtimes(path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// A flipped byte anywhere in a version 3 wing file is found by its
// checksums: in what every search reads at open, in a note's text when a
// hit reads it, in the meta part when the wing is thawed; and a writer,
// which reads the wing whole, finds every one at open.
func TestFrozenDamageIsDetected(t *testing.T) {
	for _, c := range []struct {
		name string
		at   func(t *testing.T, path string) int64
		// when a reader finds it: "open", "hit" or "thaw"
		when string
	}{
		{"postings", func(t *testing.T, path string) int64 { return arrayAt(t, path, wingfile.SecPost) }, "open"},
		{"term dictionary", func(t *testing.T, path string) int64 { return arrayAt(t, path, wingfile.SecTerms) + 3 }, "open"},
		{"table of contents", func(t *testing.T, path string) int64 { return wingfile.HeaderLen + 20 }, "open"},
		{"note text", func(t *testing.T, path string) int64 { return arrayAt(t, path, wingfile.SecStrs) + 5 }, "hit"},
		{"note lines", func(t *testing.T, path string) int64 { return arrayAt(t, path, wingfile.SecLine) }, "hit"},
		{"sources", func(t *testing.T, path string) int64 {
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			return info.Size() - 10
		}, "thaw"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := frozenPalace(t, nil)
			path := filepath.Join(dir, wingsDir, "alpha"+wingExt)
			flipByte(t, path, c.at(t, path))

			r := openT(t, dir, nil, true)
			damaged := func() bool { return len(r.Damaged()) == 1 && r.Damaged()[0].Wing == "alpha" }
			if got := damaged(); got != (c.when == "open") {
				t.Fatalf("damaged at open: %v (%+v)", got, r.Damaged())
			}
			_, err := r.Search(context.Background(), "pgbouncer postgres-1", SearchOptions{Wings: []string{"alpha"}, Mode: LexicalOnly, Results: 50})
			if c.when == "hit" && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("search of a damaged text: %v, want ErrCorrupt", err)
			}
			if c.when == "thaw" {
				if err != nil {
					t.Fatal(err)
				}
				r.Notes("alpha")
				if !damaged() {
					t.Fatalf("thawed damaged wing, damage %+v", r.Damaged())
				}
			}
			wr := openT(t, dir, nil, false)
			if d := wr.Damaged(); len(d) != 1 || d[0].Wing != "alpha" || !errors.Is(d[0].Err, ErrCorrupt) {
				t.Fatalf("writer's damage %+v", d)
			}
		})
	}
}

// A wing file of version 2 is read whole, and the next Flush of a writer
// rewrites it as version 5 even when nothing changed.
func TestOldWingFileRewrittenAtNextWrite(t *testing.T) {
	dir := frozenPalace(t, nil)
	path := filepath.Join(dir, wingsDir, "beta"+wingExt)
	m, vecs, err := readWing(path, maxWingFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeWing(f, m, vecs); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := testutil.IndentJSON(t, openT(t, dir, nil, true).Notes("beta"))

	p := openT(t, dir, nil, false)
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	data, err := os.ReadFile(path)
	if err != nil || string(data[:8]) != string(wingfile.Magic(5)) {
		t.Fatalf("wing written as %q, %v", data[:min(8, len(data))], err)
	}
	r := openT(t, dir, nil, true)
	if r.wings["beta"].fz == nil {
		t.Fatal("rewritten wing not opened frozen")
	}
	if got := testutil.IndentJSON(t, r.Notes("beta")); got != want {
		t.Fatalf("rewritten wing holds\n%s\nwant\n%s", got, want)
	}
}

// A flipped byte in a frozen wing's vectors is found when a search first
// compares them, not by a lexical search, which never reads them; a
// writer finds it at open.
func TestFrozenVectorDamageIsDetected(t *testing.T) {
	e := &embedtest.Hashing{Dim: 16}
	dir := frozenPalace(t, e)
	path := filepath.Join(dir, wingsDir, "alpha"+wingExt)
	flipByte(t, path, arrayAt(t, path, wingfile.SecVecs)+7)
	r := openT(t, dir, e, true)
	if d := r.Damaged(); len(d) != 0 {
		t.Fatalf("damaged at open: %+v", d)
	}
	opts := SearchOptions{Wings: []string{"alpha"}, Mode: LexicalOnly}
	if _, err := r.Search(context.Background(), "pgbouncer", opts); err != nil {
		t.Fatalf("lexical search: %v", err)
	}
	opts.Mode = Hybrid
	if _, err := r.Search(context.Background(), "pgbouncer", opts); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("hybrid search of damaged vectors: %v, want ErrCorrupt", err)
	}
	if d := openT(t, dir, e, false).Damaged(); len(d) != 1 || d[0].Wing != "alpha" {
		t.Fatalf("writer's damage %+v", d)
	}
}
