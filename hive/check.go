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
// Hive.Check). Check's errors are *NotHiveError.
var ErrNotHive = errors.New("not a hive")

// Resemblance is what a directory that is no hive looks like.
type Resemblance int

const (
	// AgentsDirectory: it is named agents and a subdirectory holds
	// markdown; Meant is its parent.
	AgentsDirectory Resemblance = iota + 1
	// AgentDirectory: it lies in a directory named agents and holds
	// markdown; Meant is the hive two levels up.
	AgentDirectory
	// HoldsMemory: it holds memory.md, like an agent directory; Meant is
	// where its files belong, DIR/agents/<id>.
	HoldsMemory
	// SubdirsHoldMemory: its subdirectories hold memory.md, like agent
	// directories; Meant is where they belong, DIR/agents.
	SubdirsHoldMemory
)

// NotHiveError is ErrNotHive with what the directory looks like and the
// directory probably meant.
type NotHiveError struct {
	// Dir is the directory as given.
	Dir   string
	Looks Resemblance
	// Meant is, for AgentsDirectory and AgentDirectory, the hive probably
	// meant (relative when Dir is); otherwise where the agent files belong.
	Meant string
}

func (e *NotHiveError) Error() string {
	switch e.Looks {
	case AgentsDirectory:
		return fmt.Sprintf("%s has no agents/ directory; it looks like the agents directory of hive %s", e.Dir, e.Meant)
	case AgentDirectory:
		return fmt.Sprintf("%s has no agents/ directory; it looks like an agent directory of hive %s", e.Dir, e.Meant)
	case HoldsMemory:
		return fmt.Sprintf("%s has no agents/ directory but holds memory.md, like an agent directory: a hive keeps each agent in agents/<id>/ below it; move the files to %s", e.Dir, e.Meant)
	default:
		return fmt.Sprintf("%s has no agents/ directory but its subdirectories hold memory.md, like agent directories: a hive keeps them in agents/<id>/; move them into %s", e.Dir, e.Meant)
	}
}

// Is reports whether target is ErrNotHive.
func (e *NotHiveError) Is(target error) bool { return target == ErrNotHive }

// Check checks that the hive is one. A directory with neither agents/ nor
// directories the globs match that looks like an agents directory (one of
// its subdirectories holds memory.md, or it is named agents and a
// subdirectory holds markdown) or like an agent directory (it holds
// memory.md, or it is below a directory named agents and holds markdown)
// fails with a *NotHiveError (matching ErrNotHive) that says which
// directory was probably meant. Any other directory passes, empty or not, since agents
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
		return &NotHiveError{Dir: dir, Looks: AgentDirectory, Meant: upDir(dir, abs, 2)}
	case files.memory:
		return &NotHiveError{Dir: dir, Looks: HoldsMemory, Meant: filepath.Join(dir, DefaultDir, "<id>")}
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
			return &NotHiveError{Dir: dir, Looks: AgentsDirectory, Meant: upDir(dir, abs, 1)}
		case f.memory:
			return &NotHiveError{Dir: dir, Looks: SubdirsHoldMemory, Meant: filepath.Join(dir, DefaultDir)}
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
		if IsMainMemoryFile(e.Name()) {
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
