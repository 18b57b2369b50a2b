package mine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/bytesize"
	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/memory/markdown"
	"github.com/memminer/memminer/palace"
)

func within(root, path string, isDir bool) bool {
	if !isDir {
		return path == root
	}
	return strings.HasPrefix(path, root+string(filepath.Separator))
}

// collect lists the markdown files of a job in a stable order, and the
// entries it refused (symlinks leaving the root).
func collect(j job) ([]candidate, []Problem) {
	files, problems, _ := collectListing(j)
	return files, problems
}

// collectListing is collect, with the stat the job's root directory had
// when it was listed when that stat proves the listing current for as
// long as it matches (nil otherwise): the root's change time had settled
// before the listing, and what the listing found is all in the root
// itself, with no link followed and nothing refused, so no change to it
// leaves the root's stat as it was.
func collectListing(j job) ([]candidate, []Problem, fs.FileInfo) {
	if !j.isDir {
		info, err := os.Stat(j.root)
		if err != nil {
			return nil, []Problem{{Path: j.root, Err: err.Error()}}, nil
		}
		return []candidate{{j.root, info}}, nil, nil
	}
	var files []candidate
	var problems []Problem
	flat := true
	listedAt := time.Now()
	dir := walkRoot(j.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			// The root too: an agent directory that cannot be read hides
			// its files, which must not count as gone.
			problems = append(problems, Problem{Path: path, Err: unwrapPathErr(err).Error()})
			if d != nil && d.IsDir() && path != j.root {
				return fs.SkipDir
			}
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if path != j.root && hive.IsHidden(name) {
				return fs.SkipDir
			}
			flat = false
			return nil
		}
		if !hive.IsMemoryFile(name) {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			flat = false
			target, err := filepath.EvalSymlinks(path)
			if err != nil {
				problems = append(problems, Problem{Path: path, Err: "broken symlink: " + unwrapPathErr(err).Error()})
				return nil
			}
			if !within(j.root, target, true) {
				problems = append(problems, Problem{Path: path, Err: "symlink points outside " + j.root + "; not followed"})
				return nil
			}
			if collectable(j.root, target) {
				return nil // an alias of a file mined under its own name
			}
		}
		info, err := os.Stat(path)
		if err != nil {
			problems = append(problems, Problem{Path: path, Err: unwrapPathErr(err).Error()})
			return nil
		}
		if !info.Mode().IsRegular() {
			// Reported, so that notes it once gave stay (like an
			// unreadable file's) and the user learns why it is not mined.
			problems = append(problems, Problem{Path: path, Err: hivefile.Kind(info.Mode()) + ", not a regular file; not mined"})
			return nil
		}
		files = append(files, candidate{path, info})
		return nil
	})
	sort.Slice(files, func(a, b int) bool { return files[a].path < files[b].path })
	if !flat || len(problems) > 0 || dir == nil {
		return files, problems, nil
	}
	if changed, ok := palace.ChangeTime(dir); !ok || !settledAt(changed, listedAt) {
		return files, problems, nil
	}
	return files, problems, dir
}

// listedFiles are the files of job j when the manifest's listing of its
// wing, w, still holds: j's root is w's one root, its stat is the one the
// listing was taken with, and each file is still a regular file. ok is
// false when a listing is needed.
func listedFiles(j job, w palace.ManifestWing) (files []candidate, ok bool) {
	if !j.isDir || !slices.Equal(w.Roots, []string{j.root}) {
		return nil, false
	}
	dir, err := os.Lstat(j.root)
	if err != nil || !w.ListedAs(dir) {
		return nil, false
	}
	files = make([]candidate, len(w.Sources))
	for i, src := range w.Sources {
		info, err := os.Lstat(src.Path)
		if err != nil || !info.Mode().IsRegular() {
			return nil, false
		}
		files[i] = candidate{src.Path, info}
	}
	return files, true
}

// walkRoot is filepath.WalkDir(root, fn) for a root the hive listing
// found to be a directory, less the walk's Lstat of it and the call of
// fn for it (which collect ignores): one system call an agent on every
// mine. The root is opened without following a link, as WalkDir's Lstat
// would not follow one: a root that became a link since the listing is
// an error, never a way out of the hive. As WalkDir does, a root that
// cannot be listed is passed to fn with the error, and what was listed
// of it is walked.
//
// It returns the root's stat as it was before the listing, nil when it
// could not be taken.
func walkRoot(root string, fn fs.WalkDirFunc) fs.FileInfo {
	entries, info, err := readDirNoFollow(root)
	if err != nil {
		_ = fn(root, nil, err)
	}
	for _, e := range entries {
		path := filepath.Join(root, e.Name())
		if e.IsDir() {
			_ = filepath.WalkDir(path, fn)
			continue
		}
		_ = fn(path, e, nil)
	}
	return info
}

// collectable reports whether the walk of root lists path itself: a regular
// markdown file, not a conflict copy, not hidden.
func collectable(root, path string) bool {
	if !hive.IsMemoryFile(path) || hiddenBelow(root, path) {
		return false
	}
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}

// File is a markdown file that mining a directory reads.
type File struct {
	Path  string
	Mtime time.Time
	Size  int64
}

// ListFiles lists the files a mine of dir reads, by the same rules, and the
// entries it would report instead. dir should be resolved (no symlinks),
// as Mine resolves it.
func ListFiles(dir string) ([]File, []Problem) {
	cands, problems := collect(job{root: dir, isDir: true})
	files := make([]File, len(cands))
	for i, c := range cands {
		files[i] = File{Path: c.path, Mtime: c.info.ModTime().UTC(), Size: c.info.Size()}
	}
	return files, problems
}

// hiddenBelow reports whether path lies in a hidden directory below root,
// where the walk does not go.
func hiddenBelow(root, path string) bool {
	rel, err := filepath.Rel(root, filepath.Dir(path))
	return err == nil && rel != "." && hive.IsHiddenPath(rel)
}

// readFile reads path, a file of job j, through one descriptor: opened
// without following a link out of the directory the job was planned
// with (j.real), nor one swapped in on the resolved path, its type
// checked on the descriptor, so a file or directory another user swaps
// for a link to one of ours is never mined.
func readFile(j job, path string, maxBytes int64) ([]byte, error) {
	f, err := hivefile.OpenIn(j.real, path)
	if err != nil {
		return nil, unwrapPathErr(err)
	}
	defer f.Close()
	// The file may have grown since it was listed; never read past the cap.
	data, err := hivefile.ReadAll(f, maxBytes+1)
	if err != nil {
		return nil, unwrapPathErr(err)
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("file is larger than the %s limit (max_file_bytes); not mined", bytesize.Format(maxBytes))
	}
	return data, nil
}

// checkText is markdown.CheckText with what it means for mining.
func checkText(data []byte) error {
	var te *markdown.TextError
	if err := markdown.CheckText(data); errors.As(err, &te) {
		if te.Binary {
			return fmt.Errorf("looks like a binary file (NUL byte at offset %d); not mined", te.Offset)
		}
		return fmt.Errorf("not valid UTF-8 (first bad byte at offset %d, line %d); convert it to UTF-8 to mine it", te.Offset, te.Line)
	}
	return nil
}

// unwrapPathErr drops the *PathError wrapper whose path the caller already
// prints, keeping messages short.
func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
