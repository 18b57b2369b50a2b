package hive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNotHive means a directory given as the hive has no agent directories
// and looks like an agents directory or an agent directory instead (see
// Hive.Check).
var ErrNotHive = errors.New("not a hive")

// notHiveError is ErrNotHive with what to do about it.
type notHiveError struct{ msg string }

func (e *notHiveError) Error() string        { return e.msg }
func (e *notHiveError) Is(target error) bool { return target == ErrNotHive }

// Check checks that the hive is one. A directory with neither agents/ nor
// directories the globs match that looks like an agents directory (one of
// its subdirectories holds memory.md, or it is named agents and a
// subdirectory holds markdown) or like an agent directory (it holds
// memory.md, or it is below a directory named agents and holds markdown)
// fails with an error matching ErrNotHive that says which directory was
// probably meant. Any other directory passes, empty or not, since agents
// may appear in it later; one that cannot be read is left for the caller
// to report.
func (h *Hive) Check() error {
	dir, abs := h.given, h.abs
	if _, err := os.Lstat(filepath.Join(abs, DefaultDir)); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if found, _ := h.Find(); len(found) > 0 {
		return nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil
	}
	underAgents := filepath.Base(filepath.Dir(abs)) == DefaultDir
	files := memoryIn(abs, entries)
	switch {
	case underAgents && (files.memory || files.markdown):
		return &notHiveError{fmt.Sprintf("%s has no agents/ directory; it looks like an agent directory: did you mean --hive %s?", dir, upDir(dir, abs, 2))}
	case files.memory:
		return &notHiveError{fmt.Sprintf("%s has no agents/ directory but holds memory.md, like an agent directory: a hive keeps each agent in agents/<id>/ below it; move the files to %s and pass that hive, or mine this directory once with memminer mine %s --wing ID",
			dir, filepath.Join(dir, DefaultDir, "<id>"), dir)}
	}
	named := filepath.Base(abs) == DefaultDir
	for _, e := range entries {
		if IsHidden(e.Name()) {
			continue
		}
		sub := filepath.Join(abs, e.Name())
		if info, err := os.Stat(sub); err != nil || !info.IsDir() {
			continue
		}
		subEntries, err := os.ReadDir(sub)
		if err != nil {
			continue
		}
		f := memoryIn(sub, subEntries)
		switch {
		case named && (f.memory || f.markdown):
			return &notHiveError{fmt.Sprintf("%s has no agents/ directory; did you mean --hive %s?", dir, upDir(dir, abs, 1))}
		case f.memory:
			return &notHiveError{fmt.Sprintf("%s has no agents/ directory but its subdirectories hold memory.md, like agent directories: a hive keeps them in agents/<id>/; move them into %s", dir, filepath.Join(dir, DefaultDir))}
		}
	}
	return nil
}

// memoryFiles is what memoryIn finds among a directory's files.
type memoryFiles struct {
	memory   bool // a memory.md, in any case
	markdown bool // any memory file (IsMemoryFile)
}

func memoryIn(dir string, entries []fs.DirEntry) memoryFiles {
	var m memoryFiles
	for _, e := range entries {
		if !IsMemoryFile(e.Name()) {
			continue
		}
		if info, err := os.Stat(filepath.Join(dir, e.Name())); err != nil || !info.Mode().IsRegular() {
			continue
		}
		m.markdown = true
		if isMainMemory(e.Name()) {
			m.memory = true
		}
	}
	return m
}

// upDir returns the directory n levels above given, written relative to
// given when it can be (abs is given made absolute).
func upDir(given, abs string, n int) string {
	p := filepath.Clean(given)
	for range n {
		if b := filepath.Base(p); b == "." || b == ".." || p == filepath.Dir(p) {
			p = abs // no lexical parent: continue from the absolute path
		}
		p, abs = filepath.Dir(p), filepath.Dir(abs)
	}
	return p
}
