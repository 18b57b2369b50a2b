package mine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/memminer/memminer/internal/agentglob"
	"github.com/memminer/memminer/palace"
)

// Agent is an agent directory of a hive: agents/<id>/, or a directory one
// of the configured agents globs matches. Its wing is its name, normalised.
type Agent struct {
	agentglob.Match
	Wing string
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
	// (agentglob.Match.Outside).
	OutsideHive
	// Aliased means it is a symlink to a directory that is, holds or lies
	// in another agent directory (or the link itself): its files would be
	// mined twice, and inotify, which watches a directory once, would
	// report the other agent's edits as this one's.
	Aliased
)

// SkippedAgent is a directory the agents globs match that is not an agent.
type SkippedAgent struct {
	agentglob.Match
	Reason SkipReason
	// Err says why: for BadName the wing id's error, otherwise a sentence
	// that also says what to do.
	Err error
}

// HiveAgents lists the agent directories of the hive at dir, in the order
// of agentglob.Set.Find (agents/<id> first, then each configured pattern
// in turn, each by path), and the directories the globs match that are
// not agents, for the caller to report. A symlink to a directory inside
// the hive is an agent named by the link (Path is the link; Target where
// it leads); one that leads out of the hive is skipped as OutsideHive. The
// error is Find's: an unreadable directory, with what could be listed.
//
// Two directories with one wing id (agents/pam and bots/pam, or agents/Pam
// and agents/pam) are never mixed into one wing, and neither wins
// silently: the first is the agent, the others are skipped as SameWing
// and reported until renamed. Mining neither instead would stop keeping
// the wing current the moment a stray duplicate appears, leaving the
// agent's new facts unsearchable. Mining the first loses nothing: the
// skipped directory's markdown is never touched, notes it gave the wing
// before stay (a mine removes only sources below the root it mines, or of
// a root that is gone), and since agents/<id> comes first, adding a glob
// never takes a wing away from it.
func HiveAgents(dir string, globs agentglob.Set) ([]Agent, []SkippedAgent, error) {
	matches, err := globs.Find(dir)
	var agents []Agent
	var skipped []SkippedAgent
	first := map[string]string{} // wing id → Rel of its agent directory
	// Where the directories mined so far really are, by Rel: a link may
	// not lead into, onto or around any of them. Plain directories come
	// first, so a link never takes a directory's place.
	// Resolving every directory costs a walk of its path, so it is done
	// only for a hive that has a link to check.
	real := map[string]string{}
	if slices.ContainsFunc(matches, func(m agentglob.Match) bool { return m.Link }) {
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
			skipped = append(skipped, SkippedAgent{Match: m, Reason: OutsideHive, Err: fmt.Errorf(
				"it is a symlink to %s, outside the hive; agent directories must lie inside the hive: move the directory in (links inside the hive are followed)", m.Target)})
			continue
		}
		if m.Link && m.Inside == "" {
			if other := aliasOf(m, real); other != "" {
				skipped = append(skipped, SkippedAgent{Match: m, Reason: Aliased, Err: fmt.Errorf(
					"it is a symlink to %s, which is, holds or lies in %s; its files would be mined twice: remove the link", m.Target, other)})
				continue
			}
			real[m.Rel] = m.Target
		}
		if m.Inside != "" {
			skipped = append(skipped, SkippedAgent{Match: m, Reason: Nested, Err: fmt.Errorf(
				"it lies inside agent directory %s, whose wing holds its files; move it out, or change the agents globs, to make it an agent of its own", m.Inside)})
			continue
		}
		wing, werr := palace.NormalizeWingID(path.Base(m.Rel)) // a link's own name, not its target's
		if werr != nil {
			skipped = append(skipped, SkippedAgent{Match: m, Reason: BadName, Err: werr})
			continue
		}
		if rel, dup := first[wing]; dup {
			skipped = append(skipped, SkippedAgent{Match: m, Reason: SameWing, Err: fmt.Errorf(
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
// "this link" when the target holds the link itself (a link to the hive,
// or to agents/); "" when it overlaps nothing.
func aliasOf(m agentglob.Match, real map[string]string) string {
	if parent, err := filepath.EvalSymlinks(filepath.Dir(m.Path)); err == nil && agentglob.Overlap(m.Target, filepath.Join(parent, filepath.Base(m.Path))) {
		return "the directory holding the link"
	}
	rels := make([]string, 0, len(real))
	for rel := range real {
		rels = append(rels, rel)
	}
	sort.Strings(rels) // name the same one every time
	for _, rel := range rels {
		if agentglob.Overlap(m.Target, real[rel]) {
			return "agent directory " + rel
		}
	}
	return ""
}

// hiveOf returns the hive to mine one wing per agent when root is one, and
// the globs that find its agents; "" when root is to be mined as one wing.
// A hive has an agents/ directory, or has directories the configured
// globs match; the agents/ directory itself is mined as its hive's agents
// with the default glob alone, since the others reach outside it. An
// agent directory is never a hive, even when the globs match directories
// inside it: it is known as one when it lies in the configured hive
// (configured, when set) and otherwise when its parent is an agents/
// directory.
func hiveOf(root string, info fs.FileInfo, globs agentglob.Set, configured string) (string, agentglob.Set) {
	if !info.IsDir() {
		return "", globs
	}
	agentDir, _ := agentDirOf(root, globs, configured)
	if fi, err := os.Stat(filepath.Join(root, agentglob.DefaultDir)); err == nil && fi.IsDir() {
		return root, globs
	}
	if filepath.Base(root) == agentglob.DefaultDir {
		return filepath.Dir(root), agentglob.Set{}
	}
	if globs.HasExtra() && !agentDir {
		if found, _ := globs.Find(root); len(found) > 0 {
			return root, globs
		}
	}
	return "", globs
}

// hiveJobs lists one job per agent directory of hive. A matched directory
// that is no agent (its name is no wing id, its wing id is taken, it lies
// inside another) is reported and skipped; the others are mined.
func hiveJobs(hive string, globs agentglob.Set) ([]job, []Problem, error) {
	agents, skippedAgents, err := HiveAgents(hive, globs)
	if err != nil {
		return nil, nil, err
	}
	var jobs []job
	var skipped []Problem
	for _, s := range skippedAgents {
		msg := "agent directory not mined: " + s.Err.Error()
		if s.Reason == BadName {
			msg = fmt.Sprintf("agent directory not mined: %v; rename it", s.Err)
		}
		skipped = append(skipped, Problem{Path: s.Path, Err: msg})
	}
	for _, a := range agents {
		root := a.Path
		if a.Link {
			root = a.Target // the walk does not follow a root that is a link
		}
		jobs = append(jobs, job{wing: a.Wing, root: root, isDir: true})
	}
	if len(jobs) == 0 && len(skipped) == 0 {
		return nil, nil, fmt.Errorf("%s has no agent directories", filepath.Join(hive, agentglob.DefaultDir))
	}
	return jobs, skipped, nil
}

// agentDirOf reports whether dir is, or lies in, an agent directory: in
// the configured hive (when set) by the agents globs, otherwise when its
// parent is an agents/ directory. self is set when dir is the agent
// directory itself, or holds a memory.md as agent directories do.
func agentDirOf(dir string, globs agentglob.Set, configured string) (agent, self bool) {
	agent = filepath.Base(filepath.Dir(dir)) == agentglob.DefaultDir
	self = agent
	if configured != "" {
		if h, err := filepath.Abs(configured); err == nil {
			if r, err := filepath.EvalSymlinks(h); err == nil {
				h = r
			}
			if rel, err := filepath.Rel(h, dir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
				var below string
				_, below, agent = globs.AgentOf(filepath.ToSlash(rel))
				self = agent && below == ""
			}
		}
	}
	if !self {
		if fi, err := os.Stat(filepath.Join(dir, "memory.md")); err == nil && fi.Mode().IsRegular() {
			self = true
		}
	}
	return agent, self
}

// ErrNeedsWing means a path to mine is neither a hive, an agents
// directory nor an agent directory, so no wing id follows from it.
var ErrNeedsWing = errors.New("no wing follows from the path")

// needsWing is ErrNeedsWing for one path, with the advice.
type needsWingError struct{ path string }

func (e *needsWingError) Error() string {
	return fmt.Sprintf("mine %s: not a hive, an agents directory or an agent directory (agents/<id>/, or one holding memory.md), so no wing follows from it; pass --wing ID to mine it into wing ID", e.path)
}

func (e *needsWingError) Is(target error) bool { return target == ErrNeedsWing }
