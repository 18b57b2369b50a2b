package syncthing

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/syncthing/syncthing/lib/protocol"
)

// conflictMarker separates the original name from the conflict suffix.
const conflictMarker = ".sync-conflict-"

// conflictTimeLayout is the time stamp in a conflict copy's name. Syncthing
// writes it in the local time of the device that made the copy.
const conflictTimeLayout = "20060102-150405"

// ConflictName is a conflict copy's file name taken apart.
type ConflictName struct {
	// Original is the base name of the file the copy belongs to, for
	// "memory.sync-conflict-20240131-093000-ABCDEFG.md" that is "memory.md".
	Original string
	// Time is when the copy was made, read in time.Local (Syncthing writes
	// the local time of the machine that made the copy).
	Time time.Time
	// ShortDevice is the 7-character short id of the device whose version
	// won the conflict (and so stayed under the original name). Empty when
	// Syncthing did not know the modifying device.
	ShortDevice string
}

// ParseConflictName recognises the base name of a Syncthing conflict copy,
// "<stem>.sync-conflict-YYYYMMDD-HHMMSS-<short id><ext>" where <ext> is the
// original's extension (possibly empty) and <stem> the rest of its name.
// It reports false for anything else, including names that merely contain
// "sync-conflict". Only the last marker counts, so a conflict copy of a
// conflict copy yields the first copy's name as Original. A name with a
// directory part is rejected; pass filepath.Base of a path.
func ParseConflictName(name string) (ConflictName, bool) {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return ConflictName{}, false
	}
	i := strings.LastIndex(name, conflictMarker)
	if i < 0 {
		return ConflictName{}, false
	}
	stem, rest := name[:i], name[i+len(conflictMarker):]
	if len(rest) < len(conflictTimeLayout)+1 || rest[len(conflictTimeLayout)] != '-' {
		return ConflictName{}, false
	}
	stamp := rest[:len(conflictTimeLayout)]
	if !allDigitsBut(stamp, 8) {
		return ConflictName{}, false
	}
	t, err := time.ParseInLocation(conflictTimeLayout, stamp, time.Local)
	if err != nil {
		return ConflictName{}, false
	}
	rest = rest[len(conflictTimeLayout)+1:]
	// The short id is empty (unknown modifier) or 7 base32 characters.
	short, ext := "", rest
	if len(rest) >= protocol.ShortIDStringLength && isBase32(rest[:protocol.ShortIDStringLength]) {
		short, ext = rest[:protocol.ShortIDStringLength], rest[protocol.ShortIDStringLength:]
	}
	// What is left must be exactly filepath.Ext of the original: empty, or
	// a dot followed by anything but another dot.
	if ext != "" && (ext[0] != '.' || strings.Contains(ext[1:], ".")) {
		return ConflictName{}, false
	}
	original := stem + ext
	if original == "" || original == "." || original == ".." {
		return ConflictName{}, false
	}
	return ConflictName{Original: original, Time: t, ShortDevice: short}, true
}

// IsConflictName reports whether name (a base name) is a conflict copy.
func IsConflictName(name string) bool {
	_, ok := ParseConflictName(name)
	return ok
}

// allDigitsBut reports whether s consists of ASCII digits except for a
// single '-' at index dash.
func allDigitsBut(s string, dash int) bool {
	for i := 0; i < len(s); i++ {
		if i == dash {
			if s[i] != '-' {
				return false
			}
			continue
		}
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isBase32 reports whether s uses only the RFC 4648 base32 alphabet that
// device ids are written in.
func isBase32(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// FoundConflict is a conflict copy found on disk by [ScanConflicts].
type FoundConflict struct {
	// Path is the conflict copy's path (root joined with the relative path).
	Path string
	// Original is the path of the file it conflicts with, in the same
	// directory.
	Original string
	// Name is the parsed file name.
	Name ConflictName
	// ModTime is the copy's modification time.
	ModTime time.Time
}

// ScanConflicts walks root and returns every regular file whose name is a
// conflict copy, in lexical order. It skips Syncthing's own ".stfolder" and
// ".stversions" directories. It is the backstop for conflicts that happened
// while no [Watcher] was running. Unreadable subdirectories are skipped; the
// first of their errors is returned alongside the results.
func ScanConflicts(ctx context.Context, root string) ([]FoundConflict, error) {
	var found []FoundConflict
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
			if path != root && (d.Name() == ".stfolder" || d.Name() == ".stversions") {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		cn, ok := ParseConflictName(d.Name())
		if !ok {
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
		found = append(found, FoundConflict{
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
