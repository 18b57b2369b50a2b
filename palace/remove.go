package palace

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// RemovedWing tells what RemoveWing took out of the palace.
type RemovedWing struct {
	Wing    string   `json:"wing"`
	Notes   int      `json:"notes"`
	Sources []string `json:"sources"`
	Roots   []string `json:"roots"`
}

// RemoveWing takes wing id out of the palace: its notes, vectors, search
// index and manifest entry. The next Flush writes the manifest without it,
// then deletes its wing file. A damaged wing can be removed too. The error
// matches ErrUnknownWing when the palace has no such wing, ErrReadOnly
// when the palace is not open for writing.
func (p *Palace) RemoveWing(id string) (RemovedWing, error) {
	if p.lock == nil {
		return RemovedWing{}, ErrReadOnly
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.thawLocked(id)
	w, ok := p.wings[id]
	if !ok {
		return RemovedWing{}, UnknownWingError(id, slices.Sorted(maps.Keys(p.wings)))
	}
	r := RemovedWing{Wing: id, Notes: w.noteCount(), Roots: append([]string{}, w.roots...), Sources: []string{}}
	for path := range w.sources {
		r.Sources = append(r.Sources, path)
	}
	sort.Strings(r.Sources)
	w.vecs.drop(p.db, id)
	delete(p.wings, id)
	delete(p.known, id)
	p.damaged = slices.DeleteFunc(p.damaged, func(d Damage) bool { return d.Wing == id })
	if p.removed == nil {
		p.removed = map[string]bool{}
	}
	p.removed[id] = true
	p.manifestDirty = true
	return r, nil
}

// CheckWing returns nil when the palace has wing id, else the error
// RemoveWing and Search give for it (matching ErrUnknownWing).
func (p *Palace) CheckWing(id string) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if _, ok := p.wings[id]; ok {
		return nil
	}
	return UnknownWingError(id, slices.Sorted(maps.Keys(p.wings)))
}

// UnknownWingError is the one error for a wing the palace does not have,
// matching ErrUnknownWing; known are the wings it has, sorted.
func UnknownWingError(id string, known []string) error {
	if len(known) == 0 {
		return fmt.Errorf("%w %q: the palace has no wings yet", ErrUnknownWing, id)
	}
	return fmt.Errorf("%w %q (known wings: %s)", ErrUnknownWing, id, strings.Join(known, ", "))
}

// deleteRemoved deletes the files of wings removed since the last Flush,
// once the manifest no longer lists them. A crash before this leaves a
// wing file the manifest does not list: the palace loads it again, and
// removing it again finishes the job.
func (p *Palace) deleteRemoved(ids []string) error {
	for _, id := range ids {
		if err := os.Remove(p.wingPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove wing %s: %w", id, err)
		}
	}
	return nil
}

// HasWings reports whether the palace in dir has any wing file, without
// loading it: a command can tell an empty palace before it loads a model.
func HasWings(dir string) bool {
	entries, err := os.ReadDir(filepath.Join(dir, wingsDir))
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist)
	}
	for _, e := range entries {
		if _, ok := wingFileID(e.Name()); ok {
			return true
		}
	}
	return false
}
