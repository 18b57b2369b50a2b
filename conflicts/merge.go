package conflicts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/conflicts/merge"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/internal/udiff"
	"github.com/memminer/memminer/memory/markdown"
	"github.com/memminer/memminer/memory/memfile"
	"github.com/memminer/memminer/palace"
)

// MergedDir is the directory under the palace where a merge keeps what it
// replaces: the copy and the file's previous content, one directory per
// merge, named <date>-<copy's name>.
const MergedDir = "merged"

// MergedRetention is how long kept contents stay under MergedDir.
const MergedRetention = 30 * 24 * time.Hour

// What became of one copy, in CopyMerge.Status.
const (
	// StatusClean: the copy merges with nothing for a person to decide.
	StatusClean = "clean"
	// StatusNeedsReview: the merge has conflicts (marked in the result).
	StatusNeedsReview = "needs_review"
	// StatusNotMemory: the copy is of a file that is not a memory file;
	// it is listed, never merged.
	StatusNotMemory = "not_memory"
	// StatusFailed: the copy could not be merged (Error says why).
	StatusFailed = "failed"
	// StatusMarkers: the file holds Git conflict markers; there is no copy
	// to merge, so it is listed and left for Git (or a person) to resolve.
	StatusMarkers = "conflict_markers"
)

// MergeOptions configure MergeCopies.
type MergeOptions struct {
	// Apply writes the merges; otherwise nothing is changed.
	Apply bool
	// AcceptConflicts lets Apply write merges that need review.
	AcceptConflicts bool
	// AcceptRemovals lets the merge remove what the copy removed (notes,
	// frontmatter); without it they are kept and proposed. A person's
	// choice: the automatic merge never sets it. It holds for a copy only
	// when Reviewed has the copy's Review as the merge finds it now: the
	// proposal the person saw, not what the copy became since.
	AcceptRemovals bool
	// Reviewed are the reviews of the proposals whose removals
	// AcceptRemovals carries out: a copy's Review carries out all of its
	// removals, a Removal's Review or the FrontmatterReview that one
	// alone (listed twice, two removals of the same note).
	Reviewed []string
	// PalaceDir is where MergedDir lives (required with Apply).
	PalaceDir string
	// MaxFileBytes bounds the files read (config.DefaultMaxFileBytes when 0).
	MaxFileBytes int64
	// Now is the time of the merge (time.Now when zero).
	Now time.Time
}

// CopyMerge is what merging one conflict copy did, or would do. Its JSON
// is what `memminer conflicts merge --json` prints.
type CopyMerge struct {
	Copy     string `json:"copy"`
	Original string `json:"original"`
	Wing     string `json:"wing"`
	// Device names the device in the copy's name (DeviceName, else its
	// short id), as the conflict marker does.
	Device string `json:"device"`
	Status string `json:"status"`
	// ThreeWay is false when there was no usable base and the merge is a
	// union of both sides.
	ThreeWay bool `json:"three_way"`
	// BaseMined is when the base was mined; null without one.
	BaseMined *time.Time `json:"base_mined"`
	// BaseConfirmed says both sides showed they descend from the base;
	// otherwise removals and one-sided changes are conflicts.
	BaseConfirmed bool `json:"base_confirmed"`
	// AppendOnly says the file only ever grew (the palace saw it lose no
	// note) and the merge, without a confirmed base, took the copy's new
	// notes as additions.
	AppendOnly bool `json:"append_only"`
	// Kept counts the file's notes kept as they are.
	Kept int `json:"kept"`
	// FromCopy are the copy's notes the merge brings in.
	FromCopy []merge.Note `json:"from_copy"`
	// Removed are the file's notes the merge removes (the copy removed
	// them); empty unless AcceptRemovals.
	Removed []merge.Note `json:"removed"`
	// ProposedRemovals are the file's notes the copy removed (or cut
	// short) that the merge keeps: removed only with AcceptRemovals, each
	// with its own review.
	ProposedRemovals []Removal        `json:"proposed_removals"`
	Conflicts        []merge.Conflict `json:"conflicts"`
	Frontmatter      string           `json:"frontmatter"`
	// ProposedFrontmatter says the copy's frontmatter drops some of the
	// file's, which is kept: taken only with AcceptRemovals.
	ProposedFrontmatter bool `json:"proposed_frontmatter"`
	// FrontmatterReview is the review of ProposedFrontmatter alone; null
	// when it is false.
	FrontmatterReview *string `json:"frontmatter_review"`
	// Review names the removals the copy proposes (ProposedRemovals and
	// ProposedFrontmatter) together with the copy's content: what a
	// person passes back with --accept-removals --reviewed to carry them
	// all out. Another copy, or other removals, has another review. Null
	// when the copy proposes no removal.
	Review *string `json:"review"`
	// Diff is the unified diff of the file (empty when unchanged).
	Diff string `json:"diff"`
	// Applied says the merge was written and the copy removed.
	Applied bool `json:"applied"`
	// Backup is where the copy and the file's previous content were kept;
	// null when nothing was written.
	Backup *string `json:"backup"`
	// Error says why the copy could not be merged, or why a merge needing
	// review was not written; null otherwise.
	Error *string `json:"error"`
	// err is Error's error, for the automatic merge to tell a passing
	// failure from one that needs a person.
	err error
}

// Removal is a note the copy removed, proposed for removal, with the
// review of its removal alone: passed back in MergeOptions.Reviewed, it
// carries out this removal and no other.
type Removal struct {
	merge.Note
	Review string `json:"review"`
}

// MergeReport is the outcome of MergeCopies.
type MergeReport struct {
	Merges []CopyMerge `json:"merges"`
	// Apply is whether the merges were to be written.
	Apply bool `json:"apply"`
}

// NeedsReview reports whether some copy (or file with Git conflict
// markers) needs a person.
func (r MergeReport) NeedsReview() bool {
	for _, m := range r.Merges {
		if m.Status == StatusNeedsReview || m.Status == StatusMarkers {
			return true
		}
	}
	return false
}

// Failed reports whether some copy could not be merged.
func (r MergeReport) Failed() bool {
	for _, m := range r.Merges {
		if m.Status == StatusFailed {
			return true
		}
	}
	return false
}

// ErrNeedsReview is the error of a merge that needs review when
// AcceptConflicts is not set.
var ErrNeedsReview = errors.New("the merge has conflicts for a person to review")

// ErrCopyChanged means the copy changed while it was being merged.
var ErrCopyChanged = errors.New("the conflict copy changed while it was merged")

// ErrNotReviewed means AcceptRemovals was asked for a copy whose
// proposal, as the merge finds it now, is none of MergeOptions.Reviewed:
// the copy (or the file) changed since the dry run a person reviewed.
var ErrNotReviewed = errors.New("the removals were not reviewed as they are now")

// MergeCopies merges each conflict copy into its original, copies of one
// file in the order of the time in their names. p (which may be nil) gives
// the file's mined contents, the merge's base candidates. With Apply each
// merge is written as soon as it is made, so the next copy of the same
// file merges into it; without, the next one merges into what the last
// would have written.
func MergeCopies(ctx context.Context, p *palace.Palace, cs []Conflict, opts MergeOptions) MergeReport {
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = config.DefaultMaxFileBytes
	}
	sorted := append([]Conflict(nil), cs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.Original != b.Original {
			return a.Original < b.Original
		}
		ta, tb := copyTime(a), copyTime(b)
		if !ta.Equal(tb) {
			return ta.Before(tb)
		}
		return a.Path < b.Path
	})
	report := MergeReport{Merges: []CopyMerge{}, Apply: opts.Apply}
	pending := map[string][]byte{} // dry run: what the last merge of a file would write
	for _, c := range sorted {
		if ctx.Err() != nil {
			break
		}
		m := CopyMerge{Copy: c.Path, Original: c.Original, Wing: c.Wing, Device: deviceLabel(c), FromCopy: []merge.Note{}, Removed: []merge.Note{}, ProposedRemovals: []Removal{}, Conflicts: []merge.Conflict{}}
		if c.Markers {
			m.Status = StatusMarkers
			report.Merges = append(report.Merges, m)
			continue
		}
		if c.Wing == "" || !hive.IsMemoryFile(c.Original) {
			m.Status = StatusNotMemory
			report.Merges = append(report.Merges, m)
			continue
		}
		var err error
		if opts.Apply {
			err = applyMerge(ctx, p, c, opts, &m)
		} else {
			var merged []byte
			merged, err = dryMerge(p, c, opts, pending[c.Original], &m)
			if err == nil {
				pending[c.Original] = merged
			}
		}
		if err != nil {
			if m.Status == "" {
				m.Status = StatusFailed
			}
			m.Error, m.err = new(err.Error()), err
		}
		report.Merges = append(report.Merges, m)
	}
	return report
}

// copyTime is when the copy was made, from its name, else when detected.
func copyTime(c Conflict) time.Time {
	if n, ok := hive.ParseConflictName(filepath.Base(c.Path)); ok {
		return n.Time
	}
	return c.Detected
}

func deviceLabel(c Conflict) string {
	switch {
	case c.DeviceName != "":
		return c.DeviceName
	case c.Device != "":
		return c.Device
	}
	return "an unknown device"
}

// dryMerge merges without writing; ours is the content to merge into when
// an earlier copy of the same file would have changed it.
func dryMerge(p *palace.Palace, c Conflict, opts MergeOptions, ours []byte, m *CopyMerge) ([]byte, error) {
	if ours == nil {
		var err error
		if ours, err = readText(c.Original, opts.MaxFileBytes); err != nil {
			return nil, err
		}
	}
	theirs, err := readText(c.Path, opts.MaxFileBytes)
	if err != nil {
		return nil, err
	}
	res, err := mergeInto(p, c, ours, theirs, removals{all: opts.AcceptRemovals}, m)
	if err != nil {
		return nil, err
	}
	return res.Merged, nil
}

// removals are the removals of the copy a merge carries out: all, or
// these notes and the frontmatter's.
type removals struct {
	all         bool
	notes       []merge.Note
	frontmatter bool
}

// mergeInto merges theirs into ours, carrying out rm, and fills m in.
func mergeInto(p *palace.Palace, c Conflict, ours, theirs []byte, rm removals, m *CopyMerge) (*merge.Result, error) {
	var bases []merge.Base
	if p != nil {
		for _, v := range p.Versions(c.Wing, c.Original) {
			b := merge.Base{Frontmatter: v.Frontmatter, Mined: v.Mined}
			for _, n := range v.Notes {
				b.Notes = append(b.Notes, merge.BaseNote{Heading: n.Heading, Text: n.Text, Line: n.Line})
			}
			bases = append(bases, b)
		}
	}
	res, err := merge.Merge(merge.Input{Bases: bases, Ours: ours, Theirs: theirs, Device: m.Device, Date: copyTime(c).Format(time.DateOnly),
		AcceptRemovals: rm.all, Remove: rm.notes, RemoveFrontmatter: rm.frontmatter, AppendOnly: appendOnly(p, c, ours)})
	if err != nil {
		return nil, err
	}
	m.ThreeWay, m.BaseConfirmed, m.Kept, m.Frontmatter, m.AppendOnly = res.ThreeWay, res.Confirmed, res.Kept, res.Frontmatter, res.AppendOnly
	if res.ThreeWay {
		m.BaseMined = new(bases[res.Base].Mined)
	}
	m.FromCopy = append(m.FromCopy, res.FromTheirs...)
	m.Removed = append(m.Removed, res.Removed...)
	for _, n := range res.ProposedRemovals {
		m.ProposedRemovals = append(m.ProposedRemovals, Removal{Note: n, Review: *review(theirs, []merge.Note{n}, false)})
	}
	m.ProposedFrontmatter = res.ProposedFrontmatter
	if res.ProposedFrontmatter {
		m.FrontmatterReview = review(theirs, nil, true)
	}
	m.Review = review(theirs, res.ProposedRemovals, res.ProposedFrontmatter)
	m.Conflicts = append(m.Conflicts, res.Conflicts...)
	m.Status = StatusClean
	if res.NeedsReview {
		m.Status = StatusNeedsReview
	}
	name := filepath.ToSlash(filepath.Base(c.Original))
	m.Diff = udiff.Diff("a/"+name, "b/"+name, ours, res.Merged)
	return res, nil
}

// review names a proposal of removals: the SHA-256 of the copy's content
// and of each note it would remove, and whether it drops frontmatter,
// cut to 16 hex digits; nil when nothing is proposed.
func review(theirs []byte, removals []merge.Note, frontmatter bool) *string {
	if len(removals) == 0 && !frontmatter {
		return nil
	}
	notes := make([]string, len(removals))
	for i, n := range removals {
		notes[i] = n.Heading + "\x00" + n.Text
	}
	slices.Sort(notes)
	h := sha256.New()
	copySum := sha256.Sum256(theirs)
	h.Write(copySum[:])
	for _, n := range notes {
		sum := sha256.Sum256([]byte(n))
		h.Write(sum[:])
	}
	if frontmatter {
		h.Write([]byte("frontmatter"))
	}
	return new(hex.EncodeToString(h.Sum(nil))[:16])
}

// reviewed is the apply's check that the removals it would carry out are
// ones a person reviewed: it makes the proposal of theirs into ours again
// and returns the removals of it whose reviews opts.Reviewed lists, all
// of them for the copy's Review; a proposal of which none is listed is
// ErrNotReviewed.
func reviewed(p *palace.Palace, c Conflict, ours, theirs []byte, opts MergeOptions, m *CopyMerge) (removals, error) {
	probe := CopyMerge{Device: m.Device}
	if _, err := mergeInto(p, c, ours, theirs, removals{}, &probe); err != nil {
		return removals{}, err
	}
	if probe.Review == nil || slices.Contains(opts.Reviewed, *probe.Review) {
		return removals{all: true}, nil
	}
	left := map[string]int{}
	for _, r := range opts.Reviewed {
		left[r]++
	}
	var rm removals
	for _, r := range probe.ProposedRemovals {
		if left[r.Review] > 0 {
			left[r.Review]--
			rm.notes = append(rm.notes, r.Note)
		}
	}
	rm.frontmatter = probe.FrontmatterReview != nil && left[*probe.FrontmatterReview] > 0
	if len(rm.notes) > 0 || rm.frontmatter {
		return rm, nil
	}
	m.Review = probe.Review
	return removals{}, fmt.Errorf("%w: the copy proposes %d removals as review %s, which is not among those given (%s); run conflicts merge without --apply, check what it removes, and pass the review it prints to --reviewed",
		ErrNotReviewed, len(probe.ProposedRemovals), *probe.Review, strings.Join(opts.Reviewed, ", "))
}

// appendOnly reports whether ours holds every note the palace has seen in
// c's file: its mined contents' notes and the ones it dropped from older
// contents (palace.Source.Dropped). A file the palace does not know is not
// known to be append-only.
func appendOnly(p *palace.Palace, c Conflict, ours []byte) bool {
	if p == nil {
		return false
	}
	src, ok := p.Source(c.Wing, c.Original)
	if !ok || len(src.Dropped) > 0 {
		return false
	}
	doc, err := markdown.Parse(ours, markdown.MemoryOptions())
	if err != nil {
		return false
	}
	have := make(map[uint64]bool, len(doc.Notes))
	for _, n := range doc.Notes {
		have[palace.SeenKey(n.Heading, n.Text)] = true
	}
	for _, v := range p.Versions(c.Wing, c.Original) {
		for _, n := range v.Notes {
			if !have[palace.SeenKey(n.Heading, n.Text)] {
				return false
			}
		}
	}
	return true
}

// applyMerge merges c under the lock of the file's directory and, when
// allowed, keeps the copy and the file's content under the palace, writes
// the merge and removes the copy.
func applyMerge(ctx context.Context, p *palace.Palace, c Conflict, opts MergeOptions, m *CopyMerge) error {
	if opts.PalaceDir == "" {
		return errors.New("no palace directory to keep the replaced contents in")
	}
	unlock, err := memfile.Lock(ctx, filepath.Dir(c.Original))
	if err != nil {
		return err
	}
	defer unlock()
	before, err := memfile.Read(c.Original, opts.MaxFileBytes)
	if err != nil {
		return err
	}
	theirs, err := readText(c.Path, opts.MaxFileBytes)
	if err != nil {
		return err
	}
	var rm removals
	if opts.AcceptRemovals {
		if rm, err = reviewed(p, c, before.Data, theirs, opts, m); err != nil {
			return err
		}
	}
	res, err := mergeInto(p, c, before.Data, theirs, rm, m)
	if err != nil {
		return err
	}
	if res.NeedsReview && !opts.AcceptConflicts {
		return ErrNeedsReview
	}
	backup, err := keepContents(opts.PalaceDir, c, before.Data, theirs, opts.Now)
	if err != nil {
		return err
	}
	m.Backup = &backup
	if !bytes.Equal(res.Merged, before.Data) {
		ctx := memfile.Describe(ctx, c.Wing, "merge: the conflict copy from "+m.Device)
		if err := memfile.Write(ctx, before, res.Merged); err != nil {
			return err
		}
	}
	testHookMerged(c)
	// The copy goes only if it is still what was merged.
	now, err := readText(c.Path, opts.MaxFileBytes)
	if err != nil {
		return fmt.Errorf("merged, but the copy could not be read again to remove it: %w", err)
	}
	if !bytes.Equal(now, theirs) {
		return fmt.Errorf("merged the copy as read, but it was left in place: %w", ErrCopyChanged)
	}
	if err := os.Remove(c.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("merged, but the copy could not be removed: %w", err)
	}
	testHookRemoved(c)
	m.Applied = true
	return nil
}

// testHookMerged runs after a merge is written and before the copy is
// checked again; tests change the copy there.
var testHookMerged = func(Conflict) {}

// testHookRemoved runs after the merged copy is removed; tests make it
// reappear there, as Syncthing may.
var testHookRemoved = func(Conflict) {}

// keepContents writes the copy and the file's previous content to a new
// directory under dir/MergedDir, prunes directories there older than
// MergedRetention, and returns the new directory.
func keepContents(dir string, c Conflict, before, copyData []byte, now time.Time) (string, error) {
	root := filepath.Join(dir, MergedDir)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", fmt.Errorf("keep the replaced contents: %w", err)
	}
	pruneKept(root, now)
	name := now.UTC().Format(time.DateOnly) + "-" + filepath.Base(c.Path)
	target := filepath.Join(root, name)
	for i := 2; ; i++ {
		err := os.Mkdir(target, 0o700)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("keep the replaced contents: %w", err)
		}
		target = filepath.Join(root, fmt.Sprintf("%s-%d", name, i))
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{filepath.Base(c.Path), copyData}, {filepath.Base(c.Original), before}} {
		if err := atomicfile.Write(filepath.Join(target, f.name), f.data, 0o600); err != nil {
			return "", fmt.Errorf("keep the replaced contents: %w", err)
		}
	}
	return target, nil
}

// pruneKept removes kept contents older than MergedRetention, by the date
// in their names.
func pruneKept(root string, now time.Time) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if len(e.Name()) < len(time.DateOnly) || !e.IsDir() {
			continue
		}
		day, err := time.Parse(time.DateOnly, e.Name()[:len(time.DateOnly)])
		if err != nil || now.Sub(day) <= MergedRetention {
			continue
		}
		_ = os.RemoveAll(filepath.Join(root, e.Name()))
	}
}

// readText reads a file to merge: regular, at most maxBytes, UTF-8 text.
func readText(path string, maxBytes int64) ([]byte, error) {
	s, err := memfile.Read(path, maxBytes)
	if err != nil {
		return nil, err
	}
	if !s.Exists {
		return nil, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	return s.Data, nil
}

// MergeRequest is the body of POST /conflicts/merge.
type MergeRequest struct {
	// Wing limits the merge to one wing's copies.
	Wing string `json:"wing,omitempty"`
	// Paths limits it to these copies, or copies of these files
	// (absolute paths).
	Paths           []string `json:"paths,omitempty"`
	Apply           bool     `json:"apply"`
	AcceptConflicts bool     `json:"accept_conflicts"`
	AcceptRemovals  bool     `json:"accept_removals"`
	// Reviewed are the reviews of the proposals AcceptRemovals carries
	// out (MergeOptions.Reviewed).
	Reviewed []string `json:"reviewed,omitempty"`
}

// ErrNoCopy is matched by the refusal of a merge naming a path that is
// neither an open conflict copy nor a file with one (*NoCopyError).
var ErrNoCopy = errors.New("no open conflict copy")

// NoCopyError names paths that are neither an open conflict copy nor a
// file with one.
type NoCopyError struct{ Paths []string }

func (e *NoCopyError) Error() string {
	return fmt.Sprintf("no open conflict copy at or of %s", strings.Join(e.Paths, ", "))
}

// Is makes a *NoCopyError match ErrNoCopy.
func (e *NoCopyError) Is(target error) bool { return target == ErrNoCopy }

// Select returns the conflicts of l whose copy or original is one of paths
// (every one when paths is empty), or a *NoCopyError naming the paths
// that match none.
func Select(l List, paths []string) ([]Conflict, error) {
	if len(paths) == 0 {
		return l.Conflicts, nil
	}
	same := func(a, b string) bool {
		if filepath.Clean(a) == filepath.Clean(b) {
			return true
		}
		ra, erra := filepath.EvalSymlinks(a)
		rb, errb := filepath.EvalSymlinks(b)
		return erra == nil && errb == nil && ra == rb
	}
	var out []Conflict
	var missing []string
	for _, p := range paths {
		found := false
		for _, c := range l.Conflicts {
			if !same(p, c.Path) && !same(p, c.Original) {
				continue
			}
			found = true
			if !slices.ContainsFunc(out, func(o Conflict) bool { return o.Path == c.Path }) {
				out = append(out, c)
			}
		}
		if !found {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return nil, &NoCopyError{Paths: missing}
	}
	return out, nil
}
