package hive

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// Errors a Location carries, and WingDir returns, that callers tell apart.
var (
	// ErrOutsideHive means a path lies outside the hive, or is reached
	// through a symlink that leads out of it.
	ErrOutsideHive = errors.New("outside the hive")
	// ErrNoAgentDir means a path lies in the hive but in no agent
	// directory, or that no agent directory has the wing asked for.
	ErrNoAgentDir = errors.New("in no agent directory")
)

// Hive is a hive directory and the globs that find its agent directories.
// Open one with Open; its methods read the disk at every call, so they see
// agent directories come and go.
type Hive struct {
	given string // the directory as given to Open
	abs   string // given, absolute
	real  string // abs with its symlinks resolved (abs when it cannot be)
	globs Globs
}

// Open returns the hive at dir whose agent directories are agents/<id>
// and those the globs in agents match (see agentglob.Check). dir need not
// exist yet.
func Open(dir string, agents []string) (*Hive, error) {
	globs, err := NewGlobs(agents)
	if err != nil {
		return nil, err
	}
	return openGlobs(dir, globs)
}

func openGlobs(dir string, globs Globs) (*Hive, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("hive %s: %w", dir, err)
	}
	h := &Hive{given: dir, abs: abs, real: abs, globs: globs}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		h.real = r
	}
	return h, nil
}

// Dir returns the hive directory, absolute, as given (symlinks kept).
func (h *Hive) Dir() string { return h.abs }

// Globs returns the patterns that find the hive's agent directories.
func (h *Hive) Globs() Globs { return h.globs }

// Find lists the directories the globs match below the hive (symlinks to
// directories included), each once: by pattern, Default first, then by
// path. Matches that are no agents are marked (Inside, Outside); Agents
// sorts them out. A directory that does not exist matches nothing; the
// first other error (an unreadable directory) is returned with what was
// found.
func (h *Hive) Find() ([]Match, error) { return h.globs.find(h.abs) }

// Parents lists the directories below the hive in which agent directories
// can appear: those the leading elements of a pattern match (agents/ for
// Default), each once. The hive itself is not listed.
func (h *Hive) Parents() ([]Match, error) { return h.globs.parents(h.abs) }

// Rel returns path (absolute) relative to the hive, with the platform's
// separators, or false when it lies outside it. The path may name the hive
// as given or with its symlinks resolved, or reach it through a symlink of
// its own parent directory.
func (h *Hive) Rel(path string) (string, bool) {
	for _, root := range []string{h.abs, h.real} {
		if r, ok := within(root, path); ok {
			return r, true
		}
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		p := filepath.Join(dir, filepath.Base(path))
		for _, root := range []string{h.abs, h.real} {
			if r, ok := within(root, p); ok {
				return r, true
			}
		}
	}
	return "", false
}

// Contains reports whether path lies below the hive as given (by name: no
// symlink is resolved).
func (h *Hive) Contains(path string) bool {
	_, ok := within(h.abs, path)
	return ok
}

// LeadsOut reports whether path, named below the hive, really lies
// outside it: it is reached through a symlink that leads out, so it is in
// no agent directory (see Match.Outside). A path that cannot be resolved
// (gone) does not lead out.
func (h *Hive) LeadsOut(path string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	_, ok := within(h.real, real)
	return !ok
}

// Inside reports whether path lies strictly below dir, both absolute and
// cleaned, by name (resolve symlinks first to ask where a file really is).
func Inside(dir, path string) bool {
	_, ok := within(dir, path)
	return ok
}

// within returns path relative to root when it lies strictly below it.
func within(root, path string) (string, bool) {
	r, err := filepath.Rel(root, path)
	if err != nil || r == "." || r == ".." || filepath.IsAbs(r) || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return r, true
}

// Location is where a path lies in the hive: the agent directory it is or
// lies in, and its wing.
type Location struct {
	// Wing is the wing the agent directory's files are mined into; "" when
	// the path has none, and then Err says why.
	Wing string
	// AgentDir is the agent directory relative to the hive, `/`-separated;
	// "" when the path is in none.
	AgentDir string
	// Rel is the path relative to AgentDir, `/`-separated; "" for the
	// agent directory itself. It may be hidden (IsHiddenPath), and then is
	// never mined.
	Rel string
	// Err is nil when Wing is set, else an error matching ErrOutsideHive,
	// ErrNoAgentDir, or (the directory's name is no wing id)
	// ErrBadWingID.
	Err error
}

// Locate maps path (absolute; see Rel for the forms it may take) to its
// agent directory and wing, by names only. The wing is the agent
// directory's name, normalised: a path in a directory whose wing id an
// earlier agent directory takes has that wing too (Agents mines only the
// first), and a path in a matched directory inside another agent
// directory belongs to the outer one.
func (h *Hive) Locate(path string) Location {
	rel, ok := h.Rel(path)
	if !ok {
		return Location{Err: fmt.Errorf("%s: %w %s", path, ErrOutsideHive, h.abs)}
	}
	return h.locateRel(filepath.ToSlash(rel))
}

// locateRel is Locate of a `/`-separated path relative to the hive.
func (h *Hive) locateRel(rel string) Location {
	dir, below, ok := h.globs.AgentOf(rel)
	if !ok {
		return Location{Err: fmt.Errorf("%s: %w (agent directories: %s)", rel, ErrNoAgentDir, strings.Join(h.globs.Patterns(), ", "))}
	}
	loc := Location{AgentDir: dir, Rel: below}
	loc.Wing, loc.Err = NormalizeWingID(path.Base(dir))
	return loc
}

// Wings returns the wings of the hive's agent directories: the normalised
// names of agents/<id>/ and of the directories the globs match (symlinks
// to directories inside the hive included; links leading out of it,
// directories inside another agent directory and names that are no wing id
// left out), sorted and without duplicates. A hive without agent
// directories has none.
func (h *Hive) Wings() ([]string, error) {
	dirs, err := h.wingDirs()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range dirs {
		out = append(out, d.wing)
	}
	sort.Strings(out)
	return slices.Compact(out), nil
}

// WingDir returns the agent directory whose files are mined into wing: the
// one Agents lists for it. Its error matches ErrNoAgentDir when no agent
// directory has the wing, and carries Find's error when the hive cannot be
// read.
func (h *Hive) WingDir(wing string) (Agent, error) {
	agents, _, err := h.Agents()
	for _, a := range agents {
		if a.Wing == wing {
			return a, nil
		}
	}
	if err != nil {
		return Agent{}, fmt.Errorf("wing %s: %w", wing, err)
	}
	return Agent{}, fmt.Errorf("wing %s: %w of %s", wing, ErrNoAgentDir, h.abs)
}

// wingDir is a matched directory a wing's files may lie in.
type wingDir struct {
	wing string
	path string // Match.Path
	link bool   // reached through a symlink, which a walk of the hive does not enter
}

// wingDirs lists the matched directories with a wing: every match whose
// name is a wing id and that is neither inside another agent directory
// nor a link leading out of the hive. Directories with the same wing id
// are all listed (see Locate). What could be listed is returned with the
// first error.
func (h *Hive) wingDirs() ([]wingDir, error) {
	matches, err := h.Find()
	if errors.Is(err, syscall.ENOTDIR) {
		err = nil // a file where the globs want a directory holds no agents
	}
	if err != nil {
		err = fmt.Errorf("list agent directories: %w", err)
	}
	var out []wingDir
	for _, m := range matches {
		if m.Inside != "" || m.Outside {
			continue
		}
		w, werr := NormalizeWingID(path.Base(m.Rel))
		if werr != nil {
			continue
		}
		out = append(out, wingDir{wing: w, path: m.Path, link: m.Link || m.ViaLink})
	}
	return out, err
}
