package mine

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/memminer/memminer/hive"
)

// hiveJobs lists one job per agent directory of h. A matched directory
// that is no agent (its name is no wing id, its wing id is taken, it lies
// inside another) is reported and skipped; the others are mined.
func hiveJobs(h *hive.Hive) ([]job, []Problem, error) {
	agents, skippedAgents, err := h.Agents()
	if err != nil {
		return nil, nil, err
	}
	var jobs []job
	var skipped []Problem
	for _, s := range skippedAgents {
		msg := "agent directory not mined: " + s.Err.Error()
		if s.Reason == hive.BadName {
			msg = fmt.Sprintf("agent directory not mined: %v; rename it", s.Err)
		}
		skipped = append(skipped, Problem{Path: s.Path, Err: msg})
	}
	for _, a := range agents {
		real, err := filepath.EvalSymlinks(a.Root())
		if err != nil {
			real = a.Root() // gone since it was listed: its files fail to open
		}
		jobs = append(jobs, job{wing: a.Wing, root: a.Root(), isDir: true, real: real, base: a.Root(), hive: h, place: a.Rel})
	}
	if len(jobs) == 0 && len(skipped) == 0 {
		return nil, nil, fmt.Errorf("%s has no agent directories", filepath.Join(h.Dir(), hive.DefaultDir))
	}
	return jobs, skipped, nil
}

// Errors Mine returns that callers tell apart; the CLI says which flag to
// pass.
var (
	// ErrNeedsWing means a path to mine is neither a hive, an agents
	// directory nor an agent directory, so no wing id follows from it.
	ErrNeedsWing = errors.New("no wing follows from the path")
	// ErrAgentNeedsWing means Options.Agent was set for a mine of a whole
	// hive, whose agents each name their own wing.
	ErrAgentNeedsWing = errors.New("an agent name needs a wing; a hive is mined one wing per agent")
)

// needsWing is ErrNeedsWing for one path, with the advice.
type needsWingError struct{ path string }

func (e *needsWingError) Error() string {
	return fmt.Sprintf("mine %s: not a hive, an agents directory or an agent directory (agents/<id>/, or one holding memory.md), so no wing follows from it", e.path)
}

func (e *needsWingError) Is(target error) bool { return target == ErrNeedsWing }

// agentBase returns the directory whose relative paths name the files of
// a job mining root as one wing in note ids: the agent directory holding
// root when root lies in the configured hive, so mining a part of an agent
// directory derives the ids a mine of all of it does; otherwise root (a
// file's directory).
func agentBase(root string, isDir bool, configured *hive.Hive) string {
	base := root
	if !isDir {
		base = filepath.Dir(root)
	}
	if configured == nil {
		return base
	}
	loc := configured.Locate(base)
	if loc.Err != nil || loc.Rel == "" {
		return base
	}
	// base lies loc.Rel below its agent directory.
	for range strings.Split(loc.Rel, "/") {
		base = filepath.Dir(base)
	}
	return base
}
