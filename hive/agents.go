package hive

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Agent is an agent directory of a hive: agents/<id>/, or a directory one
// of the agents globs matches. Its wing is its name, normalised.
type Agent struct {
	Match
	Wing string
}

// Root returns the directory a mine of the agent walks: Path, or for a
// symlink its Target (a walk does not follow a root that is a link).
func (a Agent) Root() string {
	if a.Link {
		return a.Target
	}
	return a.Path
}

// SkipReason says why a directory the agents globs match is no agent.
type SkipReason int

const (
	// BadName means the directory's name is no valid wing id.
	BadName SkipReason = iota + 1
	// SameWing means an agent directory listed before it has the same
	// wing id.
	SameWing
	// Nested means it lies inside another agent directory, whose wing
	// holds its files.
	Nested
	// OutsideHive means it is a symlink that leads out of the hive
	// (Match.Outside).
	OutsideHive
	// Aliased means it is a symlink to a directory that is, holds or lies
	// in another agent directory (or the link itself): its files would be
	// mined twice, and inotify, which watches a directory once, would
	// report the other agent's edits as this one's.
	Aliased
)

// Skipped is a directory the agents globs match that is not an agent.
type Skipped struct {
	Match
	Reason SkipReason
	// Err says why: for BadName the wing id's error (matching
	// ErrBadWingID), otherwise a sentence that also says what to do.
	Err error
}

// Agents lists the agent directories of the hive, in the order of Find,
// and the directories the globs match that are not agents, for the caller
// to report. The rules are the package's (see the package doc). The error
// is Find's: an unreadable directory, with what could be listed.
func (h *Hive) Agents() ([]Agent, []Skipped, error) {
	matches, err := h.Find()
	var agents []Agent
	var skipped []Skipped
	first := map[string]string{} // wing id → Rel of its agent directory
	// Where the directories listed so far really are, by Rel: a link may
	// not lead into, onto or around any of them. Plain directories come
	// first, so a link never takes a directory's place.
	// Resolving every directory costs a walk of its path, so it is done
	// only for a hive that has a link to check.
	real := map[string]string{}
	if slices.ContainsFunc(matches, func(m Match) bool { return m.Link }) {
		for _, m := range matches {
			if !m.Link && m.Inside == "" {
				if r, rerr := filepath.EvalSymlinks(m.Path); rerr == nil {
					real[m.Rel] = r
				}
			}
		}
	}
	for _, m := range matches {
		if m.Link && m.Target == "" {
			continue // a link that broke since it was listed
		}
		if m.Outside {
			skipped = append(skipped, Skipped{Match: m, Reason: OutsideHive, Err: fmt.Errorf(
				"it is a symlink to %s, outside the hive; agent directories must lie inside the hive: move the directory in (links inside the hive are followed)", m.Target)})
			continue
		}
		if m.Link && m.Inside == "" {
			if other := aliasOf(m, real); other != "" {
				skipped = append(skipped, Skipped{Match: m, Reason: Aliased, Err: fmt.Errorf(
					"it is a symlink to %s, which is, holds or lies in %s; its files would be mined twice: remove the link", m.Target, other)})
				continue
			}
			real[m.Rel] = m.Target
		}
		if m.Inside != "" {
			skipped = append(skipped, Skipped{Match: m, Reason: Nested, Err: fmt.Errorf(
				"it lies inside agent directory %s, whose wing holds its files; move it out, or change the agents globs, to make it an agent of its own", m.Inside)})
			continue
		}
		wing, werr := NormalizeWingID(path.Base(m.Rel)) // a link's own name, not its target's
		if werr != nil {
			skipped = append(skipped, Skipped{Match: m, Reason: BadName, Err: werr})
			continue
		}
		if rel, dup := first[wing]; dup {
			skipped = append(skipped, Skipped{Match: m, Reason: SameWing, Err: fmt.Errorf(
				"wing id %q is taken by agent directory %s, which is mined into it; rename this directory, or change the agents globs, to mine it", wing, rel)})
			continue
		}
		first[wing] = m.Rel
		agents = append(agents, Agent{Match: m, Wing: wing})
	}
	return agents, skipped, err
}

// aliasOf returns what a link m overlaps: the Rel of an agent directory in
// real whose real path is its target, lies inside it or holds it, or
// "the directory holding the link" when the target holds the link itself
// (a link to the hive, or to agents/); "" when it overlaps nothing.
func aliasOf(m Match, real map[string]string) string {
	if parent, err := filepath.EvalSymlinks(filepath.Dir(m.Path)); err == nil && overlap(m.Target, filepath.Join(parent, filepath.Base(m.Path))) {
		return "the directory holding the link"
	}
	rels := make([]string, 0, len(real))
	for rel := range real {
		rels = append(rels, rel)
	}
	sort.Strings(rels) // name the same one every time
	for _, rel := range rels {
		if overlap(m.Target, real[rel]) {
			return "agent directory " + rel
		}
	}
	return ""
}

// MinedAsHive reports whether root (absolute, symlinks resolved), given
// to mine, is a hive to mine one wing per agent, and returns that hive: a
// directory with an agents/ directory, or with directories the globs
// match. The agents/ directory itself is mined as its hive's agents with
// Default alone, since the other globs reach outside it. An agent
// directory is never a hive, even when the globs match directories inside
// it: it is known as one when it lies in the configured hive (when set)
// and otherwise when its parent is an agents/ directory.
func MinedAsHive(root string, info fs.FileInfo, globs Globs, configured string) (*Hive, bool) {
	if !info.IsDir() {
		return nil, false
	}
	agentDir, _ := InAgentDir(root, globs, configured)
	open := func(dir string, g Globs) (*Hive, bool) {
		h, err := openGlobs(dir, g)
		return h, err == nil
	}
	if fi, err := os.Stat(filepath.Join(root, DefaultDir)); err == nil && fi.IsDir() {
		return open(root, globs)
	}
	if filepath.Base(root) == DefaultDir {
		return open(filepath.Dir(root), Globs{})
	}
	if globs.HasExtra() && !agentDir {
		if found, _ := globs.find(root); len(found) > 0 {
			return open(root, globs)
		}
	}
	return nil, false
}

// InAgentDir reports whether dir (absolute, symlinks resolved) is, or
// lies in, an agent directory: in the configured hive (when set) by the
// globs, otherwise when its parent is an agents/ directory. self is set
// when dir is the agent directory itself, or holds a memory.md (or a
// machine's memory file) as agent directories do.
func InAgentDir(dir string, globs Globs, configured string) (inside, self bool) {
	inside = filepath.Base(filepath.Dir(dir)) == DefaultDir
	self = inside
	if configured != "" {
		if h, err := filepath.Abs(configured); err == nil {
			if r, err := filepath.EvalSymlinks(h); err == nil {
				h = r
			}
			if rel, err := filepath.Rel(h, dir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				var below string
				_, below, inside = globs.AgentOf(filepath.ToSlash(rel))
				self = inside && below == ""
			}
		}
	}
	if !self {
		self = holdsMainMemory(dir)
	}
	return inside, self
}

// holdsMainMemory reports whether dir holds a regular file IsMainMemoryFile
// names.
func holdsMainMemory(dir string) bool {
	if fi, err := os.Stat(filepath.Join(dir, MemoryFileName)); err == nil && fi.Mode().IsRegular() {
		return true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, ok := MachineOf(e.Name()); ok && e.Type().IsRegular() {
			return true
		}
	}
	return false
}
