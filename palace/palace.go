package palace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
	chromem "github.com/philippgille/chromem-go"

	"github.com/memminer/memminer/embed"
)

// Files inside the palace directory.
const (
	manifestName = "manifest.json"
	lockName     = "lock"
	wingsDir     = "wings"
	wingExt      = ".wing"
	// maxWingFile bounds what Open reads for one wing (10M notes of 512-d would not fit anyway).
	maxWingFile = 8 << 30
)

// Errors callers tell apart.
var (
	// ErrLocked means another writer holds the palace lock.
	ErrLocked = errors.New("palace is locked by another writer")
	// ErrReadOnly is returned by writes to a palace opened read-only.
	ErrReadOnly = errors.New("palace is open read-only")
	// ErrModelMismatch means a wing's vectors come from another model than the palace's embedder.
	ErrModelMismatch = errors.New("wing was embedded with another model")
)

// Options configure Open.
type Options struct {
	// Embedder makes vectors; nil means lexical only (no vectors).
	Embedder embed.Embedder
	// ReadOnly opens without the writer lock: changes stay in memory and
	// Flush fails unless Lock succeeds later.
	ReadOnly bool
	// LockTimeout bounds the wait for another writer; zero means try once.
	LockTimeout time.Duration
	// Wings, when set, loads only these wings (for a search of one wing).
	Wings []string
	// Logger receives warnings; nil means slog.Default().
	Logger *slog.Logger
}

// Damage describes a wing whose file could not be read. Its roots and
// sources come from the manifest, so the wing can be rebuilt from markdown.
type Damage struct {
	Wing    string
	Err     error
	Roots   []string
	Sources []string
}

// Palace is an open palace. Its methods are safe for concurrent use.
// Changes are made in memory and written by Flush, which needs the writer
// lock (one writer per palace, enforced by a lock file).
type Palace struct {
	dir  string
	emb  embed.Embedder
	log  *slog.Logger
	lock *flock.Flock // nil when read-only

	mu      sync.RWMutex
	db      *chromem.DB
	wings   map[string]*wing
	damaged []Damage
	// manifestDirty is set when the manifest on disk no longer describes the wings.
	manifestDirty bool
	// known holds the ids of every wing on disk, loaded or not.
	known map[string]bool
	// partial is set when only some wings were loaded, lockedLate when the
	// lock was taken after loading: the manifest is then updated entry by
	// entry, never replaced.
	partial, lockedLate bool
}

type wing struct {
	id        string
	model     string
	dim       int
	roots     []string
	sources   map[string]*Source
	notes     map[string]*Note
	vecs      map[string][]float32
	coll      *chromem.Collection
	lex       *lexIndex
	lastMined time.Time
	dirty     bool
	// view is the search view of the notes (fusion.go), nil after a change.
	view atomic.Pointer[wingView]
}

// invalidate drops the wing's search view after its notes changed. The
// caller holds the palace's write lock.
func (w *wing) invalidate() { w.view.Store(nil) }

// manifest is the palace's table of contents: per wing its model, roots
// and sources. It is written after the wing files and lets a damaged wing
// be rebuilt from markdown.
type manifest struct {
	Version int                      `json:"version"`
	Wings   map[string]manifestEntry `json:"wings"`
}

type manifestEntry struct {
	Model     string           `json:"model"`
	Roots     []string         `json:"roots"`
	Notes     int              `json:"notes"`
	LastMined time.Time        `json:"last_mined"`
	Sources   []manifestSource `json:"sources"`
}

type manifestSource struct {
	Path  string    `json:"path"`
	Mtime time.Time `json:"mtime"`
	Size  int64     `json:"size"`
	Hash  string    `json:"hash"`
	Notes int       `json:"notes"`
}

// Open opens the palace in dir. A writer creates dir (0700) on first use and
// takes the lock; a reader of a missing palace gets an empty palace.
// Wing files that fail their integrity check are reported by Damaged and
// left empty, so they can be rebuilt.
func Open(ctx context.Context, dir string, opts Options) (*Palace, error) {
	p := &Palace{
		dir:   dir,
		emb:   opts.Embedder,
		log:   opts.Logger,
		db:    chromem.NewDB(),
		wings: map[string]*wing{},
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	if !opts.ReadOnly {
		// A writer rewrites the manifest, so it must know every wing.
		opts.Wings = nil
		if err := os.MkdirAll(filepath.Join(dir, wingsDir), 0o700); err != nil {
			return nil, fmt.Errorf("create palace %s: %w", dir, err)
		}
		_ = os.Chmod(dir, 0o700)
		if err := p.acquire(ctx, opts.LockTimeout); err != nil {
			return nil, err
		}
	}
	p.partial = len(opts.Wings) > 0
	if err := p.load(ctx, opts.Wings); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Palace) acquire(ctx context.Context, timeout time.Duration) error {
	path := filepath.Join(p.dir, lockName)
	l := flock.New(path, flock.SetPermissions(0o600))
	ok, err := l.TryLock()
	if err == nil && !ok && timeout > 0 {
		lctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		ok, err = l.TryLockContext(lctx, 100*time.Millisecond)
		if errors.Is(err, context.DeadlineExceeded) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("lock palace %s: %w", p.dir, err)
	}
	if !ok {
		holder := ""
		if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			holder = fmt.Sprintf(" (pid %s)", strings.TrimSpace(string(b)))
		}
		return fmt.Errorf("%w%s: waited %s; try again when it is done", ErrLocked, holder, timeout)
	}
	// Recording our pid lets a waiting writer say who holds the lock.
	_ = os.WriteFile(path, []byte(fmt.Sprintf("%d\n", os.Getpid())), 0o600)
	p.lock = l
	return nil
}

// Lock takes the writer lock of a palace opened read-only, waiting up to
// timeout. It returns an error wrapping ErrLocked when another writer has it.
func (p *Palace) Lock(ctx context.Context, timeout time.Duration) error {
	if p.lock != nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(p.dir, wingsDir), 0o700); err != nil {
		return fmt.Errorf("create palace %s: %w", p.dir, err)
	}
	if err := p.acquire(ctx, timeout); err != nil {
		return err
	}
	p.lockedLate = true
	return nil
}

// Close releases the writer lock. Unflushed changes are lost.
func (p *Palace) Close() error {
	if p.lock == nil {
		return nil
	}
	err := p.lock.Unlock()
	p.lock = nil
	return err
}

// Dir is the palace directory.
func (p *Palace) Dir() string { return p.dir }

// Model is the id of the palace's embedding model, embed.Lexical when none.
func (p *Palace) Model() string {
	if p.emb == nil {
		return embed.Lexical
	}
	return p.emb.Model()
}

// Writable reports whether the palace holds the writer lock.
func (p *Palace) Writable() bool { return p.lock != nil }

func (p *Palace) load(ctx context.Context, only []string) error {
	man, manErr := readManifest(filepath.Join(p.dir, manifestName))
	if manErr != nil {
		p.log.Warn("palace manifest unreadable; rebuilding it from the wing files", "palace", p.dir, "err", manErr)
		p.manifestDirty = true
	}
	entries, err := os.ReadDir(filepath.Join(p.dir, wingsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("open palace %s: %w", p.dir, err)
	}
	want := func(id string) bool { return len(only) == 0 || slices.Contains(only, id) }
	onDisk := map[string]bool{}
	p.known = onDisk
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), wingExt)
		if !ok || e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if _, err := NormalizeWingID(id); err != nil {
			continue
		}
		onDisk[id] = true
		if !want(id) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := p.loadWing(ctx, id); err != nil {
			p.markDamaged(id, err, man)
		}
	}
	// A wing in the manifest without a file was lost (or its write never landed).
	for id := range man.Wings {
		if !onDisk[id] && want(id) {
			p.markDamaged(id, fmt.Errorf("%w: wing file missing", ErrCorrupt), man)
		}
	}
	sort.Slice(p.damaged, func(i, j int) bool { return p.damaged[i].Wing < p.damaged[j].Wing })
	return nil
}

func (p *Palace) markDamaged(id string, err error, man manifest) {
	d := Damage{Wing: id, Err: err}
	w := p.newWing(id)
	if e, ok := man.Wings[id]; ok {
		d.Roots = e.Roots
		w.roots = slices.Clone(e.Roots)
		for _, s := range e.Sources {
			d.Sources = append(d.Sources, s.Path)
		}
	}
	// Not dirty: a damaged wing is never written back until it is rebuilt,
	// so a writer that skips the rebuild cannot replace it with nothing.
	p.wings[id] = w
	p.damaged = append(p.damaged, d)
	p.manifestDirty = true
}

func (p *Palace) loadWing(ctx context.Context, id string) error {
	data, err := readAllLimit(p.wingPath(id), maxWingFile)
	if err != nil {
		return err
	}
	m, vecs, err := decodeWing(data)
	if err != nil {
		return err
	}
	if m.ID != id {
		return fmt.Errorf("%w: file of wing %q holds wing %q", ErrCorrupt, id, m.ID)
	}
	w := p.newWing(id)
	w.model, w.dim, w.roots, w.lastMined = m.Model, m.Dim, m.Roots, m.LastMined
	for i := range m.Sources {
		s := m.Sources[i]
		w.sources[s.Path] = &s
	}
	for i := range m.Notes {
		n := m.Notes[i]
		w.notes[n.ID] = &n
		w.lex.add(n.ID, n.EmbedText())
	}
	if len(vecs) > 0 {
		docs := make([]chromem.Document, len(vecs))
		for i, v := range vecs {
			if _, ok := w.notes[m.VecIDs[i]]; !ok {
				return fmt.Errorf("%w: vector for unknown note %s", ErrCorrupt, m.VecIDs[i])
			}
			w.vecs[m.VecIDs[i]] = v
			docs[i] = chromem.Document{ID: m.VecIDs[i], Embedding: v}
		}
		if err := w.collection(p.db).AddDocuments(ctx, docs, runtime.GOMAXPROCS(0)); err != nil {
			return fmt.Errorf("load vectors of wing %s: %w", id, err)
		}
	}
	if w.model != embed.Lexical && len(w.vecs) != len(w.notes) {
		return fmt.Errorf("%w: %d vectors for %d notes", ErrCorrupt, len(w.vecs), len(w.notes))
	}
	p.wings[id] = w
	return nil
}

func (p *Palace) newWing(id string) *wing {
	return &wing{
		id:      id,
		model:   p.Model(),
		sources: map[string]*Source{},
		notes:   map[string]*Note{},
		vecs:    map[string][]float32{},
		lex:     newLexIndex(),
	}
}

// collection returns the wing's chromem collection, creating it on first use.
func (w *wing) collection(db *chromem.DB) *chromem.Collection {
	if w.coll == nil {
		// Vectors are always supplied; the embedding func only guards against
		// chromem's default (a remote API) ever being used.
		w.coll, _ = db.GetOrCreateCollection(w.id, nil, func(context.Context, string) ([]float32, error) {
			return nil, errors.New("palace supplies its own vectors")
		})
	}
	return w.coll
}

func (p *Palace) wingPath(id string) string {
	return filepath.Join(p.dir, wingsDir, id+wingExt)
}

func readManifest(path string) (manifest, error) {
	m := manifest{Wings: map[string]manifestEntry{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return manifest{Wings: map[string]manifestEntry{}}, fmt.Errorf("%w: %s: %v", ErrCorrupt, manifestName, err)
	}
	if m.Wings == nil {
		m.Wings = map[string]manifestEntry{}
	}
	return m, nil
}

// ManifestRebuilt reports whether the manifest on disk was unreadable and
// has been rebuilt in memory from the wing files, to be saved by Flush.
func (p *Palace) ManifestRebuilt() bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.manifestDirty
}

// Damaged lists the wings whose files failed to load at Open.
func (p *Palace) Damaged() []Damage {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return slices.Clone(p.damaged)
}

// ClearDamage forgets the damage of wing, once it has been rebuilt.
func (p *Palace) ClearDamage(wingID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.damaged = slices.DeleteFunc(p.damaged, func(d Damage) bool { return d.Wing == wingID })
	if w, ok := p.wings[wingID]; ok {
		w.dirty = true
	}
}

// IsDamaged reports whether wing failed to load at Open and has not been
// rebuilt since.
func (p *Palace) IsDamaged(wingID string) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.isDamagedLocked(wingID)
}

// Roots lists the paths wing was mined from.
func (p *Palace) Roots(wingID string) []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if w, ok := p.wings[wingID]; ok {
		return slices.Clone(w.roots)
	}
	return nil
}

func (p *Palace) isDamagedLocked(id string) bool {
	return slices.ContainsFunc(p.damaged, func(d Damage) bool { return d.Wing == id })
}

// Wings summarises every wing, sorted by id.
func (p *Palace) Wings() []WingInfo {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make([]WingInfo, 0, len(p.wings))
	for _, w := range p.wings {
		out = append(out, WingInfo{ID: w.id, Notes: len(w.notes), Sources: len(w.sources), Model: w.model, LastMined: w.lastMined, Roots: slices.Clone(w.roots)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// HasWing reports whether the palace has wing id.
func (p *Palace) HasWing(id string) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	_, ok := p.wings[id]
	return ok
}

// Source returns what the palace knows of the file at path in wing.
func (p *Palace) Source(wingID, path string) (Source, bool) {
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

// Sources lists the paths of wing's sources, sorted.
func (p *Palace) Sources(wingID string) []Source {
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
	p.mu.RLock()
	defer p.mu.RUnlock()
	w, ok := p.wings[wingID]
	if !ok {
		return nil
	}
	out := make([]Note, 0, len(w.notes))
	for _, n := range w.notes {
		out = append(out, *n)
	}
	sortNotes(out)
	return out
}

func sortNotes(ns []Note) {
	sort.Slice(ns, func(i, j int) bool {
		a, b := ns[i], ns[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.ID < b.ID
	})
}

// Vector returns the stored vector of a note, or nil in a lexical wing.
func (p *Palace) Vector(wingID, noteID string) []float32 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if w, ok := p.wings[wingID]; ok {
		return w.vecs[noteID]
	}
	return nil
}

// ModelOf returns the model id of wing's vectors.
func (p *Palace) ModelOf(wingID string) (string, bool) {
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
	if w, ok := p.wings[wingID]; ok {
		if i := slices.Index(w.roots, root); i >= 0 {
			w.roots = slices.Delete(w.roots, i, i+1)
			w.dirty = true
		}
	}
}

func (p *Palace) wingLocked(id string) *wing {
	w, ok := p.wings[id]
	if !ok {
		w = p.newWing(id)
		w.dirty = true
		p.wings[id] = w
	}
	return w
}

// Change counts what one update did to a wing's notes.
type Change struct {
	Added, Removed, Unchanged int
}

// ApplySource makes notes the content of src in wing: notes no longer in
// the file leave, new ones are embedded and added, the rest keep their
// vectors (their line numbers are updated). Note ids must already be set.
// It returns ErrModelMismatch when the wing holds another model's vectors;
// call Reembed first.
func (p *Palace) ApplySource(ctx context.Context, wingID string, src Source, notes []Note) (Change, error) {
	p.mu.RLock()
	w := p.wings[wingID]
	var fresh []*Note
	for i := range notes {
		// A note the wing has without a vector (in a wing of vectors) is
		// embedded again rather than trusted.
		if w == nil || w.notes[notes[i].ID] == nil || (w.dim > 0 && w.vecs[notes[i].ID] == nil) {
			fresh = append(fresh, &notes[i])
		}
	}
	mismatch := w != nil && w.model != p.Model() && len(w.notes) > 0
	p.mu.RUnlock()
	if mismatch {
		return Change{}, fmt.Errorf("%w: wing %s has %s vectors, palace model is %s", ErrModelMismatch, wingID, w.model, p.Model())
	}
	vecs, err := p.embedNotes(ctx, fresh)
	if err != nil {
		return Change{}, fmt.Errorf("embed %s: %w", src.Path, err)
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	w = p.wingLocked(wingID)
	if len(w.notes) == 0 {
		w.model, w.dim = p.Model(), 0
	}
	// Check before changing anything: a failed update leaves the wing as it was.
	if err := w.checkDims(vecs); err != nil {
		return Change{}, fmt.Errorf("embed %s: %w", src.Path, err)
	}
	w.invalidate()
	var ch Change
	keep := make(map[string]bool, len(notes))
	src.NoteIDs = make([]string, 0, len(notes))
	for i := range notes {
		n := notes[i]
		n.Wing, n.Source = wingID, src.Path
		keep[n.ID] = true
		src.NoteIDs = append(src.NoteIDs, n.ID)
		if old, ok := w.notes[n.ID]; ok {
			ch.Unchanged++
			*old = n
			continue
		}
		w.notes[n.ID] = &n
		w.lex.add(n.ID, n.EmbedText())
		ch.Added++
	}
	if old, ok := w.sources[src.Path]; ok {
		for _, id := range old.NoteIDs {
			if !keep[id] {
				w.removeNote(id)
				ch.Removed++
			}
		}
	}
	w.addVectors(p.db, fresh, vecs)
	s := src
	w.sources[src.Path] = &s
	w.lastMined = time.Now().UTC()
	w.dirty = true
	return ch, nil
}

// TouchSource records a new mtime and size for a source whose content did
// not change (same hash), and when it was checked, so the next cheap check
// can pass.
func (p *Palace) TouchSource(wingID, path string, mtime time.Time, size int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
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
	w, ok := p.wings[wingID]
	if !ok {
		return 0, nil
	}
	s, ok := w.sources[path]
	if !ok {
		return 0, nil
	}
	for _, id := range s.NoteIDs {
		w.removeNote(id)
	}
	delete(w.sources, path)
	w.dirty = true
	w.invalidate()
	return len(s.NoteIDs), nil
}

func (w *wing) removeNote(id string) {
	delete(w.notes, id)
	w.lex.remove(id)
	if _, ok := w.vecs[id]; ok {
		delete(w.vecs, id)
		// nil where: an empty map would delete every document (DESIGN.md).
		_ = w.coll.Delete(context.Background(), nil, nil, id)
	}
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

// addVectors stores vectors of notes; their dimensions were checked.
func (w *wing) addVectors(db *chromem.DB, notes []*Note, vecs [][]float32) {
	if len(vecs) == 0 {
		return
	}
	c := w.collection(db)
	for i, n := range notes {
		if w.dim == 0 {
			w.dim = len(vecs[i])
		}
		w.vecs[n.ID] = vecs[i]
		// AddDocument fails only for an empty id or vector, which cannot
		// happen here; the vector is normalised, so chromem keeps it as is.
		_ = c.AddDocument(context.Background(), chromem.Document{ID: n.ID, Embedding: vecs[i]})
	}
}

// embedNotes embeds notes' texts, returning normalised vectors (nil for a
// lexical palace).
func (p *Palace) embedNotes(ctx context.Context, notes []*Note) ([][]float32, error) {
	if p.emb == nil || len(notes) == 0 {
		return nil, nil
	}
	texts := make([]string, len(notes))
	for i, n := range notes {
		texts[i] = n.EmbedText()
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
	p.mu.RLock()
	w, ok := p.wings[wingID]
	var notes []*Note
	if ok {
		for _, n := range w.notes {
			c := *n
			notes = append(notes, &c)
		}
	}
	p.mu.RUnlock()
	if !ok {
		return 0, nil
	}
	vecs, err := p.embedNotes(ctx, notes)
	if err != nil {
		return 0, fmt.Errorf("re-embed wing %s: %w", wingID, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	probe := &wing{id: w.id}
	if err := probe.checkDims(vecs); err != nil {
		return 0, fmt.Errorf("re-embed wing %s: %w", wingID, err)
	}
	if w.coll != nil {
		_ = p.db.DeleteCollection(w.id)
		w.coll = nil
	}
	w.invalidate()
	w.vecs = map[string][]float32{}
	w.dim = 0
	w.model = p.Model()
	w.dirty = true
	w.addVectors(p.db, notes, vecs)
	return len(notes), nil
}

// Flush writes every changed wing atomically, then the manifest. After a
// crash the palace on disk is the old state or the new one for each wing.
func (p *Palace) Flush() error {
	if p.lock == nil {
		return ErrReadOnly
	}
	type pending struct {
		w    *wing
		meta *wingMeta
		vecs [][]float32
	}
	// Snapshot under the lock, encode and write outside it, so searches
	// are not held up by disk writes.
	p.mu.Lock()
	var todo []pending
	for _, w := range p.wings {
		if w.dirty && !p.isDamagedLocked(w.id) {
			m, vecs := w.snapshot()
			todo = append(todo, pending{w, m, vecs})
			w.dirty = false
		}
	}
	manifestDirty := p.manifestDirty || len(todo) > 0
	p.manifestDirty = false
	man := p.manifestLocked()
	// A palace that was read before it took the lock (partial, or locked
	// later to save a repair) may hold stale wings: only what it writes now
	// is news. Entries for wings not loaded, or damaged, stay as they are on
	// disk: they are what a later rebuild needs.
	onlyWritten := p.partial || p.lockedLate
	keepOthers := onlyWritten || len(p.damaged) > 0
	p.mu.Unlock()
	if keepOthers {
		onDisk, err := readManifest(filepath.Join(p.dir, manifestName))
		if err != nil && p.partial {
			// A palace that loaded some wings cannot rebuild the manifest
			// of all of them: leave that to a full writer.
			p.mu.Lock()
			p.manifestDirty = true
			p.mu.Unlock()
			manifestDirty = false
		}
		if err == nil {
			written := map[string]bool{}
			for _, t := range todo {
				written[t.w.id] = true
			}
			for id, e := range man.Wings {
				if !onlyWritten || written[id] {
					onDisk.Wings[id] = e
				}
			}
			man = onDisk
		}
	}

	redirty := func(from int) {
		p.mu.Lock()
		for _, t := range todo[from:] {
			t.w.dirty = true
		}
		p.manifestDirty = true
		p.mu.Unlock()
	}
	for i, t := range todo {
		data, err := encodeWing(t.meta, t.vecs)
		if err == nil {
			err = writeFileAtomic(p.wingPath(t.w.id), data)
		}
		if err != nil {
			redirty(i)
			return fmt.Errorf("write wing %s: %w", t.w.id, err)
		}
	}
	if !manifestDirty {
		return nil
	}
	if err := writeManifest(filepath.Join(p.dir, manifestName), man); err != nil {
		redirty(len(todo))
		return err
	}
	return nil
}

func (w *wing) snapshot() (*wingMeta, [][]float32) {
	m := &wingMeta{ID: w.id, Model: w.model, Dim: w.dim, Roots: slices.Clone(w.roots), LastMined: w.lastMined}
	for _, s := range w.sources {
		m.Sources = append(m.Sources, *s)
	}
	sort.Slice(m.Sources, func(i, j int) bool { return m.Sources[i].Path < m.Sources[j].Path })
	for _, n := range w.notes {
		m.Notes = append(m.Notes, *n)
	}
	sortNotes(m.Notes)
	var vecs [][]float32
	for _, n := range m.Notes {
		if v, ok := w.vecs[n.ID]; ok {
			m.VecIDs = append(m.VecIDs, n.ID)
			vecs = append(vecs, v)
		}
	}
	return m, vecs
}

func (p *Palace) manifestLocked() manifest {
	m := manifest{Version: 1, Wings: map[string]manifestEntry{}}
	for _, w := range p.wings {
		if p.isDamagedLocked(w.id) {
			continue
		}
		e := manifestEntry{Model: w.model, Roots: slices.Clone(w.roots), Notes: len(w.notes), LastMined: w.lastMined}
		for _, s := range w.sources {
			e.Sources = append(e.Sources, manifestSource{Path: s.Path, Mtime: s.Mtime, Size: s.Size, Hash: s.Hash, Notes: len(s.NoteIDs)})
		}
		sort.Slice(e.Sources, func(i, j int) bool { return e.Sources[i].Path < e.Sources[j].Path })
		m.Wings[w.id] = e
	}
	return m
}

func writeManifest(path string, m manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, append(data, '\n')); err != nil {
		return fmt.Errorf("write palace manifest: %w", err)
	}
	return nil
}

// Bytes is the palace's size on disk.
func (p *Palace) Bytes() int64 {
	var n int64
	_ = filepath.WalkDir(p.dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
