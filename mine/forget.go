package mine

import (
	"errors"
	"fmt"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/palace"
)

// ForgetOptions configure Forget.
type ForgetOptions struct {
	// Hive and Agents locate the hive's agent directories (see Options):
	// a wing whose agent directory is still there is not forgotten unless
	// Force is set, since the next mine of the hive brings it back.
	Hive   string
	Agents []string
	Force  bool
	// DryRun reports what would be forgotten and changes nothing.
	DryRun bool
}

// Forgotten tells what Forget took out of the palace (or would, on a dry run).
type Forgotten struct {
	palace.RemovedWing
	DryRun bool `json:"dry_run"`
}

// ErrAgentExists means the wing to forget still has its agent directory
// in the hive.
var ErrAgentExists = errors.New("the wing's agent directory still exists")

type agentExistsError struct{ wing, dir string }

func (e *agentExistsError) Error() string {
	return fmt.Sprintf("wing %s is mined from the agent directory %s, which still exists, so the next mine of the hive (the daemon's, within minutes) brings it back; move the directory out of the hive first", e.wing, e.dir)
}

func (e *agentExistsError) Is(target error) bool { return target == ErrAgentExists }

// Forget takes wing out of the palace: its notes, vectors and manifest
// entry. The markdown it was mined from is not touched. The error matches
// palace.ErrUnknownWing for a wing the palace does not have, and
// ErrAgentExists (unless opts.Force) when the hive still has the wing's
// agent directory.
func Forget(p *palace.Palace, wing string, opts ForgetOptions) (Forgotten, error) {
	if err := p.CheckWing(wing); err != nil {
		return Forgotten{}, err
	}
	if opts.Hive != "" && !opts.Force {
		h, err := hive.Open(opts.Hive, opts.Agents)
		if err != nil {
			return Forgotten{}, err
		}
		// An unreadable part of the hive hides no agent of this wing
		// that Agents could list; what it lists is checked.
		if a, err := h.WingDir(wing); err == nil {
			return Forgotten{}, &agentExistsError{wing: wing, dir: a.Path}
		}
	}
	if opts.DryRun {
		for _, w := range p.Wings() {
			if w.ID == wing {
				f := Forgotten{DryRun: true, RemovedWing: palace.RemovedWing{Wing: wing, Notes: w.Notes, Roots: append([]string{}, w.Roots...), Sources: []string{}}}
				for _, s := range p.Sources(wing) {
					f.Sources = append(f.Sources, s.Path)
				}
				return f, nil
			}
		}
	}
	r, err := p.RemoveWing(wing)
	if err != nil {
		return Forgotten{}, err
	}
	if err := p.Flush(); err != nil {
		return Forgotten{RemovedWing: r}, fmt.Errorf("forget wing %s: %w", wing, err)
	}
	return Forgotten{RemovedWing: r}, nil
}
