package palace

import (
	"context"
	"errors"
	"math"

	chromem "github.com/philippgille/chromem-go"
)

// wingVectors is a wing's vectors: a chromem-go collection of its notes
// (document id the note's id, embedding its vector), which holds them,
// and, by note id, the very slices the collection holds (not copies).
//
// chromem-go v0.7.0 has no call that lists a collection: GetByID copies
// one vector, Export encodes all of them, and QueryEmbedding, which
// returns the collection's own slices, ranks every document to do so (a
// wing's vectors were listed that way, a similarity and a sort of every
// note at each listing). So the wing keeps, as it adds each vector, the
// slice chromem-go stores, and lists those: the search view and the wing
// file read them, by note id, without a query. What chromem-go is for
// here, a note's vector by id, its count and its removal, it does.
type wingVectors struct {
	coll *chromem.Collection
	byID map[string][]float32
}

// collection returns the wing's chromem collection, creating it in db on
// first use: a new one, empty as byID is, in place of any the db had of
// that name.
func (v *wingVectors) collection(db *chromem.DB, wingID string) *chromem.Collection {
	if v.coll == nil {
		// Vectors are always supplied; the embedding func only guards against
		// chromem's default (a remote API) ever being used.
		v.coll, _ = db.CreateCollection(wingID, nil, func(context.Context, string) ([]float32, error) {
			return nil, errors.New("palace supplies its own vectors")
		})
		v.byID = map[string][]float32{}
	}
	return v.coll
}

// add stores the vector of note id in the wing's collection (in db,
// created on first use), replacing any it had, and keeps the slice the
// collection holds. It fails as chromem-go's AddDocument does (an empty
// vector).
func (v *wingVectors) add(ctx context.Context, db *chromem.DB, wingID, id string, vec []float32) error {
	c := v.collection(db, wingID)
	// chromem-go keeps a unit vector as given and stores a normalised
	// copy of any other: handed that copy, unit by its measure, it keeps
	// it, the slice kept here.
	in := vec
	if !unitForChromem(in) {
		if n := normalizedForChromem(in); unitForChromem(n) {
			in = n
		}
	}
	if err := c.AddDocument(ctx, chromem.Document{ID: id, Embedding: in}); err != nil {
		return err
	}
	if !unitForChromem(in) {
		// Normalised once more than the copy says: read back what it
		// stored (a copy of it, with the same values).
		doc, err := c.GetByID(ctx, id)
		if err != nil {
			return err
		}
		in = doc.Embedding
	}
	v.byID[id] = in
	return nil
}

// get returns the vector of note id as the collection holds it (not a
// copy: the caller must not change it), nil if it has none.
func (v *wingVectors) get(id string) []float32 { return v.byID[id] }

// has reports whether the collection holds a vector for note id.
func (v *wingVectors) has(id string) bool {
	_, ok := v.byID[id]
	return ok
}

// count is how many vectors the collection holds.
func (v *wingVectors) count() int {
	if v.coll == nil {
		return 0
	}
	return v.coll.Count()
}

// all lists the vectors by note id, as the collection holds them (the
// caller must change neither the map nor a vector).
func (v *wingVectors) all() map[string][]float32 { return v.byID }

// remove drops note id's vector.
func (v *wingVectors) remove(id string) {
	if v.coll != nil {
		// nil where: an empty map would delete every document (DESIGN.md).
		_ = v.coll.Delete(context.Background(), nil, nil, id)
		delete(v.byID, id)
	}
}

// drop deletes the wing's collection from db, and every vector with it.
func (v *wingVectors) drop(db *chromem.DB, wingID string) {
	if v.coll != nil {
		_ = db.DeleteCollection(wingID)
	}
	v.coll, v.byID = nil, nil
}

// unitForChromem reports whether chromem-go takes vec as a unit vector
// (its isNormalized: the length, summed in float64, within 1e-6 of 1),
// and so stores it as given.
func unitForChromem(vec []float32) bool {
	var sq float64
	for _, f := range vec {
		sq += float64(f) * float64(f)
	}
	return math.Abs(math.Sqrt(sq)-1) < 1e-6
}

// normalizedForChromem is the copy of vec chromem-go stores for a vector
// it does not take as a unit one (its normalizeVector: the length summed
// in float32, each value divided by it).
func normalizedForChromem(vec []float32) []float32 {
	var sq float32
	for _, f := range vec {
		sq += f * f
	}
	norm := float32(math.Sqrt(float64(sq)))
	out := make([]float32, len(vec))
	for i, f := range vec {
		out[i] = f / norm
	}
	return out
}
