package palace

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	chromem "github.com/philippgille/chromem-go"

	"github.com/memminer/memminer/embed/embedtest"
)

// The vectors a wing lists (for its search view and its file) are the
// slices its chromem-go collection holds, not copies, after a mine and
// after the wing is read whole from its file.
func TestListedVectorsAreTheCollections(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "palace")
	emb := &embedtest.Hashing{}
	p := openT(t, dir, emb, false)
	notes := []Note{note("a", "", "alpha apples", 1), note("b", "", "bravo bananas", 3), note("c", "", "cherry cake", 5)}
	if _, err := p.ApplySource(ctx, "w", Source{Path: "/w.md"}, notes); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	check := func(p *Palace, when string) {
		t.Helper()
		p.thaw("w")
		p.mu.RLock()
		defer p.mu.RUnlock()
		w := p.wings["w"]
		listed, err := w.vectors(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// QueryEmbedding answers with the slices the collection holds.
		held, err := w.vecs.coll.QueryEmbedding(ctx, listed["a"], w.vecs.count(), nil, nil)
		if err != nil || len(held) != len(notes) || len(listed) != len(notes) {
			t.Fatalf("%s: collection holds %d vectors (%v), %d listed; want %d", when, len(held), err, len(listed), len(notes))
		}
		for _, r := range held {
			if unsafe.SliceData(listed[r.ID]) != unsafe.SliceData(r.Embedding) {
				t.Errorf("%s: vector of %s listed is not the collection's", when, r.ID)
			}
		}
	}
	check(p, "mined")
	p.Close()
	check(openT(t, dir, emb, true), "read from its file")
}

// A vector that is not of unit length is listed as chromem-go holds it,
// normalised by chromem-go's rule, whichever way that goes.
func TestListedVectorsAreNormalisedAsChromemHoldsThem(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		vec  []float32
		// same: the listed vector is the collection's slice, not a copy.
		same bool
	}{
		{"unit", []float32{0.6, 0.8}, true},
		{"long", []float32{3, 4}, true},
		{"short", []float32{0.003, 0.004}, true},
		// Its squares overflow float32: chromem-go's copy is not of unit
		// length, and it normalises that once more.
		{"overflowing", []float32{1e20, 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := chromem.NewDB()
			var v wingVectors
			if err := v.add(ctx, db, "w", "n", slices.Clone(tt.vec)); err != nil {
				t.Fatal(err)
			}
			// What a collection that was handed the vector holds.
			ref, err := chromem.NewDB().CreateCollection("ref", nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := ref.AddDocument(ctx, chromem.Document{ID: "n", Embedding: slices.Clone(tt.vec)}); err != nil {
				t.Fatal(err)
			}
			want, _ := ref.GetByID(ctx, "n")
			got := v.get("n")
			if !slices.Equal(got, want.Embedding) && !(hasNaN(got) && hasNaN(want.Embedding)) {
				t.Fatalf("listed %v, chromem-go holds %v", got, want.Embedding)
			}
			held, err := v.coll.QueryEmbedding(ctx, []float32{1, 0}, 1, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if same := unsafe.SliceData(held[0].Embedding) == unsafe.SliceData(got); same != tt.same {
				t.Fatalf("listed vector is the collection's: %v, want %v", same, tt.same)
			}
		})
	}
}

func hasNaN(v []float32) bool { return slices.ContainsFunc(v, func(f float32) bool { return f != f }) }

// A wing's first vector makes it a collection of its own: one the db held
// under the wing's id (a wing since replaced) lends it none of its
// vectors, so what chromem-go counts is what the wing lists.
func TestWingVectorsStartAnEmptyCollection(t *testing.T) {
	ctx := context.Background()
	db := chromem.NewDB()
	stale, err := db.CreateCollection("w", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := stale.AddDocument(ctx, chromem.Document{ID: "old", Embedding: []float32{1, 0}}); err != nil {
		t.Fatal(err)
	}
	var v wingVectors
	if err := v.add(ctx, db, "w", "n", []float32{0, 1}); err != nil {
		t.Fatal(err)
	}
	if v.count() != 1 || len(v.all()) != 1 || v.has("old") {
		t.Fatalf("collection holds %d vectors, %d listed (old: %v); want the one added", v.count(), len(v.all()), v.has("old"))
	}
}
