package mine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/markdown"
	"github.com/memminer/memminer/palace"
)

// TestMovedHiveLeavesNoDuplicates: after the hive moves, mining it at its
// new place keeps its notes (same ids) under the new paths and forgets the
// old place, whose root is gone.
func TestMovedHiveLeavesNoDuplicates(t *testing.T) {
	tmp := t.TempDir()
	writeFile(t, tmp, "old/agents/a/memory.md", dwightMemory)
	p := openPalace(t, filepath.Join(tmp, "palace"), nil)
	mineT(t, p, filepath.Join(tmp, "old/agents/a"), Options{})
	if err := os.Rename(filepath.Join(tmp, "old"), filepath.Join(tmp, "new")); err != nil {
		t.Fatal(err)
	}
	s := mineT(t, p, filepath.Join(tmp, "new/agents/a"), Options{})
	w := p.Wings()[0]
	if s.NotesRemoved != 0 || s.NotesUnchanged != 4 || w.Notes != 4 || w.Sources != 1 || len(w.Roots) != 1 || w.Roots[0] != filepath.Join(tmp, "new/agents/a") {
		t.Fatalf("after the move: %+v, wing %+v", s, w)
	}
}

// TestMovedHiveKeepsVectors: a hive moved with mv (mtimes kept) is mined
// at its new place without a single embedding, every note keeps its id and
// vector, and only paths change.
func TestMovedHiveKeepsVectors(t *testing.T) {
	tmp := t.TempDir()
	writeFile(t, tmp, "old/hive/agents/dwight/memory.md", dwightMemory)
	writeFile(t, tmp, "old/hive/agents/pam/notes/sales.md", "# Sales\n- Q3 target is 40k.\n- Q3 target is 40k.\n")
	emb := &embedtest.Hashing{}
	p := openPalace(t, filepath.Join(tmp, "palace"), emb)
	mineT(t, p, filepath.Join(tmp, "old/hive"), Options{})
	before := map[string][]palace.Note{"dwight": p.Notes("dwight"), "pam": p.Notes("pam")}
	if emb.Texts() != 6 {
		t.Fatalf("first mine embedded %d texts, want 6", emb.Texts())
	}
	if err := os.Rename(filepath.Join(tmp, "old/hive"), filepath.Join(tmp, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	emb.Reset()
	s := mineT(t, p, filepath.Join(tmp, "elsewhere"), Options{})
	if emb.Calls() != 0 || s.NotesAdded != 0 || s.NotesRemoved != 0 || s.NotesUnchanged != 6 || s.FilesRemoved != 2 {
		t.Fatalf("after mv: %d embed calls, summary %+v", emb.Calls(), s)
	}
	for wing, was := range before {
		now := p.Notes(wing)
		if len(now) != len(was) {
			t.Fatalf("wing %s: %d notes, had %d", wing, len(now), len(was))
		}
		for i := range now {
			if now[i].ID != was[i].ID || now[i].Text != was[i].Text || !strings.HasPrefix(now[i].Source, filepath.Join(tmp, "elsewhere")) {
				t.Fatalf("wing %s note %d: %+v, was %+v", wing, i, now[i], was[i])
			}
			if v := p.Vector(wing, now[i].ID); v == nil {
				t.Fatalf("wing %s note %s lost its vector", wing, now[i].ID)
			}
		}
	}
	if len(p.Sources("dwight")) != 1 || len(p.Sources("pam")) != 1 {
		t.Fatalf("sources %+v %+v", p.Sources("dwight"), p.Sources("pam"))
	}
}

// TestMovedHiveKeepsVersions: the contents a file was mined with before
// (merge bases) follow it when the hive moves.
func TestMovedHiveKeepsVersions(t *testing.T) {
	tmp := t.TempDir()
	path := writeFile(t, tmp, "old/agents/dwight/memory.md", "- one\n")
	p := openPalace(t, filepath.Join(tmp, "palace"), nil)
	mineT(t, p, filepath.Join(tmp, "old"), Options{})
	writeFile(t, tmp, "old/agents/dwight/memory.md", "- one\n- two\n")
	bump(t, path)
	mineT(t, p, filepath.Join(tmp, "old"), Options{})
	src, _ := filepath.EvalSymlinks(path)
	before := p.Versions("dwight", src)
	if len(before) != 2 {
		t.Fatalf("%d versions before the move", len(before))
	}
	if err := os.Rename(filepath.Join(tmp, "old"), filepath.Join(tmp, "new")); err != nil {
		t.Fatal(err)
	}
	mineT(t, p, filepath.Join(tmp, "new"), Options{})
	moved, _ := filepath.EvalSymlinks(filepath.Join(tmp, "new/agents/dwight/memory.md"))
	after := p.Versions("dwight", moved)
	if len(after) != 2 || after[0].Hash != before[0].Hash || after[1].Hash != before[1].Hash || len(after[1].Notes) != 1 || after[1].Notes[0].Text != "one" {
		t.Fatalf("versions after the move: %+v, before %+v", after, before)
	}
}

// TestNoteIDsSameAtAnyPath: one hive at two absolute paths (two machines)
// gives the same ids; mining part of an agent directory of the configured
// hive gives the ids a mine of all of it does.
func TestNoteIDsSameAtAnyPath(t *testing.T) {
	ids := func(hive string, mined string, opts Options) []string {
		p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
		mineT(t, p, mined, opts)
		var out []string
		for _, n := range p.Notes("pam") {
			out = append(out, n.ID)
		}
		return out
	}
	a, b := filepath.Join(t.TempDir(), "srv/hive"), filepath.Join(t.TempDir(), "home/ops/hive")
	for _, h := range []string{a, b} {
		writeFile(t, h, "agents/pam/notes/sales.md", "# Sales\n- Q3 target is 40k.\n")
	}
	ia, ib := ids(a, a, Options{}), ids(b, b, Options{})
	if len(ia) != 1 || !slices.Equal(ia, ib) {
		t.Fatalf("ids at two paths: %v vs %v", ia, ib)
	}
	part := ids(b, filepath.Join(b, "agents/pam/notes"), Options{Wing: "pam", Hive: b})
	if !slices.Equal(part, ia) {
		t.Fatalf("mining a part of the agent directory: %v, want %v", part, ia)
	}
}

// TestOldPalaceMigratedInPlace: a palace whose ids named files by their
// absolute path (note format 0) is mined again by the next mine, once,
// keeping every vector of an unchanged text, and says so; also when the
// hive moved meanwhile.
func TestOldPalaceMigratedInPlace(t *testing.T) {
	for _, moved := range []bool{false, true} {
		t.Run(fmt.Sprintf("moved=%t", moved), func(t *testing.T) {
			tmp := t.TempDir()
			hive := filepath.Join(tmp, "hive")
			path := writeFile(t, hive, "agents/dwight/memory.md", dwightMemory)
			dir := filepath.Join(tmp, "palace")
			emb := &embedtest.Hashing{}
			p := openPalace(t, dir, emb)
			// What the previous version wrote: ids from the absolute path, no format.
			doc, err := markdown.Parse([]byte(dwightMemory), markdown.MemoryOptions())
			if err != nil {
				t.Fatal(err)
			}
			root, _ := filepath.EvalSymlinks(filepath.Join(hive, "agents/dwight"))
			src, _ := filepath.EvalSymlinks(path)
			var old []palace.Note
			for _, n := range doc.Notes {
				h := sha256.Sum256([]byte("dwight\x00" + src + "\x00" + n.Heading + "\x00" + n.Text + "\x000"))
				old = append(old, palace.Note{ID: hex.EncodeToString(h[:16]), Agent: "dwight", Line: n.Line, Heading: n.Heading, Text: n.Text})
			}
			info, _ := os.Stat(src)
			p.AddRoot("dwight", root)
			if _, err := p.ApplySource(context.Background(), "dwight", palace.Source{Path: src, Agent: "dwight", Mtime: info.ModTime().UTC(), Size: info.Size(), Hash: sha256Hex(t, src), Mined: time.Now().UTC()}, old); err != nil {
				t.Fatal(err)
			}
			if err := p.Flush(); err != nil {
				t.Fatal(err)
			}
			p.Close()
			if moved {
				hive = filepath.Join(tmp, "moved")
				if err := os.Rename(filepath.Join(tmp, "hive"), hive); err != nil {
					t.Fatal(err)
				}
				src, _ = filepath.EvalSymlinks(filepath.Join(hive, "agents/dwight/memory.md"))
			}

			q := openPalace(t, dir, emb)
			emb.Reset()
			s := mineT(t, q, filepath.Join(hive, "agents/dwight"), Options{})
			if emb.Calls() != 0 || len(s.Migrated) != 1 || s.Migrated[0] != (Migration{Wing: "dwight", Format: NoteFormat, Files: 1, Notes: 4}) {
				t.Fatalf("migration: %d embed calls, summary %+v", emb.Calls(), s)
			}
			for _, n := range q.Notes("dwight") {
				if n.ID == old[0].ID || q.Vector("dwight", n.ID) == nil || n.Source != src {
					t.Fatalf("note not migrated, or without its vector: %+v", n)
				}
			}
			if got, _ := q.Source("dwight", src); got.NoteFormat != NoteFormat || len(q.Notes("dwight")) != 4 || len(q.Sources("dwight")) != 1 {
				t.Fatalf("format %d, %d notes, sources %+v", got.NoteFormat, len(q.Notes("dwight")), q.Sources("dwight"))
			}
			// Said once: the next mine has nothing to migrate.
			if s := mineT(t, q, filepath.Join(hive, "agents/dwight"), Options{}); len(s.Migrated) != 0 || s.FilesChanged != 0 {
				t.Fatalf("second mine: %+v", s)
			}
		})
	}
}

func sha256Hex(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// TestOlderPalaceIsUpgraded: a file classified by older governance rules
// (or none: a palace mined before notes had a status) is classified again
// by the next mine, though its content did not change; then it is left
// alone again.
func TestOlderPalaceIsUpgraded(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "agents/jim/memory.md", "# Memory\n\n- Old plan (superseded).\n- Current plan #roadmap\n")
	hour := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, hour, hour); err != nil {
		t.Fatal(err)
	}
	p := openPalace(t, filepath.Join(dir, "palace"), nil)
	mineT(t, p, filepath.Join(dir, "agents", "jim"), Options{})
	if s := mineT(t, p, filepath.Join(dir, "agents", "jim"), Options{}); s.FilesUnchanged != 1 {
		t.Fatalf("second mine: %+v, want the file unchanged", s)
	}
	// What an older version left: no governance, Governed 0.
	src, ok := p.Source("jim", path)
	if !ok || src.Governed != govern.Version {
		t.Fatalf("source %+v, want Governed %d", src, govern.Version)
	}
	src.Governed = 0
	notes := p.Notes("jim")
	for i := range notes {
		notes[i].Governance = govern.Note{}
	}
	if _, err := p.ApplySource(context.Background(), "jim", src, notes); err != nil {
		t.Fatal(err)
	}
	if s := mineT(t, p, filepath.Join(dir, "agents", "jim"), Options{}); s.FilesChanged != 1 || s.NotesAdded != 0 {
		t.Fatalf("mine of an older palace: %+v, want the file classified again, nothing re-embedded", s)
	}
	got := map[string]govern.Note{}
	for _, n := range p.Notes("jim") {
		got[n.Text] = n.Governance
	}
	if g := got["Old plan (superseded)."]; g.Status != govern.Superseded {
		t.Errorf("superseded note not upgraded: %+v", g)
	}
	if g := got["Current plan #roadmap"]; !slices.Equal(g.Tags, []string{"roadmap"}) {
		t.Errorf("tagged note not upgraded: %+v", g)
	}
	if s := mineT(t, p, filepath.Join(dir, "agents", "jim"), Options{}); s.FilesUnchanged != 1 {
		t.Fatalf("mine after the upgrade: %+v, want the file unchanged", s)
	}
}
