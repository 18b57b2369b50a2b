package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
)

func (a *app) forgetCmd() *cobra.Command {
	var (
		wing                  string
		force, dryRun, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "forget --wing ID",
		Short: "Remove a wing's notes, vectors and manifest entry",
		Long: `Remove a wing from the palace: its notes, its vectors and its manifest
entry. The markdown it was mined from is not touched. Use it to undo a mine
into the wrong wing.

While the hive (--hive, MEMMINER_HIVE, hive: in the config, else the
daemon's) still has the wing's agent directory, forget refuses: the next
mine of the hive, the daemon's within minutes, would bring the wing back.
Move the directory out of the hive first, or pass --force. When the daemon
(memminer run) holds the palace, it does the forgetting. The JSON:
docs/mining.md ("Forgetting a wing").`,
		Example: `  memminer forget --wing bin --dry-run
  memminer forget --wing bin
  memminer forget --wing dwight --force`,
		Args: exactArgs(0, "forget takes no arguments; name the wing with --wing ID"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if wing == "" {
				return usagef("forget needs --wing ID")
			}
			id, err := normalizeWing(wing)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			f, err := a.service().Forget(ctx, api.ForgetRequest{Wing: id, Force: force, DryRun: dryRun})
			switch {
			case errors.Is(err, palace.ErrUnknownWing):
				return usagef("--wing: %v", err)
			case errors.Is(err, mine.ErrAgentExists):
				return fmt.Errorf("%w, or pass --force to forget the wing anyway", err)
			case err != nil:
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, a.forgetOutput(f))
			}
			verb := "forgot"
			if f.DryRun {
				verb = "would forget"
			}
			fmt.Fprintf(a.stdout, "%s wing %s: %d %s from %d %s; the markdown is untouched\n", verb, f.Wing,
				f.Notes, plural(f.Notes, "note", "notes"), len(f.Sources), plural(len(f.Sources), "file", "files"))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&wing, "wing", "", "the wing to forget")
	fl.BoolVar(&force, "force", false, "forget the wing even though the hive still has its agent directory")
	fl.BoolVar(&dryRun, "dry-run", false, "say what would be forgotten; change nothing")
	fl.BoolVar(&asJSON, "json", false, "print what was forgotten as JSON")
	settingFlags(fl, "hive") // whose agent directories keep a wing
	return cmd
}

// forgetJSON is forget --json: the files named as in every command's
// JSON, source relative to the hive and path absolute.
type forgetJSON struct {
	Wing    string   `json:"wing"`
	Notes   int      `json:"notes"`
	Sources []string `json:"sources"`
	Paths   []string `json:"paths"`
	Roots   []string `json:"roots"`
	DryRun  bool     `json:"dry_run"`
}

func (a *app) forgetOutput(f mine.Forgotten) forgetJSON {
	out := forgetJSON{Wing: f.Wing, Notes: f.Notes, Sources: []string{}, Paths: []string{}, Roots: f.Roots, DryRun: f.DryRun}
	if out.Roots == nil {
		out.Roots = []string{}
	}
	for _, path := range f.Sources {
		out.Sources = append(out.Sources, a.sourceName(path))
		out.Paths = append(out.Paths, path)
	}
	return out
}
