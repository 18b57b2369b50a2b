package hive

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// ConflictCopy is a conflict copy found on disk.
type ConflictCopy struct {
	// Path is the conflict copy's path (the walked root joined with the
	// relative path).
	Path string
	// Original is the path of the file it conflicts with, in the same
	// directory.
	Original string
	// Name is the parsed file name.
	Name ConflictName
	// ModTime is the copy's modification time.
	ModTime time.Time
	// Wing is the wing of the agent directory holding the copy (see
	// Locate); "" for a copy elsewhere. Set by Hive.ConflictCopies only.
	Wing string
	// Markers is set for a memory file that holds Git conflict markers
	// (HasConflictMarkers) rather than a Syncthing copy: Path and
	// Original are then both the file, and Name is zero.
	Markers bool
}

// ScanConflicts walks root and returns every regular file whose name is a
// conflict copy (IsConflictCopy), and every memory file (IsMemoryFile, not
// hidden below root) that holds Git conflict markers, in lexical order.
// It skips Syncthing's
// own ".stfolder" and ".stversions" directories, and follows root itself
// when it is a symlink (the paths returned stay below root as given).
// Unreadable subdirectories are skipped; the first of their errors is
// returned alongside the results.
func ScanConflicts(ctx context.Context, root string) ([]ConflictCopy, error) {
	walked := root
	if fi, err := os.Lstat(root); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if r, err := filepath.EvalSymlinks(root); err == nil {
			walked = r
		}
	}
	found, err := scanConflicts(ctx, walked)
	if walked != root {
		for i := range found {
			found[i].Path = rebase(walked, root, found[i].Path)
			found[i].Original = rebase(walked, root, found[i].Original)
		}
	}
	return found, err
}

// rebase moves path from below old to below root.
func rebase(old, root, path string) string {
	if r, ok := within(old, path); ok {
		return filepath.Join(root, r)
	}
	return path
}

func scanConflicts(ctx context.Context, root string) ([]ConflictCopy, error) {
	var found []ConflictCopy
	var firstErr error
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if err != nil {
			if path == root {
				return err
			}
			if firstErr == nil {
				firstErr = err
			}
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if path != root && IsSyncthingDir(d.Name()) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		cn, ok := ParseConflictName(d.Name())
		if !ok {
			if rel, _ := within(root, path); !IsMemoryFile(path) || IsHiddenPath(rel) {
				return nil
			}
			if info, err := d.Info(); err == nil && fileHasMarkers(path, info) {
				found = append(found, ConflictCopy{Path: path, Original: path, ModTime: info.ModTime(), Markers: true})
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // resolved while we walked
			}
			if firstErr == nil {
				firstErr = err
			}
			return nil
		}
		found = append(found, ConflictCopy{
			Path:     path,
			Original: filepath.Join(filepath.Dir(path), cn.Original),
			Name:     cn,
			ModTime:  info.ModTime(),
		})
		return nil
	})
	if err != nil {
		return found, fmt.Errorf("scan %s for conflict copies: %w", root, err)
	}
	if firstErr != nil {
		return found, fmt.Errorf("scan %s for conflict copies: %w", root, firstErr)
	}
	return found, nil
}

// ConflictCopies walks the hive for conflict copies: all of it, agent
// directories that are symlinks included, or only the agent directories of
// wing when wing is set (none is no error). Each copy has the wing Locate
// gives it. Paths are the hive as given joined with the relative path; a
// copy reached twice (by the walk of the hive and through a link into it)
// is listed once, under the path that gives it a wing. The first error (an
// unreadable directory) is returned along with what was found.
func (h *Hive) ConflictCopies(ctx context.Context, wing string) ([]ConflictCopy, error) {
	dirs, firstErr := h.wingDirs()
	var roots []string
	if wing == "" {
		roots = append(roots, h.abs)
	}
	for _, d := range dirs {
		// A walk of the hive does not enter symlinks; walk those apart.
		if (wing == "" && d.link) || (wing != "" && d.wing == wing) {
			roots = append(roots, d.path)
		}
	}
	var out []ConflictCopy
	byReal := map[string]int{}
	for _, root := range roots {
		found, err := ScanConflicts(ctx, root)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		for _, f := range found {
			rel, ok := within(h.abs, f.Path)
			if !ok {
				continue
			}
			if loc := h.locateRel(filepath.ToSlash(rel)); loc.Rel != "" {
				f.Wing = loc.Wing
			}
			if f.Markers && f.Wing == "" {
				continue // markers in a file that is not an agent's memory
			}
			key, rerr := filepath.EvalSymlinks(f.Path)
			if rerr != nil {
				key = f.Path
			}
			if i, dup := byReal[key]; dup {
				if out[i].Wing == "" && f.Wing != "" {
					out[i] = f
				}
				continue
			}
			byReal[key] = len(out)
			out = append(out, f)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return out, firstErr
}
