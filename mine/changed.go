package mine

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/palace"
)

// racyWindow is how long a file must have been unchanged when mined for
// its mtime and size alone to say it has not changed since.
const racyWindow = 2 * time.Second

// settled reports whether src had been still for a while when it was mined,
// so that an unchanged mtime and size prove it unchanged since. A file
// mined within racyWindow of its last write is not settled: on filesystems
// with coarse timestamps an edit of the same size in the same second keeps
// its mtime and size (git calls this "racily clean"), and only reading it
// again tells. Mining a file that has not changed since settles it.
func settled(src palace.Source) bool { return settledAt(src.Mtime, src.Mined) }

// settledAt reports whether a file last written at mtime had been still
// long enough when its content was read at checked for mtime and size to
// prove it unchanged since.
func settledAt(mtime, checked time.Time) bool { return checked.Sub(mtime) > racyWindow }

// currentRules reports whether a file mined as src was mined by the
// current rules: a file classified by older governance rules, or mined in
// an older note format (except in a dry run), is mined again, unchanged or
// not, so an older palace is upgraded by the next mine (its unchanged
// texts keep their vectors, palace.ApplySet).
func currentRules(src palace.Source, dryRun bool) bool {
	return Classified(src) && (dryRun || src.NoteFormat >= NoteFormat)
}

// unchangedStat is the cheap check of a file mined as src, now of mtime
// and size: trusted only for a file that had settled when it was mined;
// others are read and hashed again.
func unchangedStat(src palace.Source, mtime time.Time, size int64) bool {
	return settled(src) && sameStat(src, mtime, size)
}

// sameStat reports whether a file's mtime and size are those src recorded.
func sameStat(src palace.Source, mtime time.Time, size int64) bool {
	return src.Mtime.Equal(mtime) && src.Size == size
}

// sameContent reports whether the file src was mined from still holds the
// same content (same SHA-256): how to tell whether a file that is not
// settled has changed without mining it.
func sameContent(src palace.Source) (bool, error) {
	f, err := hivefile.Open(src.Path)
	if err != nil {
		return false, unwrapPathErr(err)
	}
	defer f.Close()
	h := sha256.New()
	buf := hashBuffers.Get().(*[]byte)
	defer hashBuffers.Put(buf)
	// Read through a plain Reader: *os.File's WriteTo would copy through
	// a buffer of its own for every file, and the daemon's tick that
	// settles every file just mined would collect them all.
	if _, err := io.CopyBuffer(h, struct{ io.Reader }{f}, *buf); err != nil {
		return false, unwrapPathErr(err)
	}
	return hex.EncodeToString(h.Sum(nil)) == src.Hash, nil
}

// hashBuffers are sameContent's read buffers.
var hashBuffers = sync.Pool{New: func() any {
	b := make([]byte, 32<<10)
	return &b
}}

// Changes is what a mine of one directory into its wing would do, as
// Changed finds it.
type Changes struct {
	// Files are the files a mine of the directory reads (see ListFiles).
	Files []File
	// Changed are those of Files that a mine would read again: new ones,
	// and those changed since they were mined.
	Changed []File
	// Gone are the files mined from the directory before that are no
	// longer there.
	Gone []string
}

// Changed tells what a mine of dir (resolved, as Mine resolves it) into
// wing would change, by mine's own rule: a file is unchanged when its
// mtime and size are those recorded, it was classified by the current
// governance rules (Classified) and it had settled when it was mined; a
// file that had not settled is read and compared by content. A file found
// unchanged that has settled since is recorded as settled (when p is
// writable), so it is read once, not at every check.
func Changed(p *palace.Palace, wing, dir string) Changes {
	files, _ := ListFiles(dir)
	ch := Changes{Files: files}
	known := map[string]palace.Source{}
	for _, s := range p.SourceHeads(wing) {
		if strings.HasPrefix(s.Path, dir+string(filepath.Separator)) {
			known[s.Path] = s.Source
		}
	}
	for _, f := range files {
		if !unchanged(p, wing, known[f.Path], f) {
			ch.Changed = append(ch.Changed, f)
		}
		delete(known, f.Path)
	}
	for path := range known {
		ch.Gone = append(ch.Gone, path)
	}
	return ch
}

// unchanged reports whether f is what src (its record, zero when none)
// says it was when mined.
func unchanged(p *palace.Palace, wing string, src palace.Source, f File) bool {
	if src.Path == "" || !sameStat(src, f.Mtime, f.Size) || !Classified(src) {
		return false
	}
	if settled(src) {
		return true
	}
	read := time.Now()
	if same, err := sameContent(src); err != nil || !same {
		return false
	}
	if settledAt(f.Mtime, read) && p.Writable() {
		p.TouchSource(wing, f.Path, f.Mtime, f.Size)
	}
	return true
}
