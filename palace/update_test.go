package palace

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/memminer/memminer/memory/govern"
)

// HeldNote gives a copy of the wing's note only for a note equal in every
// field, and ApplyNotes keeps the wing's note when given an equal one: a
// re-mine holds an unchanged note once.
func TestHeldNote(t *testing.T) {
	ctx := context.Background()
	p := openT(t, t.TempDir(), nil, false)
	src := Source{Path: "/hive/agents/w/memory.md", Hash: "h1"}
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	mined := func() Note {
		n := note("a", "Infra", "Postgres runs on db-2 #ops", 3)
		n.Wing, n.Source = "w", src.Path
		n.Governance = govern.Note{Status: govern.Approved, Reason: "approved", Date: day, Review: day, StaleAfter: time.Hour, Tags: []string{"ops"}}
		return n
	}
	first := mined()
	if _, err := p.ApplyNotes(ctx, "w", src, []*Note{&first}); err != nil {
		t.Fatal(err)
	}
	held := p.wings["w"].note("a")

	same := mined()
	copied := p.HeldNote("w", &same)
	if copied == nil || !reflect.DeepEqual(*copied, same) {
		t.Fatalf("HeldNote of an equal note = %+v, want %+v", copied, same)
	}
	for name, change := range map[string]func(*Note){
		"id":          func(n *Note) { n.ID = "b" },
		"wing":        func(n *Note) { n.Wing = "x" },
		"agent":       func(n *Note) { n.Agent = "b" },
		"source":      func(n *Note) { n.Source = "/other.md" },
		"line":        func(n *Note) { n.Line++ },
		"heading":     func(n *Note) { n.Heading = "Web" },
		"text":        func(n *Note) { n.Text += "!" },
		"status":      func(n *Note) { n.Governance.Status = govern.Superseded },
		"reason":      func(n *Note) { n.Governance.Reason = "other" },
		"date":        func(n *Note) { n.Governance.Date = day.AddDate(0, 0, 1) },
		"review":      func(n *Note) { n.Governance.Review = time.Time{} },
		"stale after": func(n *Note) { n.Governance.StaleAfter = govern.Never },
		"tags":        func(n *Note) { n.Governance.Tags = append(n.Governance.Tags, "db") },
		"no tags":     func(n *Note) { n.Governance.Tags = nil },
	} {
		n := mined()
		change(&n)
		if got := p.HeldNote("w", &n); got != nil {
			t.Errorf("HeldNote of a note with another %s = %+v, want nil", name, *got)
		}
	}
	if got := p.HeldNote("nowing", &same); got != nil {
		t.Errorf("HeldNote in a wing that does not exist = %+v, want nil", *got)
	}

	added := note("b", "Infra", "pgbouncer in transaction mode", 4)
	src.Hash = "h2"
	ch, err := p.ApplyNotes(ctx, "w", src, []*Note{copied, &added})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Change{Added: 1, Unchanged: 1}); ch != want {
		t.Errorf("re-applying a held note and a new one: %+v, want %+v", ch, want)
	}
	if got, want := p.wings["w"].note("a"), mined(); got != held || !got.equals(&want) {
		t.Errorf("the held note was replaced or changed: %+v", got.note())
	}
	if got := p.Sources("w")[0].NoteIDs; len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Errorf("source lists %v, want [a b]", got)
	}
	if v := p.Versions("w", src.Path); len(v) != 2 || len(v[1].Notes) != 1 {
		t.Errorf("versions after the re-apply: %+v, want the current one and the earlier one of one note", v)
	}
}
