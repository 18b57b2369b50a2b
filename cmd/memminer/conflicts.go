package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/local"
	"github.com/memminer/memminer/palace"
)

func (a *app) conflictsCmd() *cobra.Command {
	var (
		wing   string
		asJSON bool
		check  bool
	)
	cmd := &cobra.Command{
		Use:   "conflicts",
		Short: "List open Syncthing conflict copies of the hive's memory files",
		Long: `List the open conflicts: Syncthing conflict copies
(<name>.sync-conflict-<date>-<time>-<device><ext>) that still exist in the
hive. Syncthing makes one when two machines change the same file before
they sync: the version of the device named as the winner stays under the
original name, the other one becomes the copy, and memminer never mines it.
Merge what the copy holds into the original, then delete the copy.

When the daemon (memminer run) serves the palace, the list is its registry
of conflicts, kept up to date from Syncthing's events and checked against
the hive (the wing's agent directory, or all of it) at every request, so it
is right the moment it is asked. Otherwise the hive (--hive, MEMMINER_HIVE
or hive: in the config file; without one, the directories the palace's
wings were mined from) is scanned now. Conflicts the daemon recorded keep
their record; for any other copy, "detected" is the copy's modification
time and "found_by" is "scan", and the device name is known only if a
recorded conflict names the same device.

--wing must name a wing of the palace or an agent directory of the hive
(agents/<id>/, or one the agents globs of the config match); any other is
a usage error (exit status 2) naming the known wings. A copy in a directory
whose wing id an earlier agent directory has counts for that wing.

With --check the command is the check agents and scripts run before they
write: exit status 3 when there is an open conflict (in --wing ID, or
anywhere), 0 when there is none.

Detection, alerts and the JSON fields: docs/conflicts.md.`,
		Example: `  memminer conflicts
  memminer conflicts --wing dwight --json
  memminer conflicts --wing dwight --check || echo "merge the copy first"`,
		Args: exactArgs(0, "conflicts takes no arguments; pick a wing with --wing ID"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			wing, err := normalizeWing(wing)
			if err != nil {
				return err
			}
			l, err := a.openConflicts(cmd.Context(), wing)
			if err != nil {
				return err
			}
			if asJSON {
				if err := writeJSON(a.stdout, l); err != nil {
					return err
				}
			} else {
				printConflicts(a.stdout, l, wing)
			}
			if check && len(l.Conflicts) > 0 {
				return &codeError{code: exitConflict, msg: conflictsOpenMessage(wing, len(l.Conflicts))}
			}
			if l.ScanError != nil {
				return fmt.Errorf("the scan was incomplete, conflicts may be missing: %w", errors.New(*l.ScanError))
			}
			return nil
		},
	}
	cmd.AddCommand(a.conflictsMergeCmd())
	f := cmd.Flags()
	f.StringVar(&wing, "wing", "", "only this wing's conflicts (the agent id of agents/<id>/, or of a directory the agents globs match)")
	settingFlags(f, "hive") // scanned when no daemon runs
	f.BoolVar(&asJSON, "json", false, "print the conflicts as JSON")
	f.BoolVar(&check, "check", false, "exit with status 3 when there is an open conflict")
	return cmd
}

// openConflicts lists the open conflicts as the conflicts command does,
// in wing (a normalized id; empty: every wing): the daemon's registry
// when one serves the palace, otherwise a scan. Paths are absolute, so
// JSON is the same from every working directory; printConflicts shows them
// relative to it. A scan that found some
// copies but not all returns them with ScanError set and no error.
func (a *app) openConflicts(ctx context.Context, wing string) (conflicts.List, error) {
	l, err := a.service().Conflicts(ctx, wing)
	switch {
	case errors.Is(err, palace.ErrUnknownWing):
		return conflicts.List{}, nothingFound(usagef("--wing: %v", err))
	case err != nil:
		return conflicts.List{}, err
	}
	return l, nil
}

// conflictsOpenMessage says why writing is refused: n open conflicts in
// wing (empty: the hive).
func conflictsOpenMessage(wing string, n int) string {
	where := "the hive has"
	if wing != "" {
		where = "wing " + wing + " has"
	}
	return fmt.Sprintf("%s %d open %s; merge first", where, n, plural(n, "conflict", "conflicts"))
}

// scanConflicts lists the open conflicts without a daemon: a scan of the
// hive, or of the palace's wing roots when no hive is configured, reusing
// the records of the registry the daemon left. An unknown wing is a usage
// error naming the known ones. On a partial failure it returns what it
// found along with the error; Conflicts is nil only when nothing could be
// scanned.
func (a *app) scanConflicts(ctx context.Context, wing string) (conflicts.List, error) {
	if a.cfg.Hive != "" {
		if wing != "" {
			if err := a.checkHiveWing(ctx, wing); err != nil {
				return conflicts.List{}, err
			}
		}
		return a.scanFound(ctx, wing, nil)
	}
	roots, err := a.wingRoots(ctx, wing)
	if err != nil {
		return conflicts.List{}, err
	}
	return a.scanFound(ctx, wing, roots)
}

// scanFound scans the configured hive (only wing's part when set) or,
// without a hive, roots, reusing the registry's records.
func (a *app) scanFound(ctx context.Context, wing string, roots []conflicts.WingRoots) (conflicts.List, error) {
	known, err := conflicts.ReadRegistry(a.cfg.Palace)
	if err != nil {
		fmt.Fprintf(a.stderr, "memminer: %v; listing what is on disk without it\n", err)
		if errors.Is(err, conflicts.ErrCorruptRegistry) {
			a.setAsideRegistry(ctx)
		}
		known = nil
	}
	var found []conflicts.Conflict
	if a.cfg.Hive != "" {
		if _, err := os.Stat(a.cfg.Hive); err != nil {
			return conflicts.List{}, fmt.Errorf("hive: %w", err)
		}
		found, err = conflicts.ScanHive(ctx, a.cfg.Hive, a.cfg.Agents, wing, known)
	} else {
		found, err = conflicts.ScanWings(ctx, roots, known)
	}
	if found == nil && err != nil {
		return conflicts.List{}, err
	}
	l := conflicts.List{Conflicts: found}.Wing(wing)
	if err != nil {
		l.ScanError = new(err.Error())
	}
	return l, err
}

// openConflictCount counts the open conflicts as `memminer --no-daemon
// conflicts` finds them, for status without a daemon: a scan of the hive,
// or of the wing roots of p (the open palace) when no hive is configured.
// What cannot be scanned is said on stderr and counts nothing.
func (a *app) openConflictCount(ctx context.Context, p *palace.Palace) int {
	var roots []conflicts.WingRoots
	if a.cfg.Hive == "" {
		for _, w := range p.Wings() {
			roots = append(roots, conflicts.WingRoots{Wing: w.ID, Roots: w.Roots})
		}
		if len(roots) == 0 {
			return 0 // nothing mined, no hive: nothing to scan
		}
	}
	l, err := a.scanFound(ctx, "", roots)
	if err != nil {
		fmt.Fprintf(a.stderr, "memminer: open conflicts may be undercounted: %v\n", err)
	}
	return len(l.Conflicts)
}

// checkHiveWing returns a usage error naming the known wings when wing is
// neither an agent directory of the configured hive nor a wing of the
// palace: conflicts.KnownWing, the daemon's rule.
func (a *app) checkHiveWing(ctx context.Context, wing string) error {
	h, err := hive.Open(a.cfg.Hive, a.cfg.Agents)
	if err != nil {
		return nil // a bad glob is reported by the scan
	}
	err = conflicts.KnownWing(wing, h, conflicts.Wings{
		Has: func(wing string) (bool, error) {
			ws, err := a.palaceWings(ctx, wing)
			return len(ws) > 0, err
		},
		All: func() ([]string, error) {
			all, err := a.palaceWings(ctx, "")
			ids := make([]string, len(all))
			for i, w := range all {
				ids[i] = w.ID
			}
			return ids, err
		},
	})
	if errors.Is(err, palace.ErrUnknownWing) {
		return nothingFound(usagef("--wing: %v", err))
	}
	return err
}

// palaceWings opens the palace read-only and returns its wings, or only
// wing when it is set and exists.
func (a *app) palaceWings(ctx context.Context, wing string) ([]palace.WingInfo, error) {
	var only []string
	if wing != "" {
		only = []string{wing}
	}
	p, err := a.openPalace(ctx, nil, local.AsIs, only)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	var out []palace.WingInfo
	for _, w := range p.Wings() {
		if wing == "" || w.ID == wing {
			out = append(out, w)
		}
	}
	return out, nil
}

// wingRoots returns the directories the palace's wings (or one wing) were
// mined from. A wing the palace lacks is a usage error naming the known
// wings.
func (a *app) wingRoots(ctx context.Context, wing string) ([]conflicts.WingRoots, error) {
	ws, err := a.palaceWings(ctx, wing)
	if err != nil {
		return nil, err
	}
	var out []conflicts.WingRoots
	for _, w := range ws {
		out = append(out, conflicts.WingRoots{Wing: w.ID, Roots: w.Roots})
	}
	if len(out) > 0 {
		return out, nil
	}
	if wing != "" {
		all, err := a.palaceWings(ctx, "")
		if err != nil {
			return nil, err
		}
		if len(all) > 0 {
			known := make([]string, len(all))
			for i, w := range all {
				known[i] = w.ID
			}
			return nil, nothingFound(usagef("--wing: %v", conflicts.UnknownWingError(wing, known)))
		}
	}
	return nil, nothingFound(usagef("no hive to scan: pass --hive DIR, set MEMMINER_HIVE, or put hive: in the config file (the palace has no wings to take directories from)"))
}

func printConflicts(w io.Writer, l conflicts.List, wing string) {
	in := ""
	if wing != "" {
		in = " in wing " + wing
	}
	n := len(l.Conflicts)
	if n == 0 {
		fmt.Fprintf(w, "no open conflicts%s\n", in)
		return
	}
	fmt.Fprintf(w, "%d open %s%s:\n", n, plural(n, "conflict", "conflicts"), in)
	for _, c := range l.Conflicts {
		cw := c.Wing
		if cw == "" {
			cw = "(no wing)"
		}
		if c.Markers {
			fmt.Fprintf(w, "\n%s: %s\n  holds Git conflict markers (<<<<<<< ======= >>>>>>>); detected %s by %s\n",
				cw, displayPath(c.Path), c.Detected.UTC().Format("2006-01-02T15:04:05Z07:00"), c.FoundBy)
			continue
		}
		winner := "unknown"
		switch {
		case c.Device != "" && c.DeviceName != "":
			winner = c.Device + " (" + c.DeviceName + ")"
		case c.Device != "":
			winner = c.Device
		}
		fmt.Fprintf(w, "\n%s: %s\n  conflicts with %s\n  winning device %s; detected %s by %s\n",
			quote.Line(cw), quote.Line(displayPath(c.Path)), quote.Line(displayPath(c.Original)), quote.Line(winner), c.Detected.UTC().Format("2006-01-02T15:04:05Z07:00"), c.FoundBy)
		switch s := c.AutoMerge; {
		case s == nil:
		case s.State == conflicts.AutoMergeRetrying && s.NextAttempt != nil:
			fmt.Fprintf(w, "  automatic merge: retrying (%s); %d %s so far, next at %s\n", quote.Line(s.Reason), s.Attempts, plural(s.Attempts, "attempt", "attempts"), s.NextAttempt.UTC().Format(time.RFC3339))
		default:
			fmt.Fprintf(w, "  automatic merge: needs a person (%s)\n", quote.Line(s.Reason))
		}
	}
	if slices.ContainsFunc(l.Conflicts, func(c conflicts.Conflict) bool { return c.Markers }) {
		fmt.Fprintln(w, "\nResolve a file with Git conflict markers by keeping what each side holds and removing the\nmarker lines, then git add it; memminer git setup makes Git merge memory files note by note.")
		if !slices.ContainsFunc(l.Conflicts, func(c conflicts.Conflict) bool { return !c.Markers }) {
			return
		}
	}
	fmt.Fprintln(w, "\nMerge them note by note with memminer conflicts merge (it shows the merge; --apply writes it),\nor merge each copy into its original by hand and delete the copy.")
}

// setAsideRegistry moves a corrupt conflict registry aside when no writer
// holds the palace (else the writer's next save replaces it), so the
// corruption is reported once, not by every command until a daemon runs.
func (a *app) setAsideRegistry(ctx context.Context) {
	// No wing is loaded: only the lock is wanted.
	p, err := a.openPalace(ctx, nil, local.AsIs, []string{"-"})
	if err != nil {
		return
	}
	defer p.Close()
	if p.Lock(ctx, 0) != nil {
		return
	}
	if aside, err := conflicts.SetAsideCorrupt(a.cfg.Palace); err != nil {
		fmt.Fprintf(a.stderr, "memminer: %v\n", err)
	} else if aside != "" {
		fmt.Fprintf(a.stderr, "memminer: moved the corrupt registry aside to %s; conflicts are recorded again from what is on disk\n", aside)
	}
}
