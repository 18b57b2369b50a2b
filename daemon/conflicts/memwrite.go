package conflicts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/memminer/memminer/internal/atomicfile"
)

// The memory file is written the way every memminer writer writes it:
// under the advisory lock of its directory, atomically, and only if it is
// still what was read.

// errFileChanged means the file changed between the read and the write.
var errFileChanged = errors.New("the file changed while it was merged; nothing was written, run the merge again")

// lockDir takes the advisory lock of the memory directory dir, waiting
// until ctx ends.
func lockDir(ctx context.Context, dir string) (unlock func(), err error) {
	l := flock.New(dir, flock.SetFlag(os.O_RDONLY))
	ok, err := l.TryLockContext(ctx, 5*time.Millisecond)
	if err != nil || !ok {
		return nil, fmt.Errorf("lock %s: another writer holds it: %w", dir, errors.Join(err, ctx.Err()))
	}
	return func() { _ = l.Unlock() }, nil
}

// snapshot is a memory file as read.
type snapshot struct {
	path string
	data []byte
	mode fs.FileMode
}

func readSnapshot(path string, maxBytes int64) (snapshot, error) {
	info, err := os.Stat(path)
	if err != nil {
		return snapshot{}, err
	}
	data, err := readText(path, maxBytes)
	if err != nil {
		return snapshot{}, err
	}
	return snapshot{path: path, data: data, mode: info.Mode().Perm()}, nil
}

// writeSnapshot replaces the file s was read from with data, atomically,
// keeping its mode, unless it changed since it was read.
func writeSnapshot(ctx context.Context, s snapshot, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now, err := os.ReadFile(s.path)
	if err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	if !bytes.Equal(now, s.data) {
		return fmt.Errorf("write %s: %w", filepath.Base(s.path), errFileChanged)
	}
	return atomicfile.Write(s.path, data, s.mode)
}
