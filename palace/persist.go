package palace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	chromem "github.com/philippgille/chromem-go"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace/internal/manifest"
	"github.com/memminer/memminer/palace/internal/wingfile"
)

// Damage describes a wing whose file could not be read. Its roots and
// sources come from the manifest, so the wing can be rebuilt from markdown.
type Damage struct {
	Wing    string
	Err     error
	Roots   []string
	Sources []string
}

// ManifestWing is what the manifest says of a wing, as Options.Unchanged
// is given it: its roots, and each source's head as last mined (Path,
// Mtime, Size, Hash, Mined, Governed, NoteFormat and Notes).
type ManifestWing struct {
	Roots   []string
	Sources []SourceHead
	listed  *wingfile.Seal
}

// manifestWing is what e says of its wing, as Options.Unchanged is given it.
func manifestWing(e manifest.Entry) ManifestWing {
	w := ManifestWing{Roots: e.Roots, Sources: make([]SourceHead, len(e.Sources)), listed: e.Listed}
	for i, s := range e.Sources {
		w.Sources[i] = SourceHead{Source: Source{Path: s.Path, Mtime: s.Mtime, Size: s.Size, Hash: s.Hash, Mined: s.Mined,
			Governed: s.Governed, NoteFormat: s.NoteFormat}, Notes: s.Notes}
	}
	return w
}

// leaveUnloaded reports whether load may leave wing id, whose manifest
// entry e is as its writer wrote it, unloaded (Options.Unchanged).
func (p *Palace) leaveUnloaded(id string, e manifest.Entry) bool {
	if p.unchanged == nil || p.lock == nil || e.Seal == nil || e.Model != p.Model() {
		return false
	}
	info, err := os.Stat(p.wingPath(id))
	return err == nil && e.Seal.Matches(info) && p.unchanged(id, manifestWing(e))
}

// load reads the manifest and the wing files (only those named, if any).
// listed is wings/ as acquire listed it, nil to list it here.
func (p *Palace) load(ctx context.Context, only []string, listed []fs.DirEntry) error {
	man, manErr := manifest.Read(filepath.Join(p.dir, manifestName))
	if manErr != nil {
		p.log.Warn("palace manifest unreadable; rebuilding it from the wing files", "palace", p.dir, "err", manErr)
		p.manifestDirty = true
	}
	want := func(id string) bool { return len(only) == 0 || slices.Contains(only, id) }
	asWritten := p.takeManifest(man, len(only) == 0)
	entries, err := listed, error(nil)
	if listed == nil {
		entries, err = os.ReadDir(filepath.Join(p.dir, wingsDir))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		// wings/ is no directory (or unreadable): every wing the
		// manifest lists is damaged, and rebuilt from its markdown.
		p.log.Warn("palace wings directory unreadable; its wings are rebuilt from markdown", "palace", p.dir, "err", err)
		for id := range man.Wings {
			if want(id) {
				p.markDamaged(id, fmt.Errorf("%w: wings directory unreadable: %v", ErrCorrupt, err), man)
			}
		}
		p.known = map[string]bool{}
		sort.Slice(p.damaged, func(i, j int) bool { return p.damaged[i].Wing < p.damaged[j].Wing })
		return nil
	}
	wrongKind, err := p.loadWings(ctx, entries, man, asWritten, want)
	if err != nil {
		return err
	}
	p.markMissing(man, wrongKind, want)
	sort.Slice(p.damaged, func(i, j int) bool { return p.damaged[i].Wing < p.damaged[j].Wing })
	return nil
}

// takeManifest takes the manifest's seals and, for a writer, its
// listings, and returns which entries are as their writer wrote them
// (their digest holds): only those may leave a wing unloaded. A reader
// never leaves one. An entry that is not makes the manifest be written
// again when every wing is loaded (all).
func (p *Palace) takeManifest(man manifest.Manifest, all bool) (asWritten map[string]bool) {
	asWritten = map[string]bool{}
	for id, e := range man.Wings {
		if e.Seal != nil {
			p.seals[id] = e.Seal
		}
		if p.lock == nil {
			continue
		}
		asWritten[id] = e.AsWritten()
		if asWritten[id] && e.Listed != nil {
			// Kept only as its writer wrote it: one edited by hand would
			// be written again with a digest of its own.
			l := listing{seal: *e.Listed, paths: make([]string, len(e.Sources))}
			for i, s := range e.Sources {
				l.paths[i] = s.Path
			}
			p.listings[id] = l
		}
		if !asWritten[id] && all {
			// An earlier build's manifest, or one edited since: written
			// again, so that the next mine may leave its unchanged wings
			// unloaded.
			p.manifestDirty = true
		}
	}
	return asWritten
}

// loadWings loads the wing files of wings/ that want names, leaving
// unloaded those a writer may, and marks damaged those that do not load;
// it records the wings on disk (p.known) and returns the kind of each
// entry named as a wing file that is none (a directory, a FIFO).
func (p *Palace) loadWings(ctx context.Context, entries []fs.DirEntry, man manifest.Manifest, asWritten map[string]bool, want func(string) bool) (wrongKind map[string]string, err error) {
	p.known = map[string]bool{}
	wrongKind = map[string]string{}
	for _, e := range entries {
		id, ok := wingFileID(e.Name())
		if !ok {
			continue
		}
		if kind := notWingFile(e.Type()); kind != "" {
			// Never opened: a FIFO would block the read.
			wrongKind[id] = kind
			continue
		}
		p.known[id] = true
		if !want(id) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e, ok := man.Wings[id]; ok && asWritten[id] && p.leaveUnloaded(id, e) {
			if p.unloaded == nil {
				p.unloaded = map[string]manifest.Entry{}
			}
			p.unloaded[id] = e
			p.frozen.Add(1)
			continue
		}
		// Frozen, as search reads it: whatever reads more of it, or
		// changes it, thaws it first, so a mine reads whole only the
		// wings whose files changed.
		if err := p.loadWing(ctx, id, true); err != nil {
			p.markDamaged(id, err, man)
		}
	}
	return wrongKind, nil
}

// markMissing marks damaged each wing of the manifest that want names
// and that has no file: it was lost (or its write never landed), or its
// name is taken by something else.
func (p *Palace) markMissing(man manifest.Manifest, wrongKind map[string]string, want func(string) bool) {
	for id := range man.Wings {
		if p.known[id] || !want(id) {
			continue
		}
		cause := fmt.Errorf("%w: wing file missing", ErrCorrupt)
		if kind := wrongKind[id]; kind != "" {
			cause = fmt.Errorf("%w: %s is a %s, not a wing file", ErrCorrupt, p.wingPath(id), kind)
		} else if a, ok := p.setAside[id]; ok {
			cause = fmt.Errorf("%w: %s was a %s, not a wing file; moved aside to %s", ErrCorrupt, p.wingPath(id), a.kind, a.to)
		}
		p.markDamaged(id, cause, man)
	}
}

// wingFileID is the id of the wing whose file is named name in wings/,
// if it is one: dot-prefixed names are the palace's temp files.
func wingFileID(name string) (string, bool) {
	id, ok := strings.CutSuffix(name, wingExt)
	if !ok || strings.HasPrefix(name, ".") {
		return "", false
	}
	if _, err := NormalizeWingID(id); err != nil {
		return "", false
	}
	return id, true
}

// notWingFile names the type t of an entry named as a wing file when it
// cannot be read as one ("directory"), or is "" when it can: a regular
// file, or a symlink, which is followed.
func notWingFile(t fs.FileMode) string {
	if t.IsRegular() || t&fs.ModeSymlink != 0 {
		return ""
	}
	return hivefile.Kind(t)
}

func (p *Palace) markDamaged(id string, err error, man manifest.Manifest) {
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
	delete(p.seals, id)
	p.damaged = append(p.damaged, d)
	p.manifestDirty = true
}

// loadWing loads the file of wing id: a version 3 or 4 file frozen when
// frozen is set (and its notes were classified by this govern.Version),
// else whole; an older one whole, and marked to be written again when the
// palace holds the lock.
func (p *Palace) loadWing(ctx context.Context, id string, frozen bool) error {
	v, err := openWing(p.wingPath(id), maxWingFile, p.seals[id])
	if err != nil {
		return err
	}
	if v == nil {
		delete(p.seals, id)
		if err := p.loadOldWing(ctx, id); err != nil {
			return err
		}
		p.wings[id].dirty = p.lock != nil
		return nil
	}
	defer v.f.Close()
	fz := v.fz
	if fz.id != id {
		return fmt.Errorf("%w: file of wing %q holds wing %q", ErrCorrupt, id, fz.id)
	}
	if frozen && fz.governed == govern.Version {
		// A writer checks the file whole, unless it is sealed; a reader
		// has checked what every search reads.
		if p.lock != nil {
			if err := v.verify(); err != nil {
				return err
			}
		}
		p.checked(id, v)
		w := &wing{id: id, model: fz.model, dim: fz.dim, roots: fz.roots, lastMined: fz.lastMined, lex: fz.index, fz: fz}
		w.view.Store(fz.view)
		p.wings[id] = w
		p.frozen.Add(1)
		return nil
	}
	m, err := v.readMeta()
	if err != nil {
		return err
	}
	p.checked(id, v)
	w := p.wingOf(m)
	w.lex = fz.thawIndex(m.Notes)
	var docs []chromem.Document
	vecs := fz.vectors()
	for d, n := range m.Notes {
		if vecs[d] != nil {
			docs = append(docs, chromem.Document{ID: n.id, Embedding: vecs[d]})
		}
	}
	if w.model != embed.Lexical && len(docs) != w.noteCount() {
		return fmt.Errorf("%w: %d vectors for %d notes", ErrCorrupt, len(docs), w.noteCount())
	}
	return p.addWing(ctx, w, docs)
}

// checked records the seal of wing id's file v, when it is sealed or a
// writer checked it whole (verify), for the next manifest; a file that was
// not is checked again at every open.
func (p *Palace) checked(id string, v *wingFileV3) {
	switch {
	case v.sealed:
	case p.lock != nil && v.seal != nil:
		p.seals[id] = v.seal
		p.manifestDirty = true
	default:
		delete(p.seals, id)
	}
}

// wingOf makes the wing of m, its index empty, and gives the notes of a
// file classified by another govern.Version their governance anew (the
// notes are the load's own yet: their governance may change).
func (p *Palace) wingOf(m *wingMeta) *wing {
	w := p.newWing(m.ID)
	w.model, w.dim, w.roots, w.lastMined = m.Model, m.Dim, m.Roots, m.LastMined
	for i := range m.Sources {
		s := m.Sources[i]
		w.sources[s.Path] = &s
	}
	files := map[string]govern.File{}
	for _, n := range m.Notes {
		if s := w.sources[n.path()]; s != nil && s.Governed != govern.Version {
			g := reclassify(files, s, n.heading.Value(), n.text)
			n.gov = internGovernance(&g)
		}
	}
	return w
}

// thaw makes the frozen wings among ids, every one when none are given,
// whole: their files are read again (a writer may have replaced them
// since, which the wing then shows). A wing that no longer reads is
// damaged. The caller holds none of the palace's locks.
func (p *Palace) thaw(ids ...string) {
	if p.frozen.Load() == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.thawLocked(ids...)
}

// thawLocked is thaw for a caller holding the write lock.
func (p *Palace) thawLocked(ids ...string) {
	if p.frozen.Load() == 0 {
		return
	}
	if len(ids) == 0 {
		ids = append(slices.Collect(maps.Keys(p.wings)), slices.Collect(maps.Keys(p.unloaded))...)
	}
	for _, id := range ids {
		w := p.wings[id]
		if _, ok := p.unloaded[id]; ok {
			delete(p.unloaded, id)
		} else if w == nil || w.fz == nil {
			continue
		}
		p.frozen.Add(-1)
		if err := p.loadWing(context.Background(), id, false); err != nil {
			man, _ := manifest.Read(filepath.Join(p.dir, manifestName))
			p.log.Warn("palace wing unreadable; it is rebuilt from markdown", "wing", id, "err", err)
			p.markDamaged(id, err, man)
		}
	}
}

// loadOldWing loads a wing file of version 1 or 2, whose notes are
// indexed anew.
func (p *Palace) loadOldWing(ctx context.Context, id string) error {
	m, vecs, err := readWing(p.wingPath(id), maxWingFile)
	if err != nil {
		return err
	}
	if m.ID != id {
		return fmt.Errorf("%w: file of wing %q holds wing %q", ErrCorrupt, id, m.ID)
	}
	w := p.wingOf(m)
	for _, n := range m.Notes {
		w.lex.addNote(n)
	}
	w.lex.pack()
	docs := make([]chromem.Document, len(vecs))
	ids := make(map[string]bool, len(vecs))
	for i, v := range vecs {
		if w.note(m.VecIDs[i]) == nil {
			return fmt.Errorf("%w: vector for unknown note %s", ErrCorrupt, m.VecIDs[i])
		}
		ids[m.VecIDs[i]] = true
		docs[i] = chromem.Document{ID: m.VecIDs[i], Embedding: v}
	}
	if w.model != embed.Lexical && len(ids) != w.noteCount() {
		return fmt.Errorf("%w: %d vectors for %d notes", ErrCorrupt, len(ids), w.noteCount())
	}
	return p.addWing(ctx, w, docs)
}

// addWing adds the loaded wing w, with its vectors docs.
func (p *Palace) addWing(ctx context.Context, w *wing, docs []chromem.Document) error {
	id := w.id
	// One by one, in this goroutine: chromem-go's AddDocuments starts a
	// goroutine per document, to embed texts, which the palace never asks
	// of it.
	for _, d := range docs {
		if err := w.vecs.add(ctx, p.db, id, d.ID, d.Embedding); err != nil {
			// A wing that failed to load must not leave vectors behind for
			// the empty wing that replaces it.
			w.vecs.drop(p.db, id)
			return fmt.Errorf("load vectors of wing %s: note %s: %w", id, d.ID, err)
		}
	}
	p.wings[id] = w
	return nil
}

// reclassify decides the governance of a note whose file was classified
// by another govern.Version, or by none (a palace mined before notes had a
// status), from what the palace holds: its text, heading and the file's
// frontmatter scalars. Until the next mine re-classifies the file, reading
// such a palace thus never lets a superseded note through as current.
// files caches each file's parsed frontmatter.
func reclassify(files map[string]govern.File, src *Source, heading, text string) govern.Note {
	f, ok := files[src.Path]
	if !ok {
		fm := make(map[string]any, len(src.Frontmatter))
		for k, v := range src.Frontmatter {
			fm[k] = v
			// The miner keeps YAML timestamps as RFC 3339 text.
			if t, err := time.Parse(time.RFC3339, v); err == nil {
				fm[k] = t
			}
		}
		f, _ = govern.ParseFile(fm)
		if hive.IsInboxFile(src.Path) {
			f = govern.InInbox(f) // as mine classifies it
		}
		files[src.Path] = f
	}
	return govern.Classify(f, heading, text)
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

func (p *Palace) isDamagedLocked(id string) bool {
	return slices.ContainsFunc(p.damaged, func(d Damage) bool { return d.Wing == id })
}

// Flush writes every changed wing atomically, then the manifest. After a
// crash the palace on disk is the old state or the new one for each wing.
// Nothing is written once the directory is not the one locked (CheckDir).
func (p *Palace) Flush() error {
	if err := p.CheckDir(); err != nil {
		return err
	}
	type pending struct {
		w    *wing
		snap *wingSnapshot
	}
	// Snapshot under the lock, encode and write outside it, so searches
	// are not held up by disk writes.
	p.mu.Lock()
	var todo []pending
	for _, w := range p.wings {
		// A frozen wing is never dirty: changing it thaws it.
		if w.dirty && w.fz == nil && !p.isDamagedLocked(w.id) {
			s, err := w.freezeSnapshot(context.Background())
			if err != nil {
				for _, t := range todo {
					t.w.dirty = true
				}
				p.mu.Unlock()
				return fmt.Errorf("write wing %s: %w", w.id, err)
			}
			todo = append(todo, pending{w, s})
			w.dirty = false
		}
	}
	manifestDirty := p.manifestDirty || len(todo) > 0
	p.manifestDirty = false
	man := p.manifestLocked()
	for id, e := range p.unloaded {
		man.Wings[id] = e
	}
	// A palace that was read before it took the lock (partial, or locked
	// later to save a repair) may hold stale wings: only what it writes now
	// is news. Entries for wings not loaded, or damaged, stay as they are on
	// disk: they are what a later rebuild needs.
	onlyWritten := p.partial || p.lockedLate
	keepOthers := onlyWritten || len(p.damaged) > 0
	// A wing removed and then mined again keeps its new file.
	removed := slices.Sorted(maps.Keys(p.removed))
	removed = slices.DeleteFunc(removed, func(id string) bool { return p.wings[id] != nil })
	p.removed = nil
	p.mu.Unlock()
	if keepOthers {
		onDisk, err := manifest.Read(filepath.Join(p.dir, manifestName))
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
			for _, id := range removed {
				delete(onDisk.Wings, id)
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
		if len(removed) > 0 && p.removed == nil {
			p.removed = map[string]bool{}
		}
		for _, id := range removed {
			p.removed[id] = true
		}
		p.mu.Unlock()
	}
	for i, t := range todo {
		err := atomicfile.WriteFunc(p.wingPath(t.w.id), 0o600, func(f *os.File) error {
			return writeWingV3(f, t.snap)
		})
		if err != nil {
			redirty(i)
			return fmt.Errorf("write wing %s: %w", t.w.id, err)
		}
		// Taken after the rename, which changes the file's change time.
		s := wingfile.SealFile(p.wingPath(t.w.id))
		p.mu.Lock()
		p.seals[t.w.id] = s
		p.mu.Unlock()
		if e, ok := man.Wings[t.w.id]; ok {
			e.Seal = s
			man.Wings[t.w.id] = e.Stamped()
		}
	}
	if !manifestDirty {
		return nil
	}
	if err := manifest.Write(filepath.Join(p.dir, manifestName), man); err != nil {
		redirty(len(todo))
		return err
	}
	return p.deleteRemoved(removed)
}

func (p *Palace) manifestLocked() manifest.Manifest {
	m := manifest.Manifest{Version: 1, Wings: map[string]manifest.Entry{}}
	for _, w := range p.wings {
		if p.isDamagedLocked(w.id) {
			continue
		}
		e := manifest.Entry{Model: w.model, Roots: slices.Clone(w.roots), Notes: w.noteCount(), LastMined: w.lastMined, Seal: p.seals[w.id]}
		for _, s := range w.sources {
			e.Sources = append(e.Sources, manifestSourceOf(s, len(s.NoteIDs)))
		}
		if w.fz != nil {
			for _, s := range w.fz.sources {
				e.Sources = append(e.Sources, manifestSourceOf(&s.Source, s.Notes))
			}
		}
		sort.Slice(e.Sources, func(i, j int) bool { return e.Sources[i].Path < e.Sources[j].Path })
		e.Listed = p.listedLocked(w.id, e.Sources)
		m.Wings[w.id] = e.Stamped()
	}
	return m
}

// manifestSourceOf is the manifest's entry of s, which holds notes notes.
func manifestSourceOf(s *Source, notes int) manifest.Source {
	return manifest.Source{Path: s.Path, Mtime: s.Mtime, Size: s.Size, Hash: s.Hash, Notes: notes,
		Mined: s.Mined, Governed: s.Governed, NoteFormat: s.NoteFormat}
}
