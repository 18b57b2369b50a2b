package palace

import (
	"context"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/govern"
)

// governedNotes are notes of every governance field, some sharing their
// governance, heading or file, one with a line beyond int32.
func governedNotes(src string) []Note {
	day := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	shared := govern.Note{Status: govern.Approved, Reason: "approved: in frontmatter", Date: day, Review: day.AddDate(0, 3, 0),
		StaleAfter: 30 * 24 * time.Hour, Tags: []string{"db", "ops"}}
	notes := []Note{
		{ID: "a", Heading: "Infra > DB", Text: "Postgres runs on db-2 #db #ops", Line: 3, Governance: shared},
		{ID: "b", Heading: "Infra > DB", Text: "pgbouncer in transaction mode #db #ops", Line: 4, Governance: shared},
		{ID: "c", Heading: "Infra", Text: "Old: MySQL on db-1", Line: 7,
			Governance: govern.Note{Status: govern.Superseded, Reason: "superseded by a", Date: day.AddDate(0, -1, 0)}},
		{ID: "d", Text: "review: 2027-01-15 rotate the keys #security", Line: 9,
			Governance: govern.Note{Review: time.Date(2027, 1, 15, 0, 0, 0, 0, time.UTC), StaleAfter: govern.Never, Tags: []string{"security"}}},
		{ID: "e", Heading: "Infra > DB", Text: "a plain note", Line: 11},
	}
	for i := range notes {
		notes[i].Wing, notes[i].Agent, notes[i].Source = "w", "w", src
	}
	return notes
}

// A wing keeps its notes in a compact form of its own; what leaves it is
// every field of what was mined, governance and tags included, from the
// wing in memory as from the wing read back from disk.
func TestStoredNotesKeepEveryField(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, nil, false)
	src := "/hive/agents/w/memory.md"
	want := governedNotes(src)
	other := Note{ID: "f", Wing: "w", Agent: "other", Source: "/hive/agents/w/notes/b.md", Line: 1 << 40, Heading: "Infra > DB", Text: "in another file",
		Governance: want[0].Governance}
	if _, err := p.ApplySource(ctx, "w", Source{Path: src, Agent: "w", Governed: govern.Version}, governedNotes(src)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ApplySource(ctx, "w", Source{Path: other.Source, Agent: "other", Governed: govern.Version}, []Note{other}); err != nil {
		t.Fatal(err)
	}
	// Lines are kept as int32: a file of more than two billion lines has
	// the largest.
	other.Line = 1<<31 - 1
	want = append(want, other)
	check := func(when string, p *Palace) {
		t.Helper()
		got := p.Notes("w")
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: notes\n%+v\nwant\n%+v", when, got, want)
		}
		for _, n := range want {
			held := p.HeldNote("w", &n)
			if held == nil || !reflect.DeepEqual(*held, n) {
				t.Errorf("%s: HeldNote(%s) = %+v", when, n.ID, held)
			}
		}
	}
	check("in memory", p)
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	check("read back", openT(t, dir, nil, true))
}

// Notes of equal governance share one value in the wing, and no note that
// leaves the palace lets a caller change it: changing the tags of a note
// Notes or Search returned, or of one given to ApplySource, changes no
// other note.
func TestSharedGovernanceCannotBeChanged(t *testing.T) {
	ctx := context.Background()
	p := openT(t, filepath.Join(t.TempDir(), "palace"), nil, false)
	src := "/hive/agents/w/memory.md"
	given := governedNotes(src)
	if _, err := p.ApplySource(ctx, "w", Source{Path: src, Agent: "w", Governed: govern.Version}, given); err != nil {
		t.Fatal(err)
	}
	w := p.wings["w"]
	if w.note("a").gov != w.note("b").gov {
		t.Fatal("notes a and b of equal governance hold it apart")
	}
	given[0].Governance.Tags[0] = "given"
	notes := p.Notes("w")
	notes[0].Governance.Tags[0] = "returned"
	notes[0].Governance.Tags = append(notes[0].Governance.Tags, "more")
	hits, err := p.Search(ctx, "pgbouncer transaction", SearchOptions{Results: 1})
	if err != nil || len(hits) != 1 || hits[0].ID != "b" {
		t.Fatalf("search = %+v, %v", hits, err)
	}
	hits[0].Governance.Tags[1] = "hit"
	for _, n := range p.Notes("w")[:2] {
		if want := []string{"db", "ops"}; !reflect.DeepEqual(n.Governance.Tags, want) {
			t.Errorf("note %s has tags %v, want %v", n.ID, n.Governance.Tags, want)
		}
	}
	if hits, err := p.Search(ctx, "pgbouncer transaction", SearchOptions{Results: 1, Filters: Filters{Tags: []string{"ops"}}}); err != nil || len(hits) != 1 {
		t.Errorf("search of tag ops = %+v, %v", hits, err)
	}
}

// A NoteSet holds a note the wing has, equal in every field, as the
// wing's own, and ApplySet keeps it: a re-mine holds an unchanged note
// once. A note that differs in any field is a new one.
func TestNoteSetKeepsHeldNotes(t *testing.T) {
	ctx := context.Background()
	p := openT(t, filepath.Join(t.TempDir(), "palace"), nil, false)
	src := Source{Path: "/hive/agents/w/memory.md", Agent: "w", Hash: "h1"}
	if _, err := p.ApplySource(ctx, "w", src, governedNotes(src.Path)); err != nil {
		t.Fatal(err)
	}
	before := map[string]*storedNote{}
	for n := range p.wings["w"].lex.allNotes() {
		before[n.id] = n
	}
	set := p.NewNoteSet("w")
	again := governedNotes(src.Path)
	again[2].Line++
	for i := range again {
		set.Add(&again[i])
	}
	src.Hash = "h2"
	ch, err := p.ApplySet(ctx, src, set)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Change{Unchanged: len(again)}); ch != want {
		t.Errorf("change = %+v, want %+v", ch, want)
	}
	for n := range p.wings["w"].lex.allNotes() {
		if kept := n == before[n.id]; kept != (n.id != "c") {
			t.Errorf("note %s: kept the wing's own %v", n.id, kept)
		}
	}
	if got := p.Notes("w"); !reflect.DeepEqual(got, again) {
		t.Errorf("notes = %+v, want %+v", got, again)
	}
}

// A NoteSet finds the governance of a held note only for the same id,
// source, heading and text, and hands out Tags of its own; the source
// records the key of the governance its notes were classified under.
func TestNoteSetHeldGovernance(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	p := openT(t, dir, nil, false)
	src := Source{Path: "/hive/agents/w/memory.md", Agent: "w", Hash: "h1", Governed: govern.Version, GovernedFile: "key"}
	held := governedNotes(src.Path)
	if _, err := p.ApplySource(ctx, "w", src, held); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	p = openT(t, dir, nil, false)
	if s, ok := p.Source("w", src.Path); !ok || s.GovernedFile != "key" {
		t.Fatalf("source read back = %+v, %v; want GovernedFile %q", s, ok, "key")
	}
	set := p.NewNoteSet("w")
	n := held[0]
	g, ok := set.HeldGovernance(&n)
	if !ok || !reflect.DeepEqual(g, held[0].Governance) {
		t.Fatalf("HeldGovernance = %+v, %v; want %+v", g, ok, held[0].Governance)
	}
	g.Tags[0] = "changed"
	if again, _ := set.HeldGovernance(&n); again.Tags[0] != "db" {
		t.Fatalf("changing the Tags handed out changed the held note's: %v", again.Tags)
	}
	for _, c := range []struct {
		name string
		edit func(*Note)
	}{
		{"other id", func(n *Note) { n.ID = "z" }},
		{"other text", func(n *Note) { n.Text += " #new" }},
		{"other heading", func(n *Note) { n.Heading = "Superseded" }},
		{"other source", func(n *Note) { n.Source = "/hive/agents/w/other.md" }},
	} {
		n := held[0]
		c.edit(&n)
		if g, ok := set.HeldGovernance(&n); ok {
			t.Errorf("%s: HeldGovernance = %+v, want none", c.name, g)
		}
	}
	if _, ok := p.NewNoteSet("nowing").HeldGovernance(&n); ok {
		t.Errorf("a wing the palace lacks held governance")
	}
}

// A loaded wing holds its notes in about 470 bytes each (88 bytes of
// text, a 32-byte id and terms of their own here): the stored note, its
// text and id, and the BM25 index, whose map of ids is the wing's only
// one. As Notes, with a map of their own, they took 660.
func TestLoadedWingBytesPerNote(t *testing.T) {
	const notes = 50_000
	dir := filepath.Join(t.TempDir(), "palace")
	largeWing(t, dir, notes)
	runtime.GC()
	base := testutil.HeapBytes()
	p := openT(t, dir, nil, true)
	runtime.GC()
	perNote := (float64(testutil.HeapBytes()) - float64(base)) / notes
	runtime.KeepAlive(p)
	t.Logf("a loaded wing holds %.0f bytes a note", perNote)
	if perNote > 520 {
		t.Errorf("a loaded wing holds %.0f bytes a note, want at most 520", perNote)
	}
	if n := len(p.Notes("w")); n != notes {
		t.Fatalf("loaded %d notes", n)
	}
}
