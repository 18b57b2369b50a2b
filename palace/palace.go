package palace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
	chromem "github.com/philippgille/chromem-go"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/palace/internal/manifest"
	"github.com/memminer/memminer/palace/internal/wingfile"
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
	// ErrDirReplaced means the palace directory was removed, moved away or
	// replaced since the writer lock was taken: the lock no longer guards
	// the directory at that path, so nothing is written there.
	ErrDirReplaced = errors.New("palace directory was moved, removed or replaced since it was opened")
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
	// Unchanged, for a writer, is asked of each wing whose file is the
	// one its manifest entry was written with (its seal holds) and whose
	// model is the palace's; a wing it reports unchanged is left
	// unloaded, and the manifest written keeps its entry. A miner that
	// listed every wing's files first passes it, so that a mine reads
	// only the wings whose files changed. Unloaded wings are not listed
	// or searched; anything that would change or read one whole loads it
	// first. Nil loads every wing.
	Unchanged func(id string, w ManifestWing) bool
}

// Palace is an open palace. Its methods are safe for concurrent use.
// Changes are made in memory and written by Flush, which needs the writer
// lock (one writer per palace, enforced by a lock file).
type Palace struct {
	dir  string
	emb  embed.Embedder
	log  *slog.Logger
	lock *flock.Flock // nil when read-only
	// dirInfo is the palace directory as it was when the lock was taken.
	dirInfo os.FileInfo

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
	// removed are wings RemoveWing took out since the last Flush, whose
	// files Flush deletes.
	removed map[string]bool
	// setAside are the wing files of the wrong kind the writer lock moved
	// aside before load, by wing id: load names them as the damage.
	setAside map[string]setAsideWing
	// frozen counts the wings held frozen (frozen.go), which anything but
	// a search thaws first.
	frozen atomic.Int32
	// seals are the seals of the wing files that were written or checked
	// whole (wingfile.Seal), by wing id, for the manifest.
	seals map[string]*wingfile.Seal
	// listings are the listings of the wings' roots (listing.go), by wing
	// id, for the manifest.
	listings map[string]listing
	// unchanged is Options.Unchanged; unloaded are the manifest entries
	// of the wings it left unloaded, which count as frozen.
	unchanged func(id string, w ManifestWing) bool
	unloaded  map[string]manifest.Entry
}

// setAsideWing is a wing file of the wrong kind that was moved aside.
type setAsideWing struct {
	kind string // what it was: "directory"
	to   string // where it is now
}

// Open opens the palace in dir. A writer creates dir (0700) on first use and
// takes the lock; a reader of a missing palace gets an empty palace.
// Wing files that fail their integrity check are reported by Damaged and
// left empty, so they can be rebuilt.
func Open(ctx context.Context, dir string, opts Options) (*Palace, error) {
	p := &Palace{
		dir:      dir,
		emb:      opts.Embedder,
		log:      opts.Logger,
		db:       chromem.NewDB(),
		wings:    map[string]*wing{},
		seals:    map[string]*wingfile.Seal{},
		listings: map[string]listing{},
	}
	if !opts.ReadOnly {
		p.unchanged = opts.Unchanged
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	var wingsListed []fs.DirEntry // by acquire, for load
	var err error
	if !opts.ReadOnly {
		// A writer rewrites the manifest, so it must know every wing.
		opts.Wings = nil
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create palace %s: %w", dir, err)
		}
		_ = os.Chmod(dir, 0o700)
		if wingsListed, err = p.acquire(ctx, opts.LockTimeout); err != nil {
			return nil, err
		}
	}
	p.partial = len(opts.Wings) > 0
	if err := p.load(ctx, opts.Wings, wingsListed); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// recordHolder writes our pid into the lock file at path, which lets a
// waiting writer say who holds the lock. It is written in place, and the
// file cut only when what was there is longer (the pid before had more
// digits): on ext4 closing a file that was truncated to nothing and
// written again flushes it (auto_da_alloc), which os.WriteFile's
// truncation made cost 0.17 ms of each writer's open.
func recordHolder(path string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	rec := fmt.Appendf(nil, "%d\n", os.Getpid())
	if _, err := f.WriteAt(rec, 0); err != nil {
		return
	}
	if info, err := f.Stat(); err == nil && info.Size() > int64(len(rec)) {
		_ = f.Truncate(int64(len(rec)))
	}
}

// acquire takes the writer lock and repairs the layout; it returns the
// entries of wings/ then.
func (p *Palace) acquire(ctx context.Context, timeout time.Duration) ([]fs.DirEntry, error) {
	path := filepath.Join(p.dir, lockName)
	l := flock.New(path, flock.SetPermissions(0o600))
	ok, err := l.TryLock()
	if err == nil && !ok && timeout > 0 {
		lctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		// Poll often: a writer that takes the lock again right after it
		// let go (remember in a loop) must not starve the others.
		ok, err = l.TryLockContext(lctx, 10*time.Millisecond)
		if errors.Is(err, context.DeadlineExceeded) {
			err = nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("lock palace %s: %w", p.dir, err)
	}
	if !ok {
		holder := ""
		if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			holder = fmt.Sprintf(" (pid %s)", strings.TrimSpace(string(b)))
		}
		return nil, fmt.Errorf("%w%s: waited %s; try again when it is done", ErrLocked, holder, timeout)
	}
	recordHolder(path)
	info, err := os.Stat(p.dir)
	if err != nil {
		_ = l.Unlock()
		return nil, fmt.Errorf("lock palace %s: %w", p.dir, err)
	}
	p.lock, p.dirInfo = l, info
	wings, err := p.repairLayout()
	if err != nil {
		p.lock, p.dirInfo = nil, nil
		_ = l.Unlock()
		return nil, fmt.Errorf("create palace %s: %w", p.dir, err)
	}
	p.removeStaleTemps(wings)
	return wings, nil
}

// repairLayout, with the lock taken, moves aside a wings/ that is not a
// directory, a manifest.json that is not a regular file and wing files
// that cannot be read as files (kept, not deleted: they are not ours to
// destroy), and makes wings/. The wings are
// then rebuilt from markdown and the manifest from the wing files, as for
// any damage.
// It returns what wings/ then holds.
func (p *Palace) repairLayout() ([]fs.DirEntry, error) {
	wings, man := filepath.Join(p.dir, wingsDir), filepath.Join(p.dir, manifestName)
	fi, err := os.Lstat(wings)
	if err == nil && !fi.IsDir() {
		if _, err := p.moveAside(wings); err != nil {
			return nil, err
		}
	}
	if fi, err := os.Lstat(man); err == nil && !fi.Mode().IsRegular() {
		if _, err := p.moveAside(man); err != nil {
			return nil, err
		}
		p.manifestDirty = true
	}
	if err != nil || !fi.IsDir() {
		if err := os.MkdirAll(wings, 0o700); err != nil {
			return nil, err
		}
	}
	return p.repairWingFiles()
}

// repairWingFiles moves aside, within wings/, each entry named as a wing
// file that cannot be one (a directory, a FIFO): no rebuilt wing could be
// renamed over it. What was moved is recorded for load to report. It
// returns the directory's entries less those it moved (never nil).
func (p *Palace) repairWingFiles() ([]fs.DirEntry, error) {
	entries, err := os.ReadDir(filepath.Join(p.dir, wingsDir))
	if err != nil {
		return nil, err
	}
	kept := make([]fs.DirEntry, 0, len(entries))
	for _, e := range entries {
		id, ok := wingFileID(e.Name())
		if !ok || notWingFile(e.Type()) == "" {
			kept = append(kept, e)
			continue
		}
		aside, err := p.moveAside(p.wingPath(id))
		if err != nil {
			return nil, err
		}
		if p.setAside == nil {
			p.setAside = map[string]setAsideWing{}
		}
		p.setAside[id] = setAsideWing{kind: notWingFile(e.Type()), to: aside}
	}
	return kept, nil
}

// AsideName returns the name a damaged file or directory at path is moved
// aside to: path.damaged-TIME, which the palace ignores and which is new
// at every move, so an earlier one is never overwritten.
func AsideName(path string) string {
	return fmt.Sprintf("%s.damaged-%s", path, time.Now().UTC().Format("20060102T150405.000000000"))
}

// moveAside renames path to [AsideName], says so and returns the new name.
func (p *Palace) moveAside(path string) (string, error) {
	aside := AsideName(path)
	if err := os.Rename(path, aside); err != nil {
		return "", fmt.Errorf("move damaged %s aside: %w", path, err)
	}
	p.log.Warn("palace file of the wrong kind moved aside; it is rebuilt", "path", path, "moved_to", aside)
	return aside, nil
}

// CheckDir reports, for a palace holding the writer lock, whether its
// directory is still the one the lock was taken in. After `mv P P-moved`
// (or rm -r P and a new P) the lock guards the old directory, and a new
// writer can lock the new one: writing by path would make two writers.
// The error wraps ErrDirReplaced.
func (p *Palace) CheckDir() error {
	if p.lock == nil {
		return ErrReadOnly
	}
	info, err := os.Stat(p.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s is gone", ErrDirReplaced, p.dir)
	case err != nil:
		return fmt.Errorf("palace %s: %w", p.dir, err)
	case !os.SameFile(info, p.dirInfo):
		return fmt.Errorf("%w: %s is another directory now", ErrDirReplaced, p.dir)
	}
	return nil
}

// removeStaleTemps removes the temporary files of writes that were
// interrupted (a writer killed before its rename): only the lock holder
// writes, so with the lock taken none of them is in flight.
func (p *Palace) removeStaleTemps(wings []fs.DirEntry) {
	report := func(dir string, n int, size int64, err error) {
		if n > 0 {
			p.log.Info("removed temporary files of interrupted writes", "dir", dir, "files", n, "bytes", size)
		}
		if err != nil {
			p.log.Warn("cannot remove temporary files of interrupted writes", "dir", dir, "err", err)
		}
	}
	n, size, err := atomicfile.RemoveStale(p.dir, nil, "")
	report(p.dir, n, size, err)
	dir := filepath.Join(p.dir, wingsDir)
	n, size, err = atomicfile.RemoveStale(dir, wings, "")
	report(dir, n, size, err)
}

// Lock takes the writer lock of a palace opened read-only, waiting up to
// timeout. It returns an error wrapping ErrLocked when another writer has it.
func (p *Palace) Lock(ctx context.Context, timeout time.Duration) error {
	if p.lock != nil {
		return nil
	}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return fmt.Errorf("create palace %s: %w", p.dir, err)
	}
	if _, err := p.acquire(ctx, timeout); err != nil {
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

// Bytes is the palace's size on disk, without temporary files of writes
// in flight or interrupted.
func (p *Palace) Bytes() int64 {
	var n int64
	_ = filepath.WalkDir(p.dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !atomicfile.IsTemp(d.Name()) {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
