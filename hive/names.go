package hive

import (
	"path/filepath"
	"strings"
	"time"
)

// MemoryFileName is the file in which an agent keeps its durable facts.
const MemoryFileName = "memory.md"

// IsHidden reports whether a file or directory of this name is hidden
// (".x"): never an agent, never mined, never leading to an agent.
func IsHidden(name string) bool { return strings.HasPrefix(name, ".") }

// IsHiddenPath reports whether a relative path (either separator) passes
// through a hidden directory or names a hidden file.
func IsHiddenPath(rel string) bool {
	for _, part := range strings.FieldsFunc(rel, isSeparator) {
		if IsHidden(part) {
			return true
		}
	}
	return false
}

func isSeparator(r rune) bool { return r == '/' || r == filepath.Separator }

// IsMarkdown reports whether name has a markdown extension (.md or
// .markdown, in any case).
func IsMarkdown(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".md" || ext == ".markdown"
}

// IsSyncthingDir reports whether a directory of this name (a base name)
// is Syncthing's own, ".stfolder" or ".stversions", which no scan of the
// hive enters.
func IsSyncthingDir(name string) bool { return name == ".stfolder" || name == ".stversions" }

// IsMemoryFile reports whether a file of this name (a base name, or a
// path whose last element is tested) is part of an agent's memory, and so
// mined: markdown, not hidden, not a conflict copy.
func IsMemoryFile(name string) bool {
	name = filepath.Base(name)
	return IsMarkdown(name) && !IsHidden(name) && !IsConflictCopy(name)
}

// IsMainMemoryFile reports whether name (a base name, or a path whose
// last element is tested) is memory.md or a machine's memory.<machine>.md
// (MachineFileName), in any case: the files each agent keeps, preferred
// over its other files. A hive written before machine files has only
// memory.md; remember appends to the machine's own file beside it.
func IsMainMemoryFile(name string) bool {
	if strings.EqualFold(filepath.Base(name), MemoryFileName) {
		return true
	}
	_, ok := MachineOf(name)
	return ok
}

// conflictMarker separates the original name from the conflict suffix.
const conflictMarker = ".sync-conflict-"

// conflictTimeLayout is the time stamp in a conflict copy's name. Syncthing
// writes it in the local time of the device that made the copy.
const conflictTimeLayout = "20060102-150405"

// shortIDLen is the length of a short device id (protocol.ShortIDStringLength).
const shortIDLen = 7

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
	// the name carries none.
	ShortDevice string
}

// ParseConflictName recognises the base name of a Syncthing conflict copy
// in every form Syncthing has written:
//
//	<stem>.sync-conflict-YYYYMMDD-HHMMSS-<short id><ext>  (today)
//	<stem>.sync-conflict-YYYYMMDD-HHMMSS-<ext>            (modifier unknown)
//	<stem>.sync-conflict-YYYYMMDD-HHMMSS<ext>             (older versions)
//
// where <ext> is the original's extension (possibly empty), <stem> the rest
// of its name and <short id> seven upper-case letters or digits. It reports
// false for anything else, including names that merely contain
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
	if len(rest) < len(conflictTimeLayout) {
		return ConflictName{}, false
	}
	stamp, rest := rest[:len(conflictTimeLayout)], rest[len(conflictTimeLayout):]
	if !allDigitsBut(stamp, 8) {
		return ConflictName{}, false
	}
	t, err := time.ParseInLocation(conflictTimeLayout, stamp, time.Local)
	if err != nil {
		return ConflictName{}, false
	}
	short, ext := "", rest
	if strings.HasPrefix(rest, "-") {
		// The short id is empty (unknown modifier) or seven characters.
		ext = rest[1:]
		if len(ext) >= shortIDLen && isShortID(ext[:shortIDLen]) {
			short, ext = ext[:shortIDLen], ext[shortIDLen:]
		}
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

// IsConflictCopy reports whether name (a base name, or a path whose last
// element is tested) is a Syncthing conflict copy (see ParseConflictName).
// A conflict copy is never memory: it is not mined, and the conflict
// watcher reports it until it is merged and deleted.
func IsConflictCopy(name string) bool {
	_, ok := ParseConflictName(filepath.Base(name))
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

// isShortID reports whether s is written like a short device id: Syncthing
// writes base32 (A–Z, 2–7); any upper-case letter or digit is accepted, so
// that no name a copy may carry escapes the conflict watcher.
func isShortID(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// MemoryFilePatterns returns patterns, in the syntax of .gitignore and
// .gitattributes and relative to the hive, for the memory files of the
// agent directories globs matches (IsMemoryFile: markdown in any case),
// then for what is never memory below them: hidden files and
// directories and conflict copies. A tool that must name the memory files
// to another program (memminer git setup) gives these: the files matching
// the first ones and none of the last are memory.
func MemoryFilePatterns(globs Globs) (memory, not []string) {
	for _, p := range globs.Patterns() {
		memory = append(memory, p+"/**/*.[mM][dD]", p+"/**/*.[mM][aA][rR][kK][dD][oO][wW][nN]")
		not = append(not, p+"/**/.*", p+"/**/.*/**", p+"/**/*"+conflictMarker+"*")
	}
	return memory, not
}
