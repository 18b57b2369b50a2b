package memfile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gofrs/flock"
)

// lockRetry is how often Lock tries again while another writer holds the lock.
const lockRetry = 5 * time.Millisecond

// ErrLocked means another writer held the directory's lock until the
// context ended.
var ErrLocked = errors.New("another writer holds the memory directory's lock")

// Lock takes the advisory lock of the memory directory dir, which every
// memminer writer on this machine takes before it reads a memory file it
// will change, and waits for it until ctx ends. The lock is on the
// directory itself, so no lock file appears in the hive (and Syncthing has
// nothing to copy), and it survives the rename that replaces the file.
// Call unlock when done.
func Lock(ctx context.Context, dir string) (unlock func(), err error) {
	l := flock.New(dir, flock.SetFlag(os.O_RDONLY))
	ok, err := l.TryLockContext(ctx, lockRetry)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("lock %s: %w: %w", dir, ErrLocked, ctx.Err())
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if !ok {
		return nil, fmt.Errorf("lock %s: %w", dir, ErrLocked)
	}
	return func() { _ = l.Unlock() }, nil
}
