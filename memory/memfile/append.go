package memfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/internal/hivefile"
)

// ErrReplaced means the file was replaced (renamed over, or removed) while
// it was appended to: the appended bytes may be in the file that was
// displaced, not in the one the path names now. Read it again.
var ErrReplaced = errors.New("file replaced while it was appended to")

// ErrTruncated means the appended bytes are not where they were written:
// another program (an editor saving its buffer) truncated and rewrote
// the file under the writer, before or after the write. The note is lost
// or in the wrong place; it matches ErrReplaced, so a writer reads the
// file again and appends what is missing.
var ErrTruncated = fmt.Errorf("file truncated and rewritten while it was appended to: %w", ErrReplaced)

// AppendEnd appends tail to the end of the file s was read from with a
// single O_APPEND write and an fsync: no rename, so a line another
// appender writes at the same time (an agent's `echo >> memory.md`) cannot
// be lost, and the file keeps its inode, mode and owner. Before writing it
// checks that the file is still what s holds, and fails with ErrChanged if
// not (nothing is written: read again, since the item's place depends on
// the content). With afterLines, for a tail of whole lines that may follow
// any line, the file may also have grown by whole lines another appender
// wrote since s was read: the tail then follows them. A file s found
// missing is created (NewFileMode) only if it still does not exist. After
// the write it checks that the path still names the file written, and
// fails with ErrReplaced if it does not.
func AppendEnd(ctx context.Context, s Snapshot, tail []byte, afterLines bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	// Read and write: the content is checked through the descriptor the
	// tail is written to, and no link is followed on the way (s.Path is
	// resolved), so a file swapped for a link to another user's file
	// after the check is refused, not appended to.
	flags := os.O_RDWR | os.O_APPEND
	if !s.Exists {
		flags |= os.O_CREATE | os.O_EXCL
	}
	f, err := hivefile.OpenFile(s.Path, flags, NewFileMode)
	switch {
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("append to %s: %w (it was created)", s.Path, ErrChanged)
	case errors.Is(err, fs.ErrNotExist) && s.Exists:
		return fmt.Errorf("append to %s: %w (it was removed)", s.Path, ErrChanged)
	case err != nil:
		return fmt.Errorf("append to %s: %w", s.Path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("append to %s: %w", s.Path, err)
	}
	if s.Exists {
		if err := sameContent(f, s, info.Size(), afterLines); err != nil {
			return err
		}
	}
	if _, err := f.Write(tail); err != nil {
		return fmt.Errorf("append to %s: %w", s.Path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("append to %s: %w", s.Path, err)
	}
	if !s.Exists {
		if err := atomicfile.SyncDir(filepath.Dir(s.Path)); err != nil {
			return fmt.Errorf("append to %s: sync directory: %w", s.Path, err)
		}
	}
	if afterAppend != nil {
		afterAppend(s.Path)
	}
	now, err := os.Stat(s.Path)
	if err != nil || !os.SameFile(now, info) {
		return fmt.Errorf("append to %s: %w", s.Path, ErrReplaced)
	}
	if err := landed(f, info.Size(), tail); err != nil {
		return fmt.Errorf("append to %s: %w", s.Path, err)
	}
	runHooks(ctx, s.Path)
	return nil
}

// landed checks, through f, that tail is in the file at or after byte
// from, the end of the content checked before the write (other appenders
// may have written before it): a file now shorter than that, or without
// tail there, was truncated under the writer (ErrTruncated).
func landed(f *os.File, from int64, tail []byte) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	end := from + int64(len(tail))
	if info.Size() < end {
		return fmt.Errorf("%w (%d bytes, not the %d acknowledged)", ErrTruncated, info.Size(), end)
	}
	data := make([]byte, min(info.Size(), end+maxGrowth)-from)
	if _, err := f.ReadAt(data, from); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if !bytes.Contains(data, tail) {
		return fmt.Errorf("%w (the appended lines are not after byte %d)", ErrTruncated, from)
	}
	return nil
}

// maxGrowth bounds what AppendEnd reads of lines other appenders added
// since the snapshot; more is a file to read again.
const maxGrowth = 1 << 20

// afterAppend, when set by a test, runs right after AppendEnd's write:
// another writer's atomic save landing then.
var afterAppend func(path string)

// sameContent checks that f, the file at s.Path of size bytes, holds
// exactly s.Data, or with afterLines s.Data (ending a line) followed by
// whole lines.
func sameContent(f *os.File, s Snapshot, size int64, afterLines bool) error {
	if size == int64(len(s.Data)) {
		data, err := hivefile.ReadAll(f, int64(len(s.Data))+1)
		if err != nil {
			return fmt.Errorf("append to %s: %w", s.Path, err)
		}
		if !bytes.Equal(data, s.Data) {
			return fmt.Errorf("append to %s: %w", s.Path, ErrChanged)
		}
		return nil
	}
	grown := afterLines && size > int64(len(s.Data)) && (len(s.Data) == 0 || s.Data[len(s.Data)-1] == '\n')
	if !grown {
		return fmt.Errorf("append to %s: %w (%d bytes, not %d)", s.Path, ErrChanged, size, len(s.Data))
	}
	// All of it, not size bytes: it may have grown again since the stat,
	// and a cut at size would end inside a line.
	data, err := hivefile.ReadAll(f, size+maxGrowth)
	if err != nil {
		return fmt.Errorf("append to %s: %w", s.Path, err)
	}
	if int64(len(data)) == size+maxGrowth || !bytes.HasPrefix(data, s.Data) || data[len(data)-1] != '\n' {
		return fmt.Errorf("append to %s: %w", s.Path, ErrChanged)
	}
	return nil
}

// recoverTail copies to path what other writers appended to old, the
// descriptor of the file a rename displaced, after the first n bytes (the
// content checked before the rename), when old still starts with want: an
// append that landed between the check and the rename is kept. It reports
// whether old holds anything but want followed by appended bytes.
func recoverTail(old *os.File, want []byte, path string) (foreign bool, err error) {
	data, err := io.ReadAll(io.NewSectionReader(old, 0, 1<<62))
	if err != nil {
		return false, err
	}
	if !bytes.HasPrefix(data, want) {
		return true, nil
	}
	tail := data[len(want):]
	if len(tail) == 0 {
		return false, nil
	}
	f, err := hivefile.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if _, err := f.Write(tail); err != nil {
		return false, err
	}
	return false, f.Sync()
}

func rename(tmp, path string) error {
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
