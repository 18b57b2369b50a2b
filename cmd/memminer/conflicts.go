package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/conflicts"
	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
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
	l, err := a.service().Conflicts(ctx, api.ConflictsRequest{Wing: wing})
	if errors.Is(err, palace.ErrUnknownWing) {
		return conflicts.List{}, nothingFound(usagef("--wing: %v", err))
	}
	if err != nil {
		return conflicts.List{}, conflictsError(err)
	}
	return l, nil
}

// conflictsError is err of the service's conflicts or their merge with
// the CLI's advice: an unknown --wing, or nothing to scan, is a usage
// error.
func conflictsError(err error) error {
	switch {
	case errors.Is(err, palace.ErrUnknownWing):
		return usagef("--wing: %v", err)
	case errors.Is(err, conflicts.ErrNothingToScan):
		return nothingFound(usagef("no hive to scan: pass --hive DIR, set MEMMINER_HIVE, or put hive: in the config file (the palace has no wings to take directories from)"))
	}
	return err
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
