// Package hivefile opens and reads the files of a hive (memory.md,
// identity.md, conflict copies): regular files only, and never in a way
// that can block. A FIFO, socket or device with a markdown name is
// refused with [ErrNotRegular] instead of hanging the reader until a
// writer appears, which no signal would interrupt.
package hivefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is returned (wrapped in an *fs.PathError) for a path that
// is not a regular file once opened.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading if it is a regular file (a symlink is
// followed). The open itself does not block on a FIFO, and the check is
// made on the opened file, so a file swapped for a FIFO after a stat is
// still refused.
func Open(path string) (*os.File, error) {
	f, err := openNonBlocking(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, Kind(fi.Mode()))}
	}
	return f, nil
}

// ReadLimited reads at most limit bytes of the regular file path; a
// caller that must tell a file over its cap passes cap+1.
func ReadLimited(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Sized by the file, as os.ReadFile does: io.ReadAll would grow its
	// buffer step by step, allocating more than twice the file.
	size := max(limit, 0)
	if fi, err := f.Stat(); err == nil && fi.Size() < limit {
		size = fi.Size() + 1 // one more byte reads EOF, or what the file grew by
	}
	data := make([]byte, 0, size)
	r := io.LimitReader(f, limit)
	for {
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // it grew: let append size the rest
		}
	}
}

// Kind names the type of a file that is not regular, for messages.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "irregular file"
}
