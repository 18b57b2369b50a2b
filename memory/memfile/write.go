package memfile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/memory/markdown"
)

// NewFileMode is the mode of a memory file Write creates.
const NewFileMode fs.FileMode = 0o644

// Snapshot is a memory file as read: its content and what Write needs to
// replace it safely.
type Snapshot struct {
	// Path is the file's path.
	Path string
	// Exists is false for a file not there yet (Data is then empty).
	Exists bool
	// Data is the file's content.
	Data []byte
	// Hash is Hash(Data).
	Hash string
	// Mode is the file's permission bits, kept by Write.
	Mode fs.FileMode
	owner
}

// Hash is the hash of a memory file's content as memminer prints it (and as
// the palace records it): the SHA-256 of its bytes, in hex.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Read reads the memory file at path, which may not exist yet. It fails
// with ErrNotRegular for anything but a regular file, ErrTooLarge past
// maxBytes (when positive) and a *markdown.TextError wrapped with ErrNotText
// for content that is not UTF-8 text.
func Read(path string, maxBytes int64) (Snapshot, error) {
	s := Snapshot{Path: path, Mode: NewFileMode, Hash: Hash(nil)}
	// hivefile opens without blocking on a FIFO and refuses what is not
	// a regular file, checked on the open descriptor.
	f, err := hivefile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if errors.Is(err, ErrNotRegular) {
		return s, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	if err != nil {
		return s, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return s, err
	}
	r := io.Reader(f)
	if maxBytes > 0 {
		r = io.LimitReader(f, maxBytes+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return s, err
	}
	if maxBytes > 0 && int64(len(data)) > maxBytes {
		return s, fmt.Errorf("%s: %w (over %d bytes, max_file_bytes)", path, ErrTooLarge, maxBytes)
	}
	if err := markdown.CheckText(data); err != nil {
		return s, fmt.Errorf("%s: %w: %w", path, ErrNotText, err)
	}
	s.Exists, s.Data, s.Hash, s.Mode, s.owner = true, data, Hash(data), info.Mode().Perm(), ownerOf(info)
	return s, nil
}

// CheckText returns an error wrapping ErrNotText when data holds a NUL
// byte or is not valid UTF-8.
func CheckText(data []byte) error {
	if err := markdown.CheckText(data); err != nil {
		return fmt.Errorf("%w: %w", ErrNotText, err)
	}
	return nil
}

// Write replaces the file s was read from with data, atomically: a
// temporary file in the same directory, fsync, rename, fsync of the
// directory. The file keeps s's mode and owner (a new one gets
// NewFileMode). Right before the rename it checks that the file is still
// what s holds, and fails with ErrChanged if another writer changed,
// created or removed it meanwhile; nothing is written then. The window
// between that check and the rename is closed as far as the platform
// allows: lines appended to the file in it are carried over to the new
// one, and on Linux the rename is an exchange that finds a file another
// writer renamed into place in it (ErrChanged, their file put back). Once
// the file is replaced, the hooks (AddHook) are told.
func Write(ctx context.Context, s Snapshot, data []byte) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := filepath.Dir(s.Path)
	// A hidden name: mine, the daemon and the index skip it.
	tmp, err := atomicfile.CreateTemp(s.Path)
	if err != nil {
		return fmt.Errorf("write %s: %w", s.Path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", s.Path, err)
	}
	if err := tmp.Chmod(s.Mode); err != nil {
		return fmt.Errorf("write %s: keep mode %v: %w", s.Path, s.Mode, err)
	}
	if err := s.owner.apply(tmp); err != nil {
		return fmt.Errorf("write %s: keep owner: %w", s.Path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", s.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", s.Path, err)
	}
	// The file checked is held open: what another writer appends to it
	// between the check and the rename is then found on it afterwards
	// and carried over (recoverTail), not lost with the displaced file.
	var old *os.File
	if s.Exists {
		if old, err = hivefile.Open(s.Path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("write %s: %w (it was removed)", s.Path, ErrChanged)
			}
			return fmt.Errorf("write %s: %w", s.Path, err)
		}
		defer old.Close()
	}
	if err := unchanged(s); err != nil {
		return err
	}
	if beforeReplace != nil {
		beforeReplace(s.Path)
	}
	if err := replace(tmp.Name(), s.Path, old); err != nil {
		return err
	}
	if old != nil {
		foreign, err := recoverTail(old, s.Data, s.Path)
		if err != nil {
			// The new content is in place: ErrReplaced makes the writer
			// read the file again and find it, never write it twice.
			return fmt.Errorf("write %s: carry over what was appended during the write: %w: %w", s.Path, ErrReplaced, err)
		}
		if foreign {
			// Only an in-place rewrite between the check and the
			// rename gets here; it is in the log, not lost silently.
			return fmt.Errorf("write %s: %w: it was rewritten in place during the write", s.Path, ErrReplaced)
		}
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return fmt.Errorf("write %s: sync directory: %w", s.Path, err)
	}
	runHooks(ctx, s.Path)
	return nil
}

// beforeReplace, when set by a test, runs between the check and the
// rename: another writer's move in the window.
var beforeReplace func(path string)

// unchanged checks that the file at s.Path is still the one s was read from.
func unchanged(s Snapshot) error {
	data, err := hivefile.ReadLimited(s.Path, int64(len(s.Data))+1)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if s.Exists {
			return fmt.Errorf("write %s: %w (it was removed)", s.Path, ErrChanged)
		}
		return nil
	case err != nil:
		return fmt.Errorf("write %s: %w", s.Path, err)
	case !s.Exists:
		return fmt.Errorf("write %s: %w (it was created)", s.Path, ErrChanged)
	case !bytes.Equal(data, s.Data):
		return fmt.Errorf("write %s: %w", s.Path, ErrChanged)
	}
	return nil
}
