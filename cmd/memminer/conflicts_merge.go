package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/conflicts"
)

func (a *app) conflictsMergeCmd() *cobra.Command {
	var (
		wing   string
		req    conflicts.MergeRequest
		asJSON bool
		dryRun bool
	)
	cmd := &cobra.Command{
		Use:   "merge [--wing ID | PATH...]",
		Short: "Merge conflict copies back into their files, note by note",
		Long: `Merge each open conflict copy (every one, the copies of --wing ID, or the
copies given as PATH, a copy or the file it belongs to) into its file: a
three-way merge of notes, with the file's contents as the palace mined them
for the common ancestor. A note either side added is kept, in its section
and order; one changed on one side takes the change. A merge never deletes
on its own: a note (or frontmatter) the copy removed is kept and the
removal proposed, with a review naming the copy and the removals;
--accept-removals --reviewed REVIEW, with --apply, carries them out (one
removal's own review, that one alone), and refuses a copy whose removals
are no longer the ones reviewed. A note
both sides changed is a conflict: the file's version stays and the copy's
is put right after it, marked "(conflict: from the copy of <device>,
<date>)". Without a usable
ancestor (a file never mined) the merge is a union of both sides that drops
no note, and says so. Several copies of one file merge in the order of the
times in their names; a copy of a file that is not memory is listed and
left alone.

Without --apply nothing changes: for each copy it prints what the merge
would do and the unified diff of the file. Exit status 0 when every copy
merges cleanly, 3 when some need review, 1 when one could not be merged.

With --apply each clean merge is written (atomically, under the lock every
memminer writer takes, and only if the file did not change meanwhile), the
copy's and the file's previous contents are kept under the palace in
merged/<date>-<copy name>/ for 30 days, and the copy is removed, so
Syncthing carries the merge and the removal to every device. A merge that
needs review is written only with --accept-conflicts as well; the removals
the copy proposes only with --accept-removals.

When the daemon runs, it does the merge. Rules and the JSON: docs/conflicts.md.`,
		Example: `  memminer conflicts merge --dry-run
  memminer conflicts merge --wing dwight --apply
  memminer conflicts merge agents/dwight/memory.md --apply --accept-conflicts
  memminer conflicts merge --apply --accept-removals --reviewed 3f9a0c4e12b7d685`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if wing != "" && len(args) > 0 {
				return usagef("give --wing or paths, not both")
			}
			if dryRun && req.Apply {
				return usagef("--dry-run previews and --apply writes: give one")
			}
			if req.AcceptConflicts && !req.Apply {
				return usagef("--accept-conflicts goes with --apply")
			}
			if req.AcceptRemovals && !req.Apply {
				return usagef("--accept-removals goes with --apply")
			}
			if req.AcceptRemovals != (len(req.Reviewed) > 0) {
				return usagef("--accept-removals and --reviewed REVIEW go together: run conflicts merge without --apply, check the removals each copy proposes, and pass the review it prints for them")
			}
			w, err := normalizeWing(wing)
			if err != nil {
				return err
			}
			req.Wing = w
			for _, p := range args {
				abs, err := filepath.Abs(p)
				if err != nil {
					return err
				}
				req.Paths = append(req.Paths, abs)
			}
			rep, err := a.mergeConflicts(cmd.Context(), req)
			if err != nil {
				return err
			}
			for i := range rep.Merges {
				m := &rep.Merges[i]
				m.Copy, m.Original = displayPath(m.Copy), displayPath(m.Original)
				if m.Backup != nil {
					m.Backup = new(displayPath(*m.Backup))
				}
			}
			if asJSON {
				if err := writeJSON(a.stdout, rep); err != nil {
					return err
				}
			} else {
				printMergeReport(a.stdout, rep)
			}
			switch {
			case rep.Failed():
				return &codeError{code: 1}
			case rep.NeedsReview():
				return &codeError{code: exitConflict}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&wing, "wing", "", "only this wing's conflict copies")
	f.BoolVar(&req.Apply, "apply", false, "write the merges and remove the copies")
	f.BoolVar(&dryRun, "dry-run", false, "print what each merge would do and change nothing (the default without --apply)")
	f.BoolVar(&req.AcceptConflicts, "accept-conflicts", false, "with --apply, also write merges that need review (their conflicts marked)")
	f.BoolVar(&req.AcceptRemovals, "accept-removals", false, "with --apply and --reviewed, also remove the notes and frontmatter the copy removed (kept otherwise)")
	f.StringSliceVar(&req.Reviewed, "reviewed", nil, "with --accept-removals: the review the dry run printed for removals you checked (repeatable); a copy whose removals changed since is not merged")
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	settingFlags(f, "hive")
	return cmd
}

// mergeConflicts merges as the conflicts merge command does.
func (a *app) mergeConflicts(ctx context.Context, req conflicts.MergeRequest) (conflicts.MergeReport, error) {
	rep, err := a.service().MergeConflicts(ctx, req)
	if err != nil {
		return rep, conflictsError(err)
	}
	return rep, nil
}

func printMergeReport(w io.Writer, rep conflicts.MergeReport) {
	if len(rep.Merges) == 0 {
		fmt.Fprintln(w, "no open conflicts to merge")
		return
	}
	var t mergeTally
	for i, m := range rep.Merges {
		if i > 0 {
			fmt.Fprintln(w)
		}
		printCopyMerge(w, m, &t)
	}
	fmt.Fprintln(w)
	printMergeAdvice(w, rep, t)
}

// mergeTally counts, over a report's merges, those that need review,
// those written and those that propose removals.
type mergeTally struct{ review, written, proposals int }

// printCopyMerge prints the merge of one copy into its file.
func printCopyMerge(w io.Writer, m conflicts.CopyMerge, t *mergeTally) {
	if m.Status == conflicts.StatusMarkers {
		fmt.Fprintf(w, "%s (wing %s)\n  holds Git conflict markers: no copy to merge; resolve it in Git (remove the markers, keep both sides' notes, git add)\n", m.Original, m.Wing)
		return
	}
	fmt.Fprintf(w, "%s\n  into %s", m.Copy, m.Original)
	if m.Wing != "" {
		fmt.Fprintf(w, " (wing %s)", m.Wing)
	}
	fmt.Fprintln(w)
	switch m.Status {
	case conflicts.StatusNotMemory:
		fmt.Fprintln(w, "  not a memory file: left alone; merge it by hand")
		return
	case conflicts.StatusFailed:
		fmt.Fprintf(w, "  cannot merge: %s\n", *m.Error)
		return
	}
	printMergeKind(w, m)
	printMergeNotes(w, m, t)
	for _, c := range m.Conflicts {
		fmt.Fprintf(w, "  conflict (%s): %s\n", conflictKindText(string(c.Kind)), notePreview(c.Heading, firstNonEmpty(c.Ours, c.Theirs)))
	}
	if m.Diff != "" {
		fmt.Fprintln(w)
		for _, l := range strings.SplitAfter(strings.TrimSuffix(m.Diff, "\n"), "\n") {
			fmt.Fprintf(w, "    %s", strings.TrimSuffix(l, "\n"))
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	} else {
		fmt.Fprintln(w, "  the file stays as it is")
	}
	if m.Status == conflicts.StatusNeedsReview {
		t.review++
	}
	switch {
	case m.Applied:
		t.written++
		fmt.Fprintf(w, "  merged; the copy is removed. Kept the copy and the file's previous content in %s\n", *m.Backup)
	case m.Error != nil:
		fmt.Fprintf(w, "  not written: %s\n", *m.Error)
	case m.Status == conflicts.StatusNeedsReview:
		fmt.Fprintln(w, "  needs review")
	default:
		fmt.Fprintln(w, "  merges cleanly")
	}
}

// printMergeKind says how the copy was merged: append-only, three-way
// (from which base) or without a base.
func printMergeKind(w io.Writer, m conflicts.CopyMerge) {
	switch {
	case m.AppendOnly:
		fmt.Fprintln(w, "  append-only: the palace has seen this file lose no note, so both sides only added; a union of both sides, the copy's new notes added")
	case m.ThreeWay && m.BaseConfirmed:
		fmt.Fprintf(w, "  three-way merge, base: the file as mined %s\n", m.BaseMined.UTC().Format(time.RFC3339))
	case m.ThreeWay:
		fmt.Fprintf(w, "  three-way merge, base: the file as mined %s, which neither side confirms it descends from: additions taken, what the copy lacks kept, other changes left for review\n", m.BaseMined.UTC().Format(time.RFC3339))
	default:
		fmt.Fprintln(w, "  no base (the palace has no earlier content of this file): a union of both sides, no note dropped; removals on either side are not carried over")
	}
}

// printMergeNotes lists the notes the merge keeps, takes, removes and
// proposes to remove, and what it does with the frontmatter.
func printMergeNotes(w io.Writer, m conflicts.CopyMerge, t *mergeTally) {
	fmt.Fprintf(w, "  keeps %d %s of the file, takes %d from the copy, removes %d\n",
		m.Kept, plural(m.Kept, "note", "notes"), len(m.FromCopy), len(m.Removed))
	for _, n := range m.FromCopy {
		fmt.Fprintf(w, "    + %s\n", notePreview(n.Heading, n.Text))
	}
	for _, n := range m.Removed {
		fmt.Fprintf(w, "    - %s\n", notePreview(n.Heading, n.Text))
	}
	if k := len(m.ProposedRemovals); k > 0 {
		t.proposals++
		fmt.Fprintf(w, "  the copy removed %d %s; %s kept (--accept-removals removes %s):\n", k, plural(k, "note", "notes"), plural(k, "it is", "they are"), plural(k, "it", "them"))
		for _, n := range m.ProposedRemovals {
			fmt.Fprintf(w, "    ? %s\n", notePreview(n.Heading, n.Text))
			if k > 1 || m.ProposedFrontmatter {
				fmt.Fprintf(w, "      review %s removes this one alone\n", n.Review)
			}
		}
	}
	switch {
	case m.Frontmatter == "theirs":
		fmt.Fprintln(w, "  frontmatter: the copy's (only the copy changed it)")
	case m.ProposedFrontmatter:
		t.proposals++
		fmt.Fprintln(w, "  frontmatter: this file's is kept; the copy's drops some of it (--accept-removals takes the copy's)")
		if len(m.ProposedRemovals) > 0 && m.FrontmatterReview != nil {
			fmt.Fprintf(w, "      review %s takes the copy's frontmatter alone\n", *m.FrontmatterReview)
		}
	}
	if m.Review != nil {
		fmt.Fprintf(w, "  review %s: to carry these removals out, --apply --accept-removals --reviewed %s\n", *m.Review, *m.Review)
	}
}

// printMergeAdvice says what was changed and what to run next.
func printMergeAdvice(w io.Writer, rep conflicts.MergeReport, t mergeTally) {
	switch {
	case !rep.Apply:
		fmt.Fprintln(w, "Nothing was changed; run with --apply to write the clean merges.")
		if t.review > 0 {
			fmt.Fprintln(w, "Merges that need review are written with --apply --accept-conflicts (the conflicts marked in the file), or merge them by hand.")
		}
		if t.proposals > 0 {
			fmt.Fprintln(w, "A merge removes nothing on its own: what the copies removed is kept unless you run with --apply --accept-removals.")
		}
	case t.review > 0 && t.written < len(rep.Merges):
		fmt.Fprintln(w, "Merges that need review were not written: check the diff, then run with --apply --accept-conflicts, or merge by hand.")
	}
	if rep.Apply && t.proposals > 0 && t.written > 0 {
		fmt.Fprintln(w, "What the copies removed was kept (without --accept-removals); the copies are kept where each merge says, to remove it by hand if it should go.")
	}
}

func conflictKindText(k string) string {
	switch k {
	case "both_changed":
		return "changed on both sides; the copy's version follows, marked"
	case "removed_here_changed_in_copy":
		return "removed here, changed in the copy; the copy's version is kept, marked"
	case "changed_here_removed_in_copy":
		return "changed here, removed in the copy; this file's version is kept"
	case "removal_unconfirmed":
		return "removed on one side from an unconfirmed base; kept, the copy's version marked"
	case "change_unconfirmed":
		return "changed on one side from an unconfirmed base; both versions kept, the copy's marked"
	case "two_versions_kept":
		return "no base to tell which is newer; both versions kept, the copy's marked"
	case "frontmatter":
		return "frontmatter changed on both sides; this file's is kept"
	}
	return k
}

// notePreview is a note's heading and first line, shortened.
func notePreview(heading, text string) string {
	line, _, _ := strings.Cut(text, "\n")
	if r := []rune(line); len(r) > 72 {
		line = string(r[:71]) + "…"
	}
	if heading != "" {
		return heading + ": " + line
	}
	return line
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
