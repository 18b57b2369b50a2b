package palace

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

type wing struct {
	id      string
	model   string
	dim     int
	roots   []string
	sources map[string]*Source
	// vecs holds the wing's vectors in its chromem-go collection, the
	// only copy in memory: a wing file is loaded into it and written from
	// it, and search reads it.
	vecs wingVectors
	// lex is the BM25 index, and the table of the wing's notes by id
	// (note, allNotes).
	lex       *lexIndex
	lastMined time.Time
	dirty     bool
	// view is the search view of the notes (fusion.go), nil after a change.
	view atomic.Pointer[wingView]
	// fz is set while the wing is frozen (frozen.go): lex and view read
	// it, sources and coll are empty, and anything but a search thaws the
	// wing first (Palace.thaw).
	fz *frozenWing
}

// sourceCount is how many sources the wing has.
func (w *wing) sourceCount() int {
	if w.fz != nil {
		return len(w.fz.sources)
	}
	return len(w.sources)
}

// SourceHead is what the palace records of a mined file but its notes:
// the Source without NoteIDs and Earlier, and how many notes it has. It
// is what mine's change check needs, and a wing that was not changed since
// the palace was opened gives it without reading its sources whole.
type SourceHead struct {
	Source
	// Notes is how many notes the file has (len(Source.NoteIDs)).
	Notes int
}

// headOf is src's head.
func headOf(src *Source) SourceHead {
	s := *src
	s.NoteIDs, s.Earlier = nil, nil
	return SourceHead{Source: s, Notes: len(src.NoteIDs)}
}

// SourceHeads lists the heads of wing's sources, sorted by path.
func (p *Palace) SourceHeads(wingID string) []SourceHead {
	p.wake(wingID)
	p.mu.RLock()
	defer p.mu.RUnlock()
	w, ok := p.wings[wingID]
	switch {
	case !ok:
		return nil
	case w.fz != nil:
		return slices.Clone(w.fz.sources)
	}
	out := make([]SourceHead, 0, len(w.sources))
	for _, s := range w.sources {
		out = append(out, headOf(s))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// SourceHead returns the head of the file at path in wing.
func (p *Palace) SourceHead(wingID, path string) (SourceHead, bool) {
	p.wake(wingID)
	p.mu.RLock()
	defer p.mu.RUnlock()
	w, ok := p.wings[wingID]
	if !ok {
		return SourceHead{}, false
	}
	if w.fz != nil {
		i, ok := slices.BinarySearchFunc(w.fz.sources, path, func(s SourceHead, p string) int { return strings.Compare(s.Path, p) })
		if !ok {
			return SourceHead{}, false
		}
		return w.fz.sources[i], true
	}
	if s, ok := w.sources[path]; ok {
		return headOf(s), true
	}
	return SourceHead{}, false
}

// mtimeOf is the modification time of the wing's source at path as mined.
func (w *wing) mtimeOf(path string) time.Time {
	if w.fz != nil {
		return w.fz.mtimes[path]
	}
	if s := w.sources[path]; s != nil {
		return s.Mtime
	}
	return time.Time{}
}

// invalidate drops the wing's search view after its notes changed. The
// caller holds the palace's write lock.
func (w *wing) invalidate() { w.view.Store(nil) }

func (p *Palace) newWing(id string) *wing {
	return &wing{
		id:      id,
		model:   p.Model(),
		sources: map[string]*Source{},
		lex:     newLexIndex(),
	}
}

// note returns the wing's note id, nil when it has none.
func (w *wing) note(id string) *storedNote { return w.lex.note(id) }

// noteCount is how many notes the wing has.
func (w *wing) noteCount() int { return w.lex.live }

// vectorCount is how many vectors the wing holds.
func (w *wing) vectorCount() int {
	if w.fz != nil {
		return w.fz.nVecs
	}
	return w.vecs.count()
}

// hasVector reports whether the wing holds a vector for note id.
func (w *wing) hasVector(id string) bool { return w.vecs.has(id) }

// vector returns a copy of note id's vector, nil if the wing has none.
func (w *wing) vector(id string) []float32 { return slices.Clone(w.vecs.get(id)) }

// vectors lists the wing's vectors by note id as its collection holds
// them (wingVectors): the caller holds the palace's lock while it reads
// the map, and changes neither the map nor a vector.
func (w *wing) vectors(context.Context) (map[string][]float32, error) {
	if w.vecs.count() == 0 {
		return nil, nil
	}
	return w.vecs.all(), nil
}

func (p *Palace) wingPath(id string) string {
	return filepath.Join(p.dir, wingsDir, id+wingExt)
}

// Roots lists the paths wing was mined from.
func (p *Palace) Roots(wingID string) []string {
	p.wake(wingID)
	p.mu.RLock()
	defer p.mu.RUnlock()
	if w, ok := p.wings[wingID]; ok {
		return slices.Clone(w.roots)
	}
	return nil
}

// Wings summarises every wing, sorted by id.
func (p *Palace) Wings() []WingInfo {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]WingInfo, 0, len(p.wings))
	for _, w := range p.wings {
		out = append(out, WingInfo{ID: w.id, Notes: w.noteCount(), Sources: w.sourceCount(), Model: w.model, LastMined: w.lastMined, Roots: slices.Clone(w.roots)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// WholeWings lists, sorted, the wings read whole since the palace was
// opened (notes and sources decoded; the rest are frozen, read in place
// as search reads them): what a command paid for, for tests and
// diagnostics.
func (p *Palace) WholeWings() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out []string
	for id, w := range p.wings {
		if w.fz == nil {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// wake loads wing id when Options.Unchanged left it unloaded, for a
// method about to read it: a miner that skips such wings never gets here,
// and any other reader still sees the wing.
func (p *Palace) wake(id string) {
	if p.Unloaded(id) {
		p.thaw(id)
	}
}

// Unloaded reports whether Options.Unchanged left wing id unloaded.
func (p *Palace) Unloaded(id string) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	_, ok := p.unloaded[id]
	return ok
}

// HasWing reports whether the palace has wing id.
func (p *Palace) HasWing(id string) bool {
	p.wake(id)
	p.mu.RLock()
	defer p.mu.RUnlock()
	_, ok := p.wings[id]
	return ok
}

// Source returns what the palace knows of the file at path in wing.
func (p *Palace) Source(wingID, path string) (Source, bool) {
	p.thaw(wingID)
	p.mu.RLock()
	defer p.mu.RUnlock()
	w, ok := p.wings[wingID]
	if !ok {
		return Source{}, false
	}
	s, ok := w.sources[path]
	if !ok {
		return Source{}, false
	}
	return *s, true
}

// Versions returns the contents of the file at path in wing as mined, the
// latest first, then Source.Earlier; nil when the palace does not know it.
func (p *Palace) Versions(wingID, path string) []Version {
	p.thaw(wingID)
	p.mu.RLock()
	defer p.mu.RUnlock()
	w, ok := p.wings[wingID]
	if !ok {
		return nil
	}
	s, ok := w.sources[path]
	if !ok {
		return nil
	}
	return append([]Version{w.versionOf(s)}, s.Earlier...)
}

// InheritVersions gives the source at to, a file that moved there from
// from (a hive moved with mv), the contents from was mined with, so its
// merge bases survive the move. A source at to with earlier contents of
// its own keeps them.
func (p *Palace) InheritVersions(wingID, from, to string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.thawLocked(wingID)
	w, ok := p.wings[wingID]
	if !ok {
		return
	}
	f, okf := w.sources[from]
	t, okt := w.sources[to]
	if !okf || !okt || len(t.Earlier) > 0 {
		return
	}
	past := append([]Version{w.versionOf(f)}, f.Earlier...)
	if past[0].Hash == t.Hash {
		past = past[1:] // the content it has now
	}
	if len(past) > MaxEarlierVersions {
		past = past[:MaxEarlierVersions]
	}
	if len(past) > 0 {
		t.Earlier = past
		t.Dropped = append([]uint64(nil), f.Dropped...)
		w.dirty = true
	}
}

// versionOf returns the content src was last mined with. The caller holds
// the palace's lock.
func (w *wing) versionOf(src *Source) Version {
	v := Version{Hash: src.Hash, Mined: src.Mined, Frontmatter: src.Frontmatter, Notes: make([]VersionNote, 0, len(src.NoteIDs))}
	for _, id := range src.NoteIDs {
		if n := w.note(id); n != nil {
			v.Notes = append(v.Notes, VersionNote{Heading: n.heading.Value(), Text: n.text, Line: int(n.line)})
		}
	}
	return v
}

// pushVersion puts v in front of earlier, keeping at most
// MaxEarlierVersions, and returns the version that fell off, if any.
// When the version after v is a prefix of it (notes appended, as remember
// does), it is made to share v's notes, so a file remembered into N times
// holds one list of its notes, not N: in a soak of 200k notes the versions
// were what grew most (BENCHMARKS.md, Daemon).
func pushVersion(earlier []Version, v Version) ([]Version, *Version) {
	out := append([]Version{v}, earlier...)
	var gone *Version
	if len(out) > MaxEarlierVersions {
		g := out[MaxEarlierVersions]
		out, gone = out[:MaxEarlierVersions], &g
	}
	sharePrefixes(out)
	return out, gone
}

// dropped returns Source.Dropped after gone fell off the file's history:
// its notes that neither the current notes nor the kept versions hold are
// added, sorted, once; keys the file holds again leave.
func dropped(keys []uint64, gone *Version, current []*storedNote, kept []Version) []uint64 {
	// A file that only grew, the common case: what fell off is a prefix of
	// the oldest version kept, so it drops nothing, and nothing was dropped
	// before that could be held again. Hashing every kept note to find so
	// was a tenth of re-mining a large file after an append.
	if len(keys) == 0 && (gone == nil || len(kept) > 0 && isPrefix(gone.Notes, kept[len(kept)-1].Notes)) {
		return nil
	}
	return droppedAll(keys, gone, current, kept)
}

// droppedAll is dropped without its shortcut.
func droppedAll(keys []uint64, gone *Version, current []*storedNote, kept []Version) []uint64 {
	held := make(map[uint64]bool, len(current))
	for _, n := range current {
		held[SeenKey(n.heading.Value(), n.text)] = true
	}
	for _, v := range kept {
		for _, n := range v.Notes {
			held[SeenKey(n.Heading, n.Text)] = true
		}
	}
	set := make(map[uint64]bool, len(keys))
	for _, k := range keys {
		set[k] = true
	}
	if gone != nil {
		for _, n := range gone.Notes {
			set[SeenKey(n.Heading, n.Text)] = true
		}
	}
	var out []uint64
	for k := range set {
		if !held[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// isPrefix reports whether a is b's first len(a) notes.
func isPrefix(a, b []VersionNote) bool {
	return len(a) <= len(b) && slices.Equal(a, b[:len(a)])
}

// sharePrefixes makes each version of vs (newest first) whose notes are a
// prefix of the next newer one's share that one's notes.
func sharePrefixes(vs []Version) {
	for i := 1; i < len(vs); i++ {
		newer, older := vs[i-1].Notes, vs[i].Notes
		if n := len(older); n > 0 && isPrefix(older, newer) {
			vs[i].Notes = newer[:n:n]
		}
	}
}

// Sources lists the paths of wing's sources, sorted.
func (p *Palace) Sources(wingID string) []Source {
	p.thaw(wingID)
	p.mu.RLock()
	defer p.mu.RUnlock()
	w, ok := p.wings[wingID]
	if !ok {
		return nil
	}
	out := make([]Source, 0, len(w.sources))
	for _, s := range w.sources {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Notes returns wing's notes in source order (by source path, then line).
func (p *Palace) Notes(wingID string) []Note {
	p.thaw(wingID)
	p.mu.RLock()
	defer p.mu.RUnlock()
	w, ok := p.wings[wingID]
	if !ok {
		return nil
	}
	notes := slices.SortedFunc(w.lex.allNotes(), compareStored)
	out := make([]Note, len(notes))
	for i, n := range notes {
		out[i] = n.note()
	}
	return out
}

// Vector returns the stored vector of a note, or nil in a lexical wing.
func (p *Palace) Vector(wingID, noteID string) []float32 {
	p.thaw(wingID)
	p.mu.RLock()
	defer p.mu.RUnlock()
	if w, ok := p.wings[wingID]; ok {
		// A copy, so a caller cannot change the collection.
		return w.vector(noteID)
	}
	return nil
}

// ModelOf returns the model id of wing's vectors.
func (p *Palace) ModelOf(wingID string) (string, bool) {
	p.wake(wingID)
	p.mu.RLock()
	defer p.mu.RUnlock()
	w, ok := p.wings[wingID]
	if !ok {
		return "", false
	}
	return w.model, true
}

// AddRoot records that wing was mined from root (a file or directory), so
// the wing can be rebuilt and a daemon knows where its markdown lives.
func (p *Palace) AddRoot(wingID, root string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w := p.wings[wingID]; w != nil && slices.Contains(w.roots, root) {
		return // a frozen wing stays so
	}
	p.thawLocked(wingID)
	w := p.wingLocked(wingID)
	if !slices.Contains(w.roots, root) {
		w.roots = append(w.roots, root)
		sort.Strings(w.roots)
		w.dirty = true
	}
}

// RemoveRoot forgets that wing was mined from root.
func (p *Palace) RemoveRoot(wingID, root string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.thawLocked(wingID)
	if w, ok := p.wings[wingID]; ok {
		if i := slices.Index(w.roots, root); i >= 0 {
			w.roots = slices.Delete(w.roots, i, i+1)
			w.dirty = true
		}
	}
}

func (p *Palace) wingLocked(id string) *wing {
	p.thawLocked(id)
	w, ok := p.wings[id]
	if !ok {
		w = p.newWing(id)
		w.dirty = true
		p.wings[id] = w
	}
	return w
}
