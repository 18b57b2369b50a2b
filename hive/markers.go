package hive

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"sync"
)

// markerLen is the length of Git's conflict markers (conflict-marker-size).
const markerLen = 7

// openMarker is what every block of markers holds.
var openMarker = []byte("<<<<<<<")

// MarkerBlock is one block of Git conflict markers in a file, by 0-based
// line index: Git writes
//
//	<<<<<<< ours
//	(this side's lines)
//	||||||| base        (only with merge.conflictStyle diff3)
//	(the common ancestor's lines)
//	=======
//	(the other side's lines)
//	>>>>>>> theirs
//
// Base is -1 without a base section.
type MarkerBlock struct {
	Start, Base, Mid, End int
}

// ConflictBlocks returns the blocks of Git conflict markers in data, in
// order: a line starting with seven or more "<" (then a space or the line's
// end), a line of as many "=" and a line starting with as many ">", with
// an optional line of as many "|" between the first two. Markers sit at
// the start of a line; indented ones (an example in a list item) are text.
// A "=======" line outside such a block is a heading underline, not a
// marker. The rule is in docs/several-machines.md ("Conflict markers are conflicts").
func ConflictBlocks(data []byte) []MarkerBlock {
	if !bytes.Contains(data, openMarker) {
		return nil // the common case, without splitting the file
	}
	var blocks []MarkerBlock
	cur := MarkerBlock{Start: -1, Base: -1, Mid: -1}
	n := 0 // the open block's marker length
	for i, line := range lines(data) {
		switch {
		case cur.Start < 0:
			if k := markerRun(line, '<', 0, true); k > 0 {
				cur.Start, n = i, k
			}
		case markerRun(line, '<', 0, true) > 0:
			// A new block before this one closed: start again from it.
			cur = MarkerBlock{Start: i, Base: -1, Mid: -1}
			n = markerRun(line, '<', 0, true)
		case cur.Mid < 0 && cur.Base < 0 && markerRun(line, '|', n, true) > 0:
			cur.Base = i
		case cur.Mid < 0 && markerRun(line, '=', n, false) > 0:
			cur.Mid = i
		case cur.Mid >= 0 && markerRun(line, '>', n, true) > 0:
			cur.End = i
			blocks = append(blocks, cur)
			cur = MarkerBlock{Start: -1, Base: -1, Mid: -1}
		}
	}
	return blocks
}

// HasConflictMarkers reports whether data holds a block of Git conflict
// markers (see ConflictBlocks).
func HasConflictMarkers(data []byte) bool { return len(ConflictBlocks(data)) > 0 }

// lines splits data into lines without their line endings.
func lines(data []byte) [][]byte {
	out := bytes.Split(data, []byte{'\n'})
	for i, l := range out {
		out[i] = bytes.TrimSuffix(l, []byte{'\r'})
	}
	return out
}

// markerRun returns the length of the run of c that starts line when it
// is a marker: at least markerLen long (exactly n when n > 0), followed
// by a space or the end of the line when label is set, by nothing but
// blanks otherwise. It returns 0 for any other line.
func markerRun(line []byte, c byte, n int, label bool) int {
	k := 0
	for k < len(line) && line[k] == c {
		k++
	}
	if k < markerLen || (n > 0 && k != n) {
		return 0
	}
	rest := line[k:]
	switch {
	case len(rest) == 0:
		return k
	case label:
		if rest[0] == ' ' || rest[0] == '\t' {
			return k
		}
		return 0
	case len(bytes.TrimRight(rest, " \t")) == 0:
		return k
	}
	return 0
}

// FileHasConflictMarkers reports whether the regular file at path holds
// Git conflict markers, reading at most maxMarkerScan bytes of it.
func FileHasConflictMarkers(path string) bool {
	info, err := os.Stat(path)
	return err == nil && fileHasMarkers(path, info)
}

// fileHasMarkers is FileHasConflictMarkers for a file whose info is known.
// A file whose size and modification time are what they were at its last
// check is not read again: every conflict scan checks every memory file.
func fileHasMarkers(path string, info fs.FileInfo) bool {
	if !info.Mode().IsRegular() {
		return false
	}
	key := markerKey{size: info.Size(), mtime: info.ModTime().UnixNano()}
	markerCache.Lock()
	c, ok := markerCache.m[path]
	markerCache.Unlock()
	if ok && c.markerKey == key {
		return c.has
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	has, err := readMarkers(f)
	if err != nil {
		return false
	}
	markerCache.Lock()
	if markerCache.m == nil || len(markerCache.m) >= maxMarkerCache {
		markerCache.m = map[string]markerEntry{}
	}
	markerCache.m[path] = markerEntry{key, has}
	markerCache.Unlock()
	return has
}

// readMarkers reports whether the first maxMarkerScan bytes of f hold a
// block of conflict markers. It looks for an open marker a chunk at a
// time, in a buffer that is reused, and reads the file whole only when it
// finds one: a scan checks every memory file, nearly all without markers,
// and reading each whole into memory of its own was most of the cost of
// a `memminer status` without the daemon.
func readMarkers(f *os.File) (bool, error) {
	bp := markerChunks.Get().(*[]byte)
	defer markerChunks.Put(bp)
	buf := *bp
	// The last bytes of a chunk start the next, so a marker that straddles
	// two chunks is found.
	const carry = len("<<<<<<<") - 1
	kept, read := 0, 0
	for read < maxMarkerScan {
		n, err := io.ReadFull(f, buf[kept:min(len(buf), kept+maxMarkerScan-read)])
		read += n
		if bytes.Contains(buf[:kept+n], openMarker) {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return false, err
			}
			data, err := io.ReadAll(io.LimitReader(f, maxMarkerScan))
			return err == nil && HasConflictMarkers(data), err
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		kept = copy(buf, buf[kept+n-carry:kept+n])
	}
	return false, nil
}

// markerChunks are readMarkers' buffers.
var markerChunks = sync.Pool{New: func() any {
	b := make([]byte, 64<<10)
	return &b
}}

// markerCache remembers, per path, what the last check of a file found.
var markerCache struct {
	sync.Mutex
	m map[string]markerEntry
}

// maxMarkerCache bounds markerCache; past it, it starts again.
const maxMarkerCache = 1 << 17

type markerKey struct {
	size, mtime int64
}

type markerEntry struct {
	markerKey
	has bool
}

// maxMarkerScan bounds how much of a file the scan for conflict markers
// reads: far more than a memory file that is mined at all may hold
// (config's max_file_bytes defaults to 8 MiB).
const maxMarkerScan = 64 << 20
