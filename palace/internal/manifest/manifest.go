// Package manifest is the palace's manifest.json: each wing's model,
// roots and sources as last mined, the seal of its file and of its
// root's listing, and a digest of each entry as its writer wrote it. It is
// written after the wing files and lets a damaged wing be rebuilt from
// markdown. What the palace does with it (which wings it leaves unloaded,
// when it writes it) is package palace's.
package manifest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/palace/internal/wingfile"
)

// Manifest is the manifest of a palace.
type Manifest struct {
	Version int              `json:"version"`
	Wings   map[string]Entry `json:"wings"`
}

// Entry is what the manifest says of one wing.
type Entry struct {
	Model     string    `json:"model"`
	Roots     []string  `json:"roots"`
	Notes     int       `json:"notes"`
	LastMined time.Time `json:"last_mined"`
	Sources   []Source  `json:"sources"`
	// Seal is the wing file's as its writer wrote or checked it (wingfile.Seal).
	Seal *wingfile.Seal `json:"seal,omitempty"`
	// Listed is the seal of the wing's root when a listing of it found
	// exactly Sources (palace's listing.go).
	Listed *wingfile.Seal `json:"listed,omitempty"`
	// Digest is a hash of the rest of the entry as its writer wrote it
	// (Stamped): an entry edited since (a path changed by hand) is not
	// trusted to leave its wing unloaded. Zero in earlier builds'.
	Digest uint64 `json:"digest,omitempty"`
	// read is the entry as parseManifest read it, nil when it was not
	// read in its written form; whatever changes the entry drops it
	// (Stamped).
	read *readEntry
}

// Source is what the manifest says of one of a wing's files.
type Source struct {
	Path  string    `json:"path"`
	Mtime time.Time `json:"mtime"`
	Size  int64     `json:"size"`
	Hash  string    `json:"hash"`
	Notes int       `json:"notes"`
	// Mined, Governed and NoteFormat are the source's, for
	// palace.Options.Unchanged; zero in manifests of earlier builds.
	Mined      time.Time `json:"mined"`
	Governed   int       `json:"governed"`
	NoteFormat int       `json:"note_format"`
}

// Stamped is e, changed by its writer, with the digest of what it now
// says.
func (e Entry) Stamped() Entry {
	e.read = nil
	e.Digest = entryDigest(e)
	return e
}

// AsWritten reports whether e is as its writer wrote it: its digest holds.
func (e Entry) AsWritten() bool { return e.Digest != 0 && e.Digest == e.digestAsRead() }

// Read reads the manifest at path: an empty one when there is none, and
// an ErrCorrupt one with an empty one when it does not read.
func Read(path string) (Manifest, error) {
	m := Manifest{Wings: map[string]Entry{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	if m, err = unmarshalManifest(data); err != nil {
		return Manifest{Wings: map[string]Entry{}}, fmt.Errorf("%w: %s: %v", wingfile.ErrCorrupt, filepath.Base(path), err)
	}
	if m.Wings == nil {
		m.Wings = map[string]Entry{}
	}
	return m, nil
}

// Write replaces the manifest at path with m, atomically.
func Write(path string, m Manifest) error {
	// Compact: every mine writes it and every command reads it, and the
	// indentation was a third of its bytes and 0.2 ms of each write at
	// 100 wings (jq prints it readably).
	data, err := marshalManifest(m)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write palace manifest: %w", err)
	}
	return nil
}
