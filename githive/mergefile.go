package githive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/memminer/memminer/conflicts/merge"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/memory/markdown"
)

// TheirSide is how a merged file's conflict mark names the other side of
// a Git merge (merge.Marker): Git does not say which branch it is.
const TheirSide = "the other side of the Git merge"

// How MergeFile merged, in MergeOutcome.Method.
const (
	// ByNotes: memminer's note-by-note merge.
	ByNotes = "notes"
	// ByLines: Git's own line merge (git merge-file), for a file that is
	// not memory or that the note merge could not lay out.
	ByLines = "lines"
)

// MergeOutcome is what MergeFile did.
type MergeOutcome struct {
	// Method is ByNotes or ByLines.
	Method string
	// Clean is false when the result holds conflict markers for a person.
	Clean bool
	// Conflicts are the note merge's conflicts (none ByLines).
	Conflicts []merge.Conflict
	// Reason says why the merge fell back to ByLines; "" otherwise.
	Reason string
}

// MergeFile is the merge driver: it merges theirs into ours against base,
// Git's common ancestor (so the base is confirmed), and writes the result
// over ours, atomically. A memory file (by path's name, hive.IsMemoryFile)
// merges note by note, as `memminer conflicts merge` does: a note either
// side added is kept, one changed or removed on one side only takes the
// change, and what both sides changed differently keeps both versions,
// the other side's marked, between Git's conflict markers so that Git,
// the user and memminer (conflicts, remember, mining) all see the
// conflict. Any other file, and a merge the note merge cannot lay out,
// gets Git's own line merge. No line of either side is lost.
func MergeFile(ctx context.Context, base, ours, theirs, path string, now time.Time) (MergeOutcome, error) {
	o, err := os.ReadFile(ours)
	if err != nil {
		return MergeOutcome{}, err
	}
	t, err := os.ReadFile(theirs)
	if err != nil {
		return MergeOutcome{}, err
	}
	b, err := os.ReadFile(base)
	if err != nil {
		return MergeOutcome{}, err
	}
	if b == nil {
		b = []byte{}
	}
	reason := "not a memory file"
	if hive.IsMemoryFile(path) && !hive.IsHiddenPath(path) {
		out, res, err := mergeNotes(b, o, t, now)
		if err == nil {
			if err := atomicfile.Write(ours, out, fileMode(ours)); err != nil {
				return MergeOutcome{}, err
			}
			return MergeOutcome{Method: ByNotes, Clean: !res.NeedsReview, Conflicts: res.Conflicts}, nil
		}
		reason = err.Error()
	}
	clean, err := lineMerge(ctx, base, ours, theirs)
	return MergeOutcome{Method: ByLines, Clean: clean, Reason: reason, Conflicts: []merge.Conflict{}}, err
}

// errFrontmatter means both sides changed the frontmatter: the note merge
// keeps ours and has nowhere to mark theirs, so the line merge takes it.
var errFrontmatter = errors.New("both sides changed the frontmatter")

// mergeNotes merges note by note and marks the conflicts.
func mergeNotes(base, ours, theirs []byte, now time.Time) ([]byte, *merge.Result, error) {
	for _, d := range [][]byte{base, ours, theirs} {
		if err := markdown.CheckText(d); err != nil {
			return nil, nil, err
		}
		if hive.HasConflictMarkers(d) {
			return nil, nil, errors.New("a side already holds conflict markers")
		}
	}
	// Git's base is the sides' real ancestor: what the other side removed
	// from it, a person removed in a commit, as this side's removals are.
	res, err := merge.Merge(merge.Input{Ancestor: base, Ours: ours, Theirs: theirs, Device: TheirSide, Date: now.Format(time.DateOnly), AcceptRemovals: true})
	if err != nil {
		return nil, nil, err
	}
	if !res.NeedsReview {
		return res.Merged, res, nil
	}
	for _, c := range res.Conflicts {
		if c.Kind == merge.FrontmatterChanged {
			return nil, nil, errFrontmatter
		}
	}
	out, err := markConflicts(res, merge.Marker(TheirSide, now.Format(time.DateOnly)))
	if err != nil {
		return nil, nil, err
	}
	return out, res, nil
}

// lineMerge runs Git's line merge, which writes ours; clean reports
// whether it left no conflict.
func lineMerge(ctx context.Context, base, ours, theirs string) (bool, error) {
	_, err := git(ctx, "", nil, "merge-file", "-L", "ours", "-L", "base", "-L", "theirs", ours, base, theirs)
	if err == nil {
		return true, nil
	}
	if c := exitCode(err); c > 0 && c < 128 {
		return false, nil // the number of conflicts
	}
	return false, fmt.Errorf("line merge: %w", err)
}

func fileMode(path string) os.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return 0o644
}

// markerLines are the conflict markers MergeFile writes.
var markerLines = [3]string{"<<<<<<< ours", "=======", ">>>>>>> theirs"}

// joinedTexts returns the texts of notes[i:j], joined as a unit's.
func joinedTexts(notes []markdown.Note, i, j int, marker string) string {
	var parts []string
	for _, n := range notes[i:j] {
		parts = append(parts, strings.Replace(n.Text, " "+marker, "", 1))
	}
	return strings.Join(parts, "\n")
}
