package palace

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"time"
	"unique"

	chromem "github.com/philippgille/chromem-go"

	"github.com/memminer/memminer/memory/govern"
)

// Change counts what one update did to a wing's notes. Embedded counts
// the added notes that needed the embedder: a note whose text the wing
// already holds takes that note's vector.
type Change struct {
	Added, Removed, Unchanged, Embedded int
}

// ApplySource is ApplyNotes with the notes in one slice.
func (p *Palace) ApplySource(ctx context.Context, wingID string, src Source, notes []Note) (Change, error) {
	ptrs := make([]*Note, len(notes))
	for i := range notes {
		ptrs[i] = &notes[i]
	}
	return p.ApplyNotes(ctx, wingID, src, ptrs)
}

// HeldNote returns a copy of the note of wing equal to n in every field,
// nil when the wing holds none.
func (p *Palace) HeldNote(wingID string, n *Note) *Note {
	p.thaw(wingID)
	p.mu.RLock()
	defer p.mu.RUnlock()
	if w := p.wings[wingID]; w != nil {
		if old := w.note(n.ID); old != nil && old.equals(n) {
			c := old.note()
			return &c
		}
	}
	return nil
}

// ApplyNotes is ApplySet of a NoteSet of notes.
func (p *Palace) ApplyNotes(ctx context.Context, wingID string, src Source, notes []*Note) (Change, error) {
	set := p.NewNoteSet(wingID)
	for _, n := range notes {
		c := *n
		c.Wing, c.Source = wingID, src.Path
		set.Add(&c)
	}
	return p.ApplySet(ctx, src, set)
}

// NoteSet collects the notes of one source on their way into a wing
// (ApplySet), each as the wing holds notes, a third of a Note's size, and
// a note the wing holds already, equal in every field, as the wing's own:
// a miner collects the notes of a large file without holding them twice.
type NoteSet struct {
	p     *Palace
	wing  string
	notes []*storedNote
	st    storer
	// heldPath and heldBefore say which notes AddHeld added.
	heldPath   string
	heldBefore int
}

// NewNoteSet returns an empty NoteSet for wing.
func (p *Palace) NewNoteSet(wingID string) *NoteSet { return &NoteSet{p: p, wing: wingID} }

// Add adds a copy of n; the caller may change or reuse n afterwards.
func (s *NoteSet) Add(n *Note) {
	s.p.thaw(s.wing)
	s.p.mu.RLock()
	var had *storedNote
	if w := s.p.wings[s.wing]; w != nil {
		had = w.note(n.ID)
	}
	s.p.mu.RUnlock()
	if had != nil && had.equals(n) {
		s.notes = append(s.notes, had)
		return
	}
	sn := s.st.store(n)
	if had != nil && had.text == n.Text {
		// The text the wing holds already, which its earlier versions
		// share: each re-mine would add a copy of it.
		sn.text = had.text
	}
	s.notes = append(s.notes, sn)
}

// HeldGovernance returns the governance of the note the wing holds with
// n's id, source, heading and text; false when it holds none.
func (s *NoteSet) HeldGovernance(n *Note) (govern.Note, bool) {
	s.p.thaw(s.wing)
	s.p.mu.RLock()
	defer s.p.mu.RUnlock()
	w := s.p.wings[s.wing]
	if w == nil {
		return govern.Note{}, false
	}
	had := w.note(n.ID)
	if had == nil || had.text != n.Text || had.heading.Value() != n.Heading || had.path() != n.Source {
		return govern.Note{}, false
	}
	g := *had.gov
	g.Tags = slices.Clone(g.Tags)
	return g, true
}

// AddHeld adds, in order and as the wing's own, the notes the wing holds
// of the file at path that start before line (1-based), to an empty set,
// when keep accepts every one of them, given each one's agent and
// governance (whose Tags it must not change); it adds none and returns
// false when the set is not empty, the wing holds no such file, or keep
// refused one. A miner that parses only the end of a file that grew takes
// the notes before it so, without making them again.
func (s *NoteSet) AddHeld(path string, line int, keep func(agent string, g govern.Note) bool) bool {
	if len(s.notes) > 0 {
		return false
	}
	s.p.thaw(s.wing)
	s.p.mu.RLock()
	defer s.p.mu.RUnlock()
	w := s.p.wings[s.wing]
	if w == nil || w.sources[path] == nil {
		return false
	}
	var held []*storedNote
	last := 0
	for _, id := range w.sources[path].NoteIDs {
		n := w.note(id)
		// The file's notes, in order: anything else is not what its
		// content gave, and the miner mines it whole.
		if n == nil || n.path() != path || int(n.line) < last {
			return false
		}
		last = int(n.line)
		if last >= line {
			continue
		}
		// Not n.view(): the Note it makes escapes through keep, a heap
		// copy of every note of the file at each mine of an append.
		if !keep(n.place.Value().agent, *n.gov) {
			return false
		}
		held = append(held, n)
	}
	s.notes, s.heldPath, s.heldBefore = held, path, line
	return true
}

// Holds reports whether AddHeld added the note with id.
func (s *NoteSet) Holds(id string) bool {
	if s.heldPath == "" {
		return false
	}
	s.p.mu.RLock()
	defer s.p.mu.RUnlock()
	w := s.p.wings[s.wing]
	if w == nil {
		return false
	}
	n := w.note(id)
	return n != nil && n.path() == s.heldPath && int(n.line) < s.heldBefore
}

// Len is the number of notes added.
func (s *NoteSet) Len() int { return len(s.notes) }

// Same reports whether the i-th note added has heading and text.
func (s *NoteSet) Same(i int, heading, text string) bool {
	n := s.notes[i]
	return n.text == text && n.heading.Value() == heading
}

// IDs yields the ids of the notes added, in the order they were.
func (s *NoteSet) IDs() iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, n := range s.notes {
			if !yield(n.id) {
				return
			}
		}
	}
}

// ApplySet makes the notes of set the content of src in the set's wing:
// notes no longer in the file leave, new ones are added, the rest keep
// their vectors (their line numbers and source path are updated). A new
// note is embedded only when no note of the wing has the same embedded
// text. Note ids must already be set; a note whose id another source
// holds passes to src. It returns ErrModelMismatch when the wing holds
// another model's vectors; call Reembed first. The wing's notes get the
// set's wing as Wing and src.Path as Source.
func (p *Palace) ApplySet(ctx context.Context, src Source, set *NoteSet) (Change, error) {
	wingID, notes := set.wing, set.notes
	p.thaw(wingID)
	fresh, vecs, embedded, err := p.vectorsOf(ctx, wingID, notes, src.Path)
	if err != nil {
		return Change{}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.wingLocked(wingID)
	if w.noteCount() == 0 {
		w.model, w.dim = p.Model(), 0
	}
	// Check before changing anything: a failed update leaves the wing as it was.
	if err := w.checkDims(vecs); err != nil {
		return Change{}, fmt.Errorf("embed %s: %w", src.Path, err)
	}
	w.invalidate()
	w.keepHistory(&src, notes)
	ch := w.replaceNotes(wingID, &src, notes)
	ch.Embedded = embedded
	ids := make([]string, len(fresh))
	for i, n := range fresh {
		ids[i] = n.id
	}
	w.addVectors(p.db, ids, vecs)
	s := src
	w.sources[src.Path] = &s
	w.lastMined = time.Now().UTC()
	w.dirty = true
	return ch, nil
}

// vectorsOf returns the notes of the set that need a vector (fresh) and
// their vectors, each lent by a note of the wing with the same embedded
// text or embedded (how many: embedded); vecs is nil when there are none.
func (p *Palace) vectorsOf(ctx context.Context, wingID string, notes []*storedNote, path string) (fresh []*storedNote, vecs [][]float32, embedded int, err error) {
	p.mu.RLock()
	w := p.wings[wingID]
	fresh, toEmbed, reused := p.toEmbed(w, notes)
	mismatch := w != nil && w.model != p.Model() && w.noteCount() > 0
	p.mu.RUnlock()
	if mismatch {
		return nil, nil, 0, fmt.Errorf("%w: wing %s has %s vectors, palace model is %s", ErrModelMismatch, wingID, w.model, p.Model())
	}
	texts := make([]string, len(toEmbed))
	for i, n := range toEmbed {
		texts[i] = n.embedText()
	}
	out, err := p.embedTexts(ctx, texts)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("embed %s: %w", path, err)
	}
	if len(out) > 0 || len(toEmbed) < len(fresh) {
		vecs = make([][]float32, len(fresh))
		for i, k := 0, 0; i < len(fresh); i++ {
			if vecs[i] = reused[i]; vecs[i] == nil {
				vecs[i] = out[k]
				k++
			}
		}
	}
	return fresh, vecs, len(out), nil
}

// toEmbed returns the notes that need a vector in wing w (nil: new) and,
// for each, the vector a note of the wing with the same embedded text
// lends it, or nil for one among toEmbed. The caller holds p.mu.
func (p *Palace) toEmbed(w *wing, notes []*storedNote) (fresh, toEmbed []*storedNote, reused [][]float32) {
	// Only a palace with a model embeds, and only a wing of its vectors
	// lends them: a lexical mine of a large file lists nothing here.
	if p.emb == nil {
		return nil, nil, nil
	}
	var byText map[string][]string
	for _, n := range notes {
		// A note the wing has without a vector (in a wing of vectors) is
		// embedded again rather than trusted.
		if w != nil && w.note(n.id) != nil && (w.dim == 0 || w.hasVector(n.id)) {
			continue
		}
		fresh = append(fresh, n)
		if w != nil && w.dim > 0 && w.model == p.Model() {
			if byText == nil {
				byText = w.idsByText()
			}
			if v := w.vectorOfText(byText, n.embedText()); v != nil {
				reused = append(reused, v)
				continue
			}
		}
		reused = append(reused, nil)
		toEmbed = append(toEmbed, n)
	}
	return fresh, toEmbed, reused
}

// keepHistory carries the earlier versions of src's file over from the
// wing's source, adding the version it had when its content changed.
func (w *wing) keepHistory(src *Source, notes []*storedNote) {
	src.Earlier, src.Dropped = nil, nil
	old, ok := w.sources[src.Path]
	if !ok {
		return
	}
	src.Earlier, src.Dropped = old.Earlier, old.Dropped
	if old.Hash != src.Hash {
		var gone *Version
		src.Earlier, gone = pushVersion(old.Earlier, w.versionOf(old))
		if gone != nil || len(old.Dropped) > 0 {
			src.Dropped = dropped(old.Dropped, gone, notes, src.Earlier)
		}
	}
}

// replaceNotes makes notes the wing's notes of src's file: new ones
// added, the rest replaced (moved to this file when another held them),
// those the file no longer has dropped. It sets src.NoteIDs.
func (w *wing) replaceNotes(wingID string, src *Source, notes []*storedNote) Change {
	var ch Change
	old, remined := w.sources[src.Path]
	var keep map[string]bool
	if remined {
		keep = make(map[string]bool, len(notes))
	}
	src.NoteIDs = make([]string, 0, len(notes))
	for _, n := range notes {
		if keep != nil {
			keep[n.id] = true
		}
		src.NoteIDs = append(src.NoteIDs, n.id)
		had := w.note(n.id)
		if had != nil && had.same(n) {
			ch.Unchanged++
			continue
		}
		if at := n.place.Value(); at.wing != wingID || at.source != src.Path {
			if had != nil && at.wing == wingID {
				// The note leaves the other file that held it.
				w.lostResume(at.source)
			}
			c := *n
			at.wing, at.source = wingID, src.Path
			c.place = unique.Make(at)
			n = &c
		}
		// Replaced, never changed in place: a Flush may be encoding the
		// note it had (snapshot).
		if had != nil {
			w.lex.setNote(n)
			ch.Unchanged++
			continue
		}
		w.lex.addNote(n)
		ch.Added++
	}
	w.lex.pack()
	if remined {
		var gone []string
		for _, id := range old.NoteIDs {
			if !keep[id] {
				gone = append(gone, id)
			}
		}
		ch.Removed = w.dropNotes(gone, src.Path)
	}
	return ch
}

// lostResume drops the resume point of the wing's file at path, whose
// notes in the wing are no longer the ones its content gave: a note
// shared with another file (the same id) passed to or from it, with that
// file's line. The caller holds the palace's lock; a snapshot may hold
// the old Source, so it is replaced, not changed.
func (w *wing) lostResume(path string) {
	if s := w.sources[path]; s != nil && s.Resume != nil {
		c := *s
		c.Resume = nil
		w.sources[path] = &c
	}
}

// idsByText maps the embedded text of each of the wing's notes to their
// ids. The caller holds the palace's lock.
func (w *wing) idsByText() map[string][]string {
	out := make(map[string][]string, w.noteCount())
	for n := range w.lex.allNotes() {
		t := n.embedText()
		out[t] = append(out[t], n.id)
	}
	return out
}

// vectorOfText returns the vector of a note of the wing whose embedded
// text is text, nil if none has one.
func (w *wing) vectorOfText(byText map[string][]string, text string) []float32 {
	for _, id := range byText[text] {
		if v := w.vector(id); v != nil {
			return v
		}
	}
	return nil
}

// dropNotes takes notes ids away from the source at path, and returns how
// many left the wing. A note held by another source stays; so does one
// another source lists too (two files with one id: the same note at the
// same place below two roots mined into one wing), which passes to it.
func (w *wing) dropNotes(ids []string, path string) int {
	var others map[string]string // note id → another source listing it
	var gone []string
	var notes []*storedNote
	for _, id := range ids {
		n := w.note(id)
		if n == nil || n.path() != path {
			continue
		}
		if others == nil {
			others = map[string]string{}
			for p, s := range w.sources {
				if p != path {
					for _, id := range s.NoteIDs {
						others[id] = p
					}
				}
			}
		}
		if p, ok := others[id]; ok {
			c := *n
			at := n.place.Value()
			at.source = p
			c.place = unique.Make(at)
			w.lex.setNote(&c)
			w.lostResume(p)
			continue
		}
		w.removeVector(id)
		gone, notes = append(gone, id), append(notes, n)
	}
	// At once: many notes are found faster by their postings than by
	// their texts.
	return w.lex.removeAll(gone, func(i int) string { return notes[i].embedText() })
}

// TouchSource records a new mtime and size for a source whose content did
// not change (same hash), and when it was checked, so the next cheap check
// can pass.
func (p *Palace) TouchSource(wingID, path string, mtime time.Time, size int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.thawLocked(wingID)
	if w, ok := p.wings[wingID]; ok {
		if s, ok := w.sources[path]; ok {
			s.Mtime, s.Size, s.Mined = mtime, size, time.Now().UTC()
			w.dirty = true
		}
	}
}

// RemoveSource drops a file and its notes from wing and returns how many
// notes left.
func (p *Palace) RemoveSource(wingID, path string) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.thawLocked(wingID)
	w, ok := p.wings[wingID]
	if !ok {
		return 0, nil
	}
	s, ok := w.sources[path]
	if !ok {
		return 0, nil
	}
	removed := w.dropNotes(s.NoteIDs, path)
	delete(w.sources, path)
	w.dirty = true
	w.invalidate()
	return removed, nil
}

// removeVector drops a note's vector; the caller removes the note from
// the index, which holds it (lexIndex.removeAll).
func (w *wing) removeVector(id string) {
	w.vecs.remove(id)
}

// checkDims reports vectors whose size differs from the wing's (or, in a
// wing without vectors yet, from each other).
func (w *wing) checkDims(vecs [][]float32) error {
	want := w.dim
	for _, v := range vecs {
		if want == 0 {
			want = len(v)
		}
		if len(v) != want {
			return fmt.Errorf("embedder returned %d dimensions, wing %s has %d", len(v), w.id, want)
		}
	}
	return nil
}

// addVectors stores the vectors of notes ids; their dimensions were
// checked.
func (w *wing) addVectors(db *chromem.DB, ids []string, vecs [][]float32) {
	if len(vecs) == 0 {
		return
	}
	for i, id := range ids {
		if w.dim == 0 {
			w.dim = len(vecs[i])
		}
		// Adding fails only for an empty id or vector, which cannot
		// happen here.
		_ = w.vecs.add(context.Background(), db, w.id, id, vecs[i])
	}
}

// embedTexts embeds notes' texts (Note.EmbedText), returning normalised
// vectors (nil for a lexical palace).
func (p *Palace) embedTexts(ctx context.Context, texts []string) ([][]float32, error) {
	if p.emb == nil || len(texts) == 0 {
		return nil, nil
	}
	vecs, err := p.emb.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	for _, v := range vecs {
		if !normalize(v) {
			return nil, errors.New("embedder returned a zero or non-finite vector")
		}
	}
	return vecs, nil
}

// normalize scales v to unit length in place; false if it cannot be.
func normalize(v []float32) bool {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return false
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return true
}

// Reembed replaces every vector of wing with one from the palace's model
// (or drops them for a lexical palace). It returns the number of notes embedded.
func (p *Palace) Reembed(ctx context.Context, wingID string) (int, error) {
	p.thaw(wingID)
	p.mu.RLock()
	w, ok := p.wings[wingID]
	var ids, texts []string
	if ok {
		for n := range w.lex.allNotes() {
			ids = append(ids, n.id)
			texts = append(texts, n.embedText())
		}
	}
	p.mu.RUnlock()
	if !ok {
		return 0, nil
	}
	vecs, err := p.embedTexts(ctx, texts)
	if err != nil {
		return 0, fmt.Errorf("re-embed wing %s: %w", wingID, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	probe := &wing{id: w.id}
	if err := probe.checkDims(vecs); err != nil {
		return 0, fmt.Errorf("re-embed wing %s: %w", wingID, err)
	}
	w.vecs.drop(p.db, w.id)
	w.invalidate()
	w.dim = 0
	w.model = p.Model()
	w.dirty = true
	w.addVectors(p.db, ids, vecs)
	return len(ids), nil
}
