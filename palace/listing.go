package palace

import (
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/memminer/memminer/palace/internal/manifest"
	"github.com/memminer/memminer/palace/internal/wingfile"
)

// A listing is what a miner found listing a wing's root directory: the
// directory's seal when it was listed, and the paths of the files the
// listing gave. The miner records one only when the directory's change
// time had settled before it listed it and the listing cannot change
// without the directory's own stat changing (no subdirectory it walks, no
// link it follows). The manifest keeps it while the paths are the wing's
// sources', so the next mine may take a directory whose stat still
// matches as listed, and stat its files alone.
type listing struct {
	seal  wingfile.Seal
	paths []string
}

// ListedAs reports whether dir, the stat of the wing's only root taken
// now (not following a link), is the root as it was when a listing of it
// found exactly the wing's sources (Sources' paths, in order).
func (w ManifestWing) ListedAs(dir fs.FileInfo) bool {
	return w.listed != nil && w.listed.Matches(dir)
}

// SetListing records that a listing of wing id's root, whose stat was dir
// when it was listed, found the files at paths (sorted), for the manifest:
// it is kept while those are the wing's sources. The caller has made sure
// the directory's stat would show any change to what the listing found.
func (p *Palace) SetListing(id string, dir fs.FileInfo, paths []string) {
	s, ok := wingfile.SealOf(dir)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.listings[id]; ok && old.seal == s && slices.Equal(old.paths, paths) {
		return
	}
	p.listings[id] = listing{seal: s, paths: slices.Clone(paths)}
	p.manifestDirty = true
	if e, ok := p.unloaded[id]; ok {
		e.Listed = p.listedLocked(id, e.Sources)
		p.unloaded[id] = e.Stamped()
	}
}

// listedLocked is the seal of wing id's listing when the listing found
// exactly sources, nil otherwise (p.mu held).
func (p *Palace) listedLocked(id string, sources []manifest.Source) *wingfile.Seal {
	l, ok := p.listings[id]
	if !ok || len(l.paths) != len(sources) {
		return nil
	}
	for i, s := range sources {
		if s.Path != l.paths[i] {
			return nil
		}
	}
	s := l.seal
	return &s
}

// ChangeTime returns info's change time, false when the system does not
// tell it (then no listing is recorded).
func ChangeTime(info os.FileInfo) (time.Time, bool) {
	s, ok := wingfile.SealOf(info)
	return time.Unix(0, s.Ctime), ok
}
