package mine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/markdown"
	"github.com/memminer/memminer/memory/markdown/markdowntest"
	"github.com/memminer/memminer/palace"
)

// reMineFile writes markdowntest.Memory(lines), with frontmatter and notes that
// have dates and tags, as an agent's memory file and mines it into a
// palace on disk, which it opens again as the next mine would.
func reMineFile(t *testing.T, lines int) (p *palace.Palace, path string, src []byte) {
	t.Helper()
	src = append(markdowntest.Memory(lines), "\n## Dated\n\n- Decision: Postgres moved to db-2 on 2026-11-30 #ops\n- review: 2027-01-15 rotate the keys #security\n"...)
	dir := t.TempDir()
	path = writeFile(t, dir, "agents/big/memory.md", string(src))
	pdir := filepath.Join(dir, "palace")
	first := openPalace(t, pdir, nil)
	mineT(t, first, path, Options{})
	first.Close()
	return openPalace(t, pdir, nil), path, src
}

// A re-mine finds every note unchanged but the one added, and keeps it
// as it was, from a palace read from disk as from one in memory, and the
// wing ends with the notes a mine of the file into a new palace gives.
// (That it keeps the wing's own note rather than a copy is the palace's
// TestNoteSetKeepsHeldNotes.)
func TestReMineKeepsUnchangedNotes(t *testing.T) {
	p, path, _ := reMineFile(t, 2000)
	held := map[string]palace.Note{}
	for _, n := range p.Notes("big") {
		held[n.ID] = n
	}
	// The first re-mine finds the notes as read from disk, the second
	// as the first made them.
	for round, line := range []string{"- Decision: one more note, appended.\n", "- And another one.\n"} {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
		f.Close()
		bump(t, path)
		s := mineT(t, p, path, Options{})
		if s.FilesChanged != 1 || s.NotesAdded != 1 || s.NotesRemoved != 0 || s.NotesUnchanged != len(held) {
			t.Fatalf("re-mine %d: %+v, want the appended note added and %d unchanged", round, s, len(held))
		}
		for id, want := range held {
			if got := p.HeldNote("big", &want); got == nil {
				t.Fatalf("re-mine %d: note %s changed or left", round, id)
			}
		}
		held = map[string]palace.Note{}
		for _, n := range p.Notes("big") {
			held[n.ID] = n
		}
	}
	fresh := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
	mineT(t, fresh, path, Options{})
	if got, want := p.Notes("big"), fresh.Notes("big"); !reflect.DeepEqual(got, want) {
		t.Fatalf("the re-mined wing holds %d notes unlike the %d of a new mine", len(got), len(want))
	}
}

// The notes a re-mine makes of a file it finds unchanged take about a
// pointer each beyond what the palace holds: a copy of each would take
// some three times the file.
func TestReMineHoldsUnchangedNotesOnce(t *testing.T) {
	p, path, src := reMineFile(t, 40_000)
	// Read whole first, as the first note added to it reads a wing opened
	// frozen: what the wing holds is the palace's.
	_ = p.Sources("big")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	runtime.GC()
	runtime.GC() // and what the first one's finalizers let go
	base := testutil.HeapBytes()
	doc, sections, err := markdown.Sections(src, markdown.MemoryOptions())
	if err != nil {
		t.Fatal(err)
	}
	file, _ := govern.ParseFile(doc.Frontmatter)
	notes := palaceNotes(p, sections, fileOf{wing: "big", rel: "memory.md", agent: "big", path: path, govern: file})
	runtime.GC()
	ratio := (float64(testutil.HeapBytes()) - float64(base)) / float64(len(src))
	t.Logf("%d notes of %d bytes, found unchanged, took %.2f times the file beyond the palace", notes.Len(), len(src), ratio)
	if n := len(p.Notes("big")); notes.Len() != n {
		t.Fatalf("found %d notes of the wing's %d", notes.Len(), n)
	}
	if ratio > 0.5 {
		t.Fatalf("the notes of a re-mine took %.2f times the file beyond the palace, want at most 0.5", ratio)
	}
	runtime.KeepAlive(notes)
	runtime.KeepAlive(src) // in the base, as is the palace
}

// BenchmarkMineLargeFile mines one large memory file into a new lexical
// palace and reports the heap it took: peak-heap-MB is the most the heap
// held beyond what it held before (live and not yet collected objects),
// heap/file that over the file's size, palace-MB what the palace holds
// live once mined.
func BenchmarkMineLargeFile(b *testing.B) {
	src := markdowntest.Memory(200_000)
	dir := b.TempDir()
	path := filepath.Join(dir, "agents", "big", "memory.md")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, src, 0o644); err != nil {
		b.Fatal(err)
	}
	src = nil
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	var peak, held uint64
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p, err := palace.Open(context.Background(), filepath.Join(dir, "palace", string(rune('a'+i%26))), palace.Options{})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		base := testutil.HeapBytes()
		stop := testutil.HeapPeak()
		if _, err := Mine(context.Background(), p, path, Options{MaxFileBytes: 64 << 20}); err != nil {
			b.Fatal(err)
		}
		peak = max(peak, stop()-base)
		runtime.GC()
		held = testutil.HeapBytes() - base
		p.Close()
		b.StopTimer()
		_ = os.RemoveAll(filepath.Join(dir, "palace"))
		b.StartTimer()
	}
	b.ReportMetric(float64(info.Size())/(1<<20), "file-MB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peak)/float64(info.Size()), "heap/file")
	b.ReportMetric(float64(held)/(1<<20), "palace-MB")
}

// BenchmarkReMineLargeFile mines the file of BenchmarkMineLargeFile again
// after a note is appended to it, in a palace opened from disk as the
// CLI opens it: peak-heap-MB is the most the heap held beyond the open
// palace, heap/file that over the file's size.
func BenchmarkReMineLargeFile(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "agents", "big", "memory.md")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, markdowntest.Memory(200_000), 0o644); err != nil {
		b.Fatal(err)
	}
	pdir := filepath.Join(dir, "palace")
	open := func() *palace.Palace {
		p, err := palace.Open(context.Background(), pdir, palace.Options{})
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	p := open()
	if _, err := Mine(context.Background(), p, path, Options{MaxFileBytes: 64 << 20}); err != nil {
		b.Fatal(err)
	}
	p.Close()
	var peak uint64
	var size int64
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		_, err = fmt.Fprintf(f, "- Decision: note %d appended by the re-mine benchmark.\n", i)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		info, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		size = info.Size()
		p := open()
		runtime.GC()
		base := testutil.HeapBytes()
		b.StartTimer()
		stop := testutil.HeapPeak()
		s, err := Mine(context.Background(), p, path, Options{MaxFileBytes: 64 << 20})
		if err != nil || s.NotesAdded != 1 {
			b.Fatalf("re-mine: %+v, %v", s, err)
		}
		peak = max(peak, stop()-base)
		p.Close()
	}
	b.ReportMetric(float64(size)/(1<<20), "file-MB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(peak)/float64(size), "heap/file")
}

// A re-mine reuses the governance of a note it finds unchanged only under
// the frontmatter it was classified with: whatever changes in the
// frontmatter or in a note, the re-mined wing holds the notes, governance
// and all, that a mine of the file into a new palace gives.
func TestReMineClassifiesWhatChanged(t *testing.T) {
	const body = `
# Memory

## Infra
- Production Postgres runs on db-2.
- Backups run nightly at 02:00.

## Decisions
- Decision: use Go for the daemon.
`
	const front = "---\nstatus: approved\ntags: [ops, infra]\nstale_after: 30d\nreview_date: 2027-01-01\nupdated: 2026-11-01\n---\n"
	edits := []struct {
		name, from, to string
	}{
		{"status", "status: approved", "status: superseded"},
		{"tags", "tags: [ops, infra]", "tags: [ops]"},
		{"stale_after", "stale_after: 30d", "stale_after: never"},
		{"review_date", "review_date: 2027-01-01", "review_date: 2027-02-01"},
		{"updated", "updated: 2026-11-01", "updated: 2026-11-20"},
		{"frontmatter removed", front, ""},
		{"note gains a date", "runs on db-2.", "runs on db-2 since 2026-11-30."},
		{"note gains a tag", "nightly at 02:00.", "nightly at 02:00. #backup"},
		{"note superseded", "use Go for the daemon.", "use Go for the daemon. (superseded)"},
		{"heading superseded", "## Decisions", "## Superseded decisions"},
		{"unchanged", "", ""},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, "agents/big/memory.md", front+body)
			pdir := filepath.Join(dir, "palace")
			first := openPalace(t, pdir, nil)
			mineT(t, first, path, Options{})
			before := first.Notes("big")
			first.Close()
			p := openPalace(t, pdir, nil)
			edited := front + body
			if e.from != "" {
				edited = strings.Replace(edited, e.from, e.to, 1)
			}
			edited += "- An appended note.\n"
			writeFile(t, dir, "agents/big/memory.md", edited)
			bump(t, path)
			mineT(t, p, path, Options{})
			fresh := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
			mineT(t, fresh, path, Options{})
			got, want := p.Notes("big"), fresh.Notes("big")
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("re-mined wing:\n%+v\nwant, as a new mine gives:\n%+v", got, want)
			}
			if e.from == "" {
				return
			}
			// The edit changes some note's governance, else the case
			// tests nothing.
			was := map[string]govern.Note{}
			for _, n := range before {
				was[n.Heading+"\x00"+n.Text] = n.Governance
			}
			changed := false
			for _, n := range want {
				if g, ok := was[n.Heading+"\x00"+n.Text]; ok && !reflect.DeepEqual(g, n.Governance) {
					changed = true
				}
				if _, ok := was[n.Heading+"\x00"+n.Text]; !ok && !strings.Contains(n.Text, "appended") {
					changed = true
				}
			}
			if !changed {
				t.Fatalf("edit %q changes no note's governance", e.name)
			}
		})
	}
}
