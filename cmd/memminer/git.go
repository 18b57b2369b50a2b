package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/githive"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/memfile"
)

func (a *app) gitCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "git",
		Short: "Keep the hive in Git: merge memory files note by note",
		Long: `Keep the hive in a Git repository. memminer git setup makes Git merge the
memory files note by note (git merge-file is the driver Git then runs);
memminer run --git-commit commits every change memminer writes, and
memminer show REF --history lists the commits that touched a note. Pushing
and pulling stay yours: memminer never talks to a remote.

Syncthing, Git or both: docs/several-machines.md.`,
	}
	requireSubcommand(cmd)
	cmd.AddCommand(a.gitSetupCmd(), a.gitMergeFileCmd())
	return cmd
}

func (a *app) gitSetupCmd() *cobra.Command {
	var remove, asJSON bool
	cmd := &cobra.Command{
		Use:   "setup [--hive DIR] [--remove]",
		Short: "Register the merge driver, mark memory files in .gitattributes",
		Long: `Register memminer's merge driver in the configuration of the Git repository
the hive lies in (merge.memminer.name, and merge.memminer.driver =
"` + githive.DriverCommand + `", with this program's
absolute path for memminer when memminer on PATH is another program or
none), and mark the hive's memory files merge=memminer in the hive's
.gitattributes, in a block of its own: the markdown files of every agent
directory (agents/<id>/ and those the agents globs match), hidden files and
Syncthing conflict copies excepted. Running it again changes nothing;
--remove takes both out again.

The config is this clone's; commit .gitattributes so that every clone marks
the same files, and run memminer git setup in each clone. A clone without
the driver merges memory files line by line, and memminer reports the
conflict markers that leaves as conflicts (memminer conflicts).

The hive is --hive, MEMMINER_HIVE or hive: in the config file, else the
current directory. The JSON: docs/several-machines.md.`,
		Example: `  memminer git setup --hive ~/hive
  memminer git setup --remove`,
		Args: exactArgs(0, "git setup takes no arguments; give the hive with --hive DIR"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir := a.cfg.Hive
			if dir == "" {
				dir = "."
			}
			if err := checkHive(dir, a.cfg.Agents); err != nil {
				return err
			}
			h, err := hive.Open(dir, a.cfg.Agents)
			if err != nil {
				return err
			}
			var res githive.SetupResult
			if remove {
				res, err = githive.Remove(cmd.Context(), h.Dir())
			} else {
				res, err = githive.Setup(cmd.Context(), h.Dir(), h.Globs(), driverProgram())
			}
			switch {
			case errors.Is(err, githive.ErrNotRepo):
				return advised(err, "%v: the hive %s is not in a Git repository; run git init there first (or clone the hive's repository)", err, h.Dir())
			case err != nil:
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, res)
			}
			printSetup(a, res, remove)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&remove, "remove", false, "unregister the driver and remove memminer's block from .gitattributes")
	f.BoolVar(&asJSON, "json", false, "print what was changed as JSON")
	settingFlags(f, "hive")
	return cmd
}

// driverProgram is what the merge driver runs: memminer from PATH when
// that is this program (or this is no installed memminer: a test binary,
// go run's), else this program's absolute path, so that Git does not fail
// to run the driver and leave only this side's version in the work tree.
func driverProgram() string {
	self, err := os.Executable()
	if err != nil {
		return "memminer"
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	if strings.TrimSuffix(filepath.Base(self), ".exe") != "memminer" || strings.Contains(self, "go-build") {
		return "memminer"
	}
	if onPath, err := exec.LookPath("memminer"); err == nil {
		if r, err := filepath.EvalSymlinks(onPath); err == nil && r == self {
			return "memminer"
		}
	}
	return self
}

func printSetup(a *app, res githive.SetupResult, remove bool) {
	w := a.stdout
	switch {
	case remove && !res.ConfigChanged && !res.AttributesChanged:
		fmt.Fprintf(w, "the merge driver was not set up in %s; nothing to remove\n", displayPath(res.Repo))
	case remove:
		fmt.Fprintf(w, "removed the merge driver from %s and memminer's lines from %s\n", displayPath(res.Repo), displayPath(res.Attributes))
	case !res.ConfigChanged && !res.AttributesChanged:
		fmt.Fprintf(w, "already set up: Git merges the memory files of %s note by note\n", displayPath(res.Repo))
	default:
		fmt.Fprintf(w, "registered the merge driver in %s (merge.%s.driver = %s)\n", displayPath(res.Repo), githive.DriverName, res.Driver)
		fmt.Fprintf(w, "marked in %s:\n", displayPath(res.Attributes))
		for _, p := range res.Patterns {
			fmt.Fprintf(w, "  %s merge=%s\n", p, githive.DriverName)
		}
		fmt.Fprintln(w, "Commit .gitattributes, and run memminer git setup in every clone: the driver is each clone's config.")
	}
}

func (a *app) gitMergeFileCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "merge-file BASE OURS THEIRS PATH",
		Short: "The merge driver Git runs: merge a memory file note by note",
		Long: `The merge driver Git runs for the files memminer git setup marks: BASE is
the common ancestor (%O), OURS this side's version (%A), THEIRS the other
side's (%B) and PATH the file's path in the work tree (%P). It merges
note by note, as memminer conflicts merge does, against Git's common
ancestor, and writes the result over OURS.

A note either side added is kept, in its section and order; one that only
one side changed or removed takes that change; what both sides changed
differently keeps both versions, the other side's marked "(conflict: from
the copy of the other side of the Git merge, <date>)", between Git's
conflict markers (<<<<<<< ours, =======, >>>>>>> theirs). No note is
dropped. A file that is not memory, or a merge that cannot be laid out
note by note (frontmatter both sides changed), gets Git's own line merge.

Exit status 0 when the merge is clean, 1 when conflicts are left marked
(Git then reports the conflict and memminer conflicts lists the file).`,
		Example: `  git config merge.memminer.driver "` + githive.DriverCommand + `"`,
		Args:    exactArgs(4, "git merge-file takes BASE OURS THEIRS PATH, as Git passes %O %A %B %P"),
		// The driver needs no setting: a config file that does not load
		// must not fail every merge, which would leave only this side's
		// version in the work tree.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := githive.MergeFile(cmd.Context(), args[0], args[1], args[2], args[3], time.Now())
			if err != nil {
				return err
			}
			if out.Reason != "" {
				fmt.Fprintf(a.stderr, "memminer: %s: merged line by line (%s)\n", args[3], out.Reason)
			}
			if !out.Clean {
				n := len(out.Conflicts)
				if n > 0 {
					fmt.Fprintf(a.stderr, "memminer: %s: %d %s changed differently on both sides; both versions kept between conflict markers\n", args[3], n, plural(n, "note", "notes"))
				}
				return &codeError{code: 1}
			}
			return nil
		},
	}
	return cmd
}

// gitRepoOf opens the Git work tree the hive lies in, for --git-commit
// and --history.
func gitRepoOf(cmd *cobra.Command, dir string) (*githive.Repo, error) {
	if dir == "" {
		return nil, usagef("no hive: give --hive DIR (the hive must lie in a Git work tree)")
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("hive: %w", err)
	}
	r, err := githive.Open(cmd.Context(), dir)
	if errors.Is(err, githive.ErrNotRepo) {
		return nil, advised(err, "%v: the hive %s is not in a Git repository; run git init there first", err, dir)
	}
	return r, err
}

// commitTimeout bounds one commit of --git-commit.
const commitTimeout = time.Minute

// commitWrites has every memory file the daemon writes inside the hive
// committed to the Git work tree the hive lies in (run --git-commit),
// until remove is called.
func (a *app) commitWrites(cmd *cobra.Command, log *slog.Logger) (remove func(), err error) {
	r, err := gitRepoOf(cmd, a.cfg.Hive)
	if err != nil {
		return nil, err
	}
	h, err := hive.Open(a.cfg.Hive, a.cfg.Agents)
	if err != nil {
		return nil, err
	}
	log.Info("committing every memory file memminer writes", "repo", r.Top)
	return memfile.AddHook(func(ctx context.Context, c memfile.Change) {
		if !h.Contains(c.Path) {
			return
		}
		if _, ok := r.Rel(c.Path); !ok {
			return
		}
		// A writer whose request ends must not kill git half-way through
		// a commit (and leave .git/index.lock behind).
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
		defer cancel()
		ok, err := r.Commit(ctx, c.Path, c.Author, c.Message)
		switch {
		case err != nil:
			log.Warn("git commit of a memory file failed; the change is written but not committed", "path", c.Path, "err", err)
		case ok:
			log.Info("committed", "path", c.Path, "author", c.Author, "message", c.Message)
		}
	}), nil
}
