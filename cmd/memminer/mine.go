package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/service/api"
)

func (a *app) mineCmd() *cobra.Command {
	var (
		wing, agent    string
		dryRun, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "mine [PATH]",
		Short: "Mine markdown memory into the palace",
		Long: `Mine a markdown file, or every *.md below a directory, into the palace;
without PATH, the hive (--hive, MEMMINER_HIVE, hive: in the config, else
the daemon's).

An agent directory is mined into the wing of its name (hive/agents/dwight/ is
wing "dwight"); any path that is no hive, agents/ directory or agent
directory (one whose parent is agents/, or holding memory.md) needs --wing.
A hive directory (one with agents/<id>/ inside, or with directories the
config's agents globs match, such as bots/*) is mined one wing per agent
directory; a matched directory that is no agent is reported and skipped
(docs/mining.md, "Agent directories", says which are agents).
Mining is incremental: unchanged files are not re-read and unchanged notes are
not re-embedded. When the daemon (memminer run) holds the palace, the mine is
handed to it and its summary printed: there is never a second writer.
Syncthing conflict copies (<name>.sync-conflict-<date>-<time>[-<device>]<ext>)
and hidden directories are never mined. Files that cannot be mined (binary,
too large, not UTF-8, symlinks leaving PATH) are reported and skipped; their
earlier notes stay.

The full rules are in docs/mining.md.`,
		Example: `  memminer mine
  memminer mine hive/agents/dwight
  memminer mine notes.md --wing research --agent claude
  memminer forget --wing research   # undo a mine into the wrong wing
  memminer mine examples/hive --dry-run`,
		Args: maxArgs(1, "mine takes one PATH at most: a markdown file or a directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !a.cfg.Enabled {
				fmt.Fprintln(a.stderr, "memminer: disabled (enabled: false); nothing mined")
				return nil
			}
			if wing != "" {
				if _, err := normalizeWing(wing); err != nil {
					return err
				}
			}
			ctx := cmd.Context()
			target := a.cfg.Hive
			if len(args) == 1 {
				target = args[0]
			} else if target == "" {
				return usagef("mine needs a PATH, a markdown file or a directory, or a hive; %v", errNoHive())
			}
			// The daemon does not share our working directory.
			path, err := absPath("mine", target)
			if err != nil {
				return err
			}
			var bar *progress
			if !asJSON {
				bar = newProgress(a.stderr, "mining", false)
			}
			stopFollowing := a.followDaemonMine(ctx, bar)
			if bar != nil {
				a.mineProgress = func(done, total int) {
					if total >= 20 {
						bar.set(int64(done), int64(total))
					}
				}
			}
			rep, err := a.service().Mine(ctx, api.MineRequest{Path: path, Wing: wing, Agent: agent, DryRun: dryRun, Model: a.cfg.Model, Agents: a.cfg.Agents})
			stopFollowing()
			switch {
			case errors.Is(err, api.ErrOtherModel):
				return fmt.Errorf("%v; it holds the palace, so mine with its model or stop it first (memminer stop)", err)
			case errors.Is(err, api.ErrOtherHive):
				return fmt.Errorf("%v: stop the daemon (memminer stop, or Ctrl-C its run), or mine into another palace with --palace", err)
			}
			for _, r := range rep.Reembeds {
				a.reportReembed(r.Wing, r.From, r.To, r.Notes)
			}
			return a.finishMine(ctx, rep.Result.Summary, err, wing != "", asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&wing, "wing", "", "wing to mine into (default: the directory's name)")
	f.StringVar(&agent, "agent", "", "agent recorded with the notes (default: the wing)")
	f.BoolVar(&dryRun, "dry-run", false, "report what would change; change nothing")
	f.BoolVar(&asJSON, "json", false, "print the summary as JSON")
	settingFlags(f, "hive") // mined without PATH
	return cmd
}

// finishMine reports a mine's repairs, warnings and skipped files on
// stderr and its summary on stdout, the same whether the daemon or this
// process mined.
func (a *app) finishMine(ctx context.Context, s mine.Summary, err error, wingGiven, asJSON bool) error {
	switch {
	case errors.Is(err, mine.ErrNeedsWing):
		return usagef("%v; pass --wing ID to mine it into wing ID", err)
	case errors.Is(err, mine.ErrAgentNeedsWing):
		return fmt.Errorf("%w: pass --wing with --agent", err)
	case errors.Is(err, hive.ErrBadWingID) && !wingGiven:
		return fmt.Errorf("%w; pass --wing", err)
	}
	a.reportRepairs(s.Repaired)
	reportMigrations(a.stderr, s.Migrated)
	for _, w := range s.Warnings {
		fmt.Fprintf(a.stderr, "memminer: warning: %s: %s\n", displayPath(w.Path), w.Err)
	}
	for _, pr := range s.Problems {
		fix := ""
		if pr.Kind == mine.ProblemVectorsKept {
			fix = ". Fix the model, or mine with --model lexical to drop them"
		}
		fmt.Fprintf(a.stderr, "memminer: skipped %s: %s%s\n", displayPath(pr.Path), pr.Err, fix)
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return &codeError{code: exitInterrupted, msg: fmt.Sprintf("interrupted; %d %s mined, the rest on the next mine", s.FilesChanged, plural(s.FilesChanged, "file", "files"))}
	}
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(a.stdout, api.NewMineResult(s))
	}
	printMineSummary(a, s)
	return nil
}

func printMineSummary(a *app, s mine.Summary) {
	verb := "mined"
	if s.DryRun {
		verb = "would mine"
	}
	fmt.Fprintf(a.stdout, "%s %s: files %d seen, %d changed, %d unchanged, %d skipped, %d removed\n",
		verb, joinWings(s.Mined), s.FilesSeen, s.FilesChanged, s.FilesUnchanged, s.FilesSkipped, s.FilesRemoved)
	fmt.Fprintf(a.stdout, "notes %d added, %d removed, %d unchanged", s.NotesAdded, s.NotesRemoved, s.NotesUnchanged)
	if s.Reembedded > 0 {
		fmt.Fprintf(a.stdout, ", %d re-embedded", s.Reembedded)
	}
	fmt.Fprintf(a.stdout, " in %s\n", elapsedText(s.Duration))
}

// elapsedText writes how long something took to the millisecond, and a
// time under half a millisecond as "<1ms" rather than a misleading "0s".
func elapsedText(d time.Duration) string {
	if r := d.Round(time.Millisecond); r > 0 || d <= 0 {
		return r.String()
	}
	return "<1ms"
}

func joinWings(ws []string) string {
	switch len(ws) {
	case 0:
		return "nothing"
	case 1:
		return "wing " + ws[0]
	}
	return "wings " + strings.Join(ws, ", ")
}

func writeJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// reportMigrations says, in one line, that wings of an older palace were
// migrated to the current note format.
func reportMigrations(w io.Writer, ms []mine.Migration) {
	if len(ms) == 0 {
		return
	}
	var wings []string
	var files, notes, embedded int
	for _, m := range ms {
		wings = append(wings, m.Wing)
		files, notes, embedded = files+m.Files, notes+m.Notes, embedded+m.Embedded
	}
	fmt.Fprintf(w, "memminer: palace migrated to note format %d (note ids no longer depend on where the hive lives): %s %s, %d %s, %d notes, %d embedded anew, the other vectors kept\n",
		ms[0].Format, plural(len(wings), "wing", "wings"), strings.Join(wings, ", "), files, plural(files, "file", "files"), notes, embedded)
}
