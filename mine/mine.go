package mine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/govern"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/bytesize"
	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/palace"
)

// racyWindow is how long a file must have been unchanged when mined for
// its mtime and size alone to say it has not changed since.
const racyWindow = 2 * time.Second

// Settled reports whether src had been still for a while when it was mined,
// so that an unchanged mtime and size prove it unchanged since. A file
// mined within racyWindow of its last write is not settled: on filesystems
// with coarse timestamps an edit of the same size in the same second keeps
// its mtime and size (git calls this "racily clean"), and only reading it
// again tells. Mining a file that has not changed since settles it.
func Settled(src palace.Source) bool {
	return SettledAt(src.Mtime, src.Mined)
}

// SettledAt reports whether a file last written at mtime had been still
// long enough when its content was read at checked for mtime and size to
// prove it unchanged since (see Settled).
func SettledAt(mtime, checked time.Time) bool {
	return checked.Sub(mtime) > racyWindow
}

// SameContent reports whether the file src was mined from still holds the
// same content (same SHA-256): how to tell whether a file that is not
// Settled has changed without mining it.
func SameContent(src palace.Source) (bool, error) {
	f, err := hivefile.Open(src.Path)
	if err != nil {
		return false, unwrapPathErr(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false, unwrapPathErr(err)
	}
	return hex.EncodeToString(h.Sum(nil)) == src.Hash, nil
}

// Options configure one mine.
type Options struct {
	// Wing is the wing to mine into; empty means the directory's name (or,
	// for a hive, one wing per agent directory).
	Wing string
	// Agents are more glob patterns of agent directories, relative to a
	// hive, besides agents/<id> (the config setting agents; see package
	// hive). A directory with an agents/ directory, or with
	// directories these match, is mined as a hive.
	Agents []string
	// Hive is the configured hive, if any: a directory inside it that is
	// (or lies in) an agent directory is mined as one wing, never as a
	// hive of its own, whatever directories in it the Agents globs match.
	Hive string
	// Agent is recorded with each note; empty means the wing id.
	Agent string
	// DryRun reports what would change without touching the palace.
	DryRun bool
	// MaxFileBytes skips larger files; zero means config.DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxNoteRunes bounds a note's length; zero means the parser's default.
	MaxNoteRunes int
	// Progress, if set, is called after each file with files done and total.
	Progress func(done, total int)
	// OnReembed, if set, is told when a wing's vectors are replaced because
	// the configured model changed.
	OnReembed func(wing, from, to string, notes int)
	// repairing is set by Repair: minePath then neither clears damage nor
	// flushes; Repair does both once every root is mined.
	repairing bool

	// ModelUnavailable, when set, says why the configured model could not
	// be had and the palace runs lexically in its place. Wings holding a
	// model's vectors are then left alone rather than stripped of them.
	ModelUnavailable string
}

// Problem is a file that could not be mined; the rest of the mine goes on
// and the file's earlier notes, if any, stay in the palace.
type Problem struct {
	Path string `json:"path"`
	Err  string `json:"error"`
}

// Summary reports what a mine did.
type Summary struct {
	Wings          []string  `json:"wings"`
	FilesSeen      int       `json:"files_seen"`
	FilesChanged   int       `json:"files_changed"`
	FilesUnchanged int       `json:"files_unchanged"`
	FilesSkipped   int       `json:"files_skipped"`
	FilesRemoved   int       `json:"files_removed"`
	NotesAdded     int       `json:"notes_added"`
	NotesRemoved   int       `json:"notes_removed"`
	NotesUnchanged int       `json:"notes_unchanged"`
	Reembedded     int       `json:"notes_reembedded"`
	Problems       []Problem `json:"problems"`
	// Warnings are files mined with something worth fixing (e.g. broken frontmatter).
	Warnings []Problem  `json:"warnings,omitempty"`
	DryRun   bool       `json:"dry_run"`
	Repaired []Repaired `json:"repaired,omitempty"`
	// Migrated lists the wings whose files were mined again in the current
	// NoteFormat; a file is migrated once.
	Migrated []Migration   `json:"migrated,omitempty"`
	Duration time.Duration `json:"-"`

	migrated Migration // files mined again in the current format, in mineOne
}

func (s *Summary) add(o Summary) {
	s.Wings = append(s.Wings, o.Wings...)
	s.FilesSeen += o.FilesSeen
	s.FilesChanged += o.FilesChanged
	s.FilesUnchanged += o.FilesUnchanged
	s.FilesSkipped += o.FilesSkipped
	s.FilesRemoved += o.FilesRemoved
	s.NotesAdded += o.NotesAdded
	s.NotesRemoved += o.NotesRemoved
	s.NotesUnchanged += o.NotesUnchanged
	s.Reembedded += o.Reembedded
	s.Problems = append(s.Problems, o.Problems...)
	s.Migrated = append(s.Migrated, o.Migrated...)
	s.Warnings = append(s.Warnings, o.Warnings...)
}

// NoteID is a note's stable id: the same wing, file, heading path and text
// give the same id, so re-mining finds what it already has. rel is the
// file's path relative to its agent directory, '/'-separated: the id does
// not depend on where the hive lives, so every machine sharing a hive, and
// a hive that moved, derive the same ids. The occurrence number tells
// apart identical notes in one file.
func NoteID(wing, rel, heading, text string, occurrence int) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%d", wing, rel, heading, text, occurrence)
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// NoteFormat is the version of how notes are derived from markdown, kept
// with each source (palace.Source.NoteFormat): a file mined with an older
// one is mined again by the next mine, even unchanged, keeping the vector
// of every note whose text did not change. 1: ids name the file by its
// path relative to the agent directory, not by its absolute path.
const NoteFormat = 1

// Migration tells that files of a wing mined with an older NoteFormat
// were mined again in the current one.
type Migration struct {
	Wing     string `json:"wing"`
	Format   int    `json:"format"`
	Files    int    `json:"files"`
	Notes    int    `json:"notes"`
	Embedded int    `json:"embedded"`
}

// Mine mines the markdown at path (a file, or every *.md below a
// directory) into p and flushes the palace. See Options for how the wing is
// chosen. Files that cannot be mined are reported in the summary's
// Problems; an error is returned only when nothing sensible could be done.
func Mine(ctx context.Context, p *palace.Palace, path string, opts Options) (Summary, error) {
	if !opts.DryRun && !p.Writable() {
		return Summary{}, fmt.Errorf("mine %s: %w", path, palace.ErrReadOnly)
	}
	var repaired []Repaired
	if !opts.DryRun {
		// A damaged wing is rebuilt before anything is added to it.
		repaired = Repair(ctx, p, opts)
	}
	s, err := minePath(ctx, p, path, opts)
	s.Repaired = repaired
	return s, err
}

// minePath mines path into p, in memory, and flushes when p is writable.
func minePath(ctx context.Context, p *palace.Palace, path string, opts Options) (Summary, error) {
	start := time.Now()
	abs, err := filepath.Abs(path)
	if err != nil {
		return Summary{}, fmt.Errorf("mine %s: %w", path, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Summary{}, fmt.Errorf("mine %s: %w", path, unwrapPathErr(err))
	}
	info, err := os.Stat(root)
	if err != nil {
		return Summary{}, fmt.Errorf("mine %s: %w", path, unwrapPathErr(err))
	}
	globs, err := hive.NewGlobs(opts.Agents)
	if err != nil {
		return Summary{}, fmt.Errorf("mine %s: %w", path, err)
	}
	var jobs []job
	var skipped []Problem
	switch h, isHive := hive.MinedAsHive(root, info, globs, opts.Hive); {
	case opts.Wing == "" && isHive:
		if opts.Agent != "" {
			return Summary{}, fmt.Errorf("mine %s: --agent needs --wing when mining a whole hive", path)
		}
		jobs, skipped, err = hiveJobs(h)
		if err != nil {
			return Summary{}, fmt.Errorf("mine %s: %w", path, err)
		}
	default:
		name := opts.Wing
		if name == "" {
			name = filepath.Base(root)
			if !info.IsDir() {
				name = filepath.Base(filepath.Dir(root))
			}
		}
		wing, err := palace.NormalizeWingID(name)
		if err != nil {
			if opts.Wing == "" {
				return Summary{}, fmt.Errorf("mine %s: the directory name gives no usable wing id (%v); pass --wing", path, err)
			}
			return Summary{}, fmt.Errorf("mine %s: %w", path, err)
		}
		if !info.IsDir() && hive.IsConflictCopy(root) {
			return Summary{}, fmt.Errorf("mine %s: this is a Syncthing conflict copy, not memory; merge it into the original and delete it", path)
		}
		if opts.Wing == "" {
			dir := root
			if !info.IsDir() {
				dir = filepath.Dir(root)
			}
			if _, self := hive.InAgentDir(dir, globs, opts.Hive); !self {
				return Summary{}, &needsWingError{path}
			}
		}
		jobs = []job{{wing: wing, root: root, isDir: info.IsDir(), base: agentBase(root, info.IsDir(), opts.Hive, opts.Agents)}}
	}
	// List every job's files first, so progress counts the whole mine.
	all := 0
	for i := range jobs {
		jobs[i].files, jobs[i].problems = collect(jobs[i])
		all += len(jobs[i].files)
	}
	done := 0
	if opts.Progress != nil {
		progress := opts.Progress
		opts.Progress = func(int, int) {
			done++
			progress(done, all)
		}
	}

	total := Summary{DryRun: opts.DryRun, Problems: skipped}
	total.FilesSkipped += len(skipped)
	var runErr error
	for _, j := range jobs {
		s, err := mineOne(ctx, p, j, opts)
		total.add(s)
		if err != nil {
			runErr = err
			break
		}
		if !opts.DryRun && !opts.repairing && coversDamage(p, j) {
			// Mined whole from its markdown, the wing is rebuilt.
			p.ClearDamage(j.wing)
		}
	}
	if !opts.DryRun && !opts.repairing && p.Writable() {
		// Flush even after cancellation: every applied file is whole, so
		// what was mined is kept.
		if err := p.Flush(); err != nil {
			return total, fmt.Errorf("mine %s: %w", path, err)
		}
	}
	total.Duration = time.Since(start)
	return total, runErr
}

type job struct {
	wing  string
	root  string // resolved absolute path
	isDir bool
	// base is the agent directory the job's files are named relative to
	// in note ids: root for an agent directory.
	base string

	files    []candidate
	problems []Problem
}

type candidate struct {
	path string
	info fs.FileInfo
}

func mineOne(ctx context.Context, p *palace.Palace, j job, opts Options) (Summary, error) {
	s := Summary{Wings: []string{j.wing}, DryRun: opts.DryRun}
	agent := opts.Agent
	if agent == "" {
		agent = j.wing
	}
	maxBytes := opts.MaxFileBytes
	if maxBytes <= 0 {
		maxBytes = config.DefaultMaxFileBytes
	}

	files, problems := j.files, j.problems
	s.Problems = append(s.Problems, problems...)
	s.FilesSeen += len(problems)
	s.FilesSkipped += len(problems)

	if from, ok := p.ModelOf(j.wing); ok && opts.ModelUnavailable != "" && from != p.Model() && from != embed.Lexical && len(p.Sources(j.wing)) > 0 {
		// A fallback is not a model change: keep the vectors for when the
		// model is back.
		s.FilesSkipped += len(files)
		s.Problems = append(s.Problems, Problem{Path: j.root, Err: fmt.Sprintf(
			"wing %s holds %s vectors and that model is unavailable (%s); not mined, so they are kept. Fix the model, or mine with --model lexical to drop them",
			j.wing, from, opts.ModelUnavailable)})
		return s, nil
	}
	// A new wing is made by the first file mined into it: files that are
	// all skipped leave no empty wing behind.
	existed := p.HasWing(j.wing)
	if !opts.DryRun && existed {
		p.AddRoot(j.wing, j.root)
		if from, ok := p.ModelOf(j.wing); ok && from != p.Model() && len(p.Sources(j.wing)) > 0 {
			n, err := p.Reembed(ctx, j.wing)
			if err != nil {
				return s, err
			}
			s.Reembedded += n
			if opts.OnReembed != nil {
				opts.OnReembed(j.wing, from, p.Model(), n)
			}
		}
	}

	seen := map[string]bool{}
	for _, pr := range problems {
		seen[pr.Path] = true
	}
	// A directory that could not be read hides its files: they are not
	// gone, so their notes stay.
	unreadable := func(path string) bool {
		for _, pr := range problems {
			if path == pr.Path || strings.HasPrefix(path, pr.Path+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
	for i, f := range files {
		if err := ctx.Err(); err != nil {
			return s, err
		}
		seen[f.path] = true
		s.FilesSeen++
		if err := mineFile(ctx, p, j, agent, f, maxBytes, opts, &s); err != nil {
			var pe *palaceError
			if errors.As(err, &pe) {
				// The embedder or the palace failed, not the file: every
				// other file would fail the same way.
				return s, pe.err
			}
			s.FilesSkipped++
			s.Problems = append(s.Problems, Problem{Path: f.path, Err: err.Error()})
		}
		if opts.Progress != nil {
			opts.Progress(i+1, len(files))
		}
	}

	// Files that were mined from this root before and are gone now; and
	// files of roots that no longer exist at all (a moved or renamed hive,
	// whose notes would otherwise stand twice).
	goneRoots := map[string]bool{}
	if !p.IsDamaged(j.wing) {
		for _, r := range p.Roots(j.wing) {
			// Only a move: the same directory or file name at a new
			// place. A root that is merely out of reach elsewhere (an
			// unmounted disk) keeps its notes.
			if r == j.root || filepath.Base(r) != filepath.Base(j.root) {
				continue
			}
			if _, err := os.Lstat(r); errors.Is(err, fs.ErrNotExist) {
				goneRoots[r] = true
			}
		}
	}
	inGoneRoot := func(path string) bool {
		for r := range goneRoots {
			if path == r || within(r, path, true) {
				return true
			}
		}
		return false
	}
	for _, src := range p.Sources(j.wing) {
		if seen[src.Path] || unreadable(src.Path) {
			continue
		}
		if !within(j.root, src.Path, j.isDir) && !inGoneRoot(src.Path) {
			continue
		}
		s.FilesRemoved++
		if opts.DryRun {
			s.NotesRemoved += len(src.NoteIDs)
			continue
		}
		n, err := p.RemoveSource(j.wing, src.Path)
		if err != nil {
			return s, err
		}
		s.NotesRemoved += n
	}
	if !opts.DryRun && !existed && p.HasWing(j.wing) {
		p.AddRoot(j.wing, j.root)
	}
	if !opts.DryRun {
		for r := range goneRoots {
			p.RemoveRoot(j.wing, r)
		}
	}
	if m := s.migrated; m.Files > 0 {
		m.Wing, m.Format = j.wing, NoteFormat
		s.Migrated = append(s.Migrated, m)
	}
	return s, nil
}

func within(root, path string, isDir bool) bool {
	if !isDir {
		return path == root
	}
	return strings.HasPrefix(path, root+string(filepath.Separator))
}

// collect lists the markdown files of a job in a stable order, and the
// entries it refused (symlinks leaving the root).
func collect(j job) ([]candidate, []Problem) {
	if !j.isDir {
		info, err := os.Stat(j.root)
		if err != nil {
			return nil, []Problem{{Path: j.root, Err: err.Error()}}
		}
		return []candidate{{j.root, info}}, nil
	}
	var files []candidate
	var problems []Problem
	_ = filepath.WalkDir(j.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			// The root too: an agent directory that cannot be read hides
			// its files, which must not count as gone.
			problems = append(problems, Problem{Path: path, Err: unwrapPathErr(err).Error()})
			if d != nil && d.IsDir() && path != j.root {
				return fs.SkipDir
			}
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if path != j.root && hive.IsHidden(name) {
				return fs.SkipDir
			}
			return nil
		}
		if !hive.IsMemoryFile(name) {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := filepath.EvalSymlinks(path)
			if err != nil {
				problems = append(problems, Problem{Path: path, Err: "broken symlink: " + unwrapPathErr(err).Error()})
				return nil
			}
			if !within(j.root, target, true) {
				problems = append(problems, Problem{Path: path, Err: "symlink points outside " + j.root + "; not followed"})
				return nil
			}
			if collectable(j.root, target) {
				return nil // an alias of a file mined under its own name
			}
		}
		info, err := os.Stat(path)
		if err != nil {
			problems = append(problems, Problem{Path: path, Err: unwrapPathErr(err).Error()})
			return nil
		}
		if !info.Mode().IsRegular() {
			// Reported, so that notes it once gave stay (like an
			// unreadable file's) and the user learns why it is not mined.
			problems = append(problems, Problem{Path: path, Err: hivefile.Kind(info.Mode()) + ", not a regular file; not mined"})
			return nil
		}
		files = append(files, candidate{path, info})
		return nil
	})
	sort.Slice(files, func(a, b int) bool { return files[a].path < files[b].path })
	return files, problems
}

// collectable reports whether the walk of root lists path itself: a regular
// markdown file, not a conflict copy, not hidden.
func collectable(root, path string) bool {
	if !hive.IsMemoryFile(path) || hiddenBelow(root, path) {
		return false
	}
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode().IsRegular()
}

// File is a markdown file that mining a directory reads.
type File struct {
	Path  string
	Mtime time.Time
	Size  int64
}

// ListFiles lists the files a mine of dir reads, by the same rules, and the
// entries it would report instead. dir should be resolved (no symlinks),
// as Mine resolves it.
func ListFiles(dir string) ([]File, []Problem) {
	cands, problems := collect(job{root: dir, isDir: true})
	files := make([]File, len(cands))
	for i, c := range cands {
		files[i] = File{Path: c.path, Mtime: c.info.ModTime().UTC(), Size: c.info.Size()}
	}
	return files, problems
}

// hiddenBelow reports whether path lies in a hidden directory below root,
// where the walk does not go.
func hiddenBelow(root, path string) bool {
	rel, err := filepath.Rel(root, filepath.Dir(path))
	return err == nil && rel != "." && hive.IsHiddenPath(rel)
}

// Classified reports whether a mined file's notes were classified by the
// current governance rules (govern.Version). A file that was not is mined
// again though it did not change, which upgrades an older palace.
func Classified(s palace.Source) bool { return s.Governed == govern.Version }

// mineFile mines one file of job j.
func mineFile(ctx context.Context, p *palace.Palace, j job, agent string, f candidate, maxBytes int64, opts Options, s *Summary) error {
	wing := j.wing
	mtime, size := f.info.ModTime().UTC(), f.info.Size()
	old, known := p.Source(wing, f.path)
	// A file mined in an older note format is mined again, unchanged or
	// not; its unchanged texts keep their vectors (palace.ApplySource).
	remine := known && old.NoteFormat < NoteFormat && !opts.DryRun
	// The cheap check is trusted only for a settled file; others are read
	// and hashed again.
	settled := Settled(old)
	// A file classified by older governance rules, or mined in an older
	// note format, is mined again, so an older palace is upgraded by the
	// next mine.
	current := known && Classified(old) && !remine
	if current && settled && old.Mtime.Equal(mtime) && old.Size == size {
		s.FilesUnchanged++
		s.NotesUnchanged += len(old.NoteIDs)
		return nil
	}
	if size > maxBytes {
		return fmt.Errorf("file is %s, larger than the %s limit (max_file_bytes); not mined", bytesize.Format(size), bytesize.Format(maxBytes))
	}
	data, err := readFile(f.path, maxBytes)
	if err != nil {
		return err
	}
	if err := checkText(data); err != nil {
		return err
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	if current && old.Hash == hash {
		s.FilesUnchanged++
		s.NotesUnchanged += len(old.NoteIDs)
		// Record the new stat, or that the file has now settled; nothing
		// while its mtime is recent or in the future, so an unchanged
		// file never rewrites the palace on every mine.
		nowSettled := time.Since(mtime) > racyWindow
		if !opts.DryRun && (!old.Mtime.Equal(mtime) || old.Size != size || (nowSettled && !settled)) {
			p.TouchSource(wing, f.path, mtime, size)
		}
		return nil
	}
	doc, err := Parse(data, ParseOptions{MaxNoteRunes: opts.MaxNoteRunes})
	if err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	file, govWarnings := govern.ParseFile(doc.Frontmatter)
	for _, w := range append(doc.Warnings, govWarnings...) {
		s.Warnings = append(s.Warnings, Problem{Path: f.path, Err: w})
	}
	notes := make([]palace.Note, len(doc.Notes))
	occurrences := map[string]int{}
	rel := relPath(j.base, f.path)
	for i, n := range doc.Notes {
		key := n.Heading + "\x00" + n.Text
		id := NoteID(wing, rel, n.Heading, n.Text, occurrences[key])
		occurrences[key]++
		notes[i] = palace.Note{ID: id, Wing: wing, Agent: agent, Source: f.path, Line: n.Line, Heading: n.Heading, Text: n.Text,
			Governance: govern.Classify(file, n.Heading, n.Text)}
	}
	s.FilesChanged++
	if opts.DryRun {
		s.add(dryRunChange(old.NoteIDs, notes))
		return nil
	}
	src := palace.Source{Path: f.path, Agent: agent, Mtime: mtime, Size: size, Hash: hash, Frontmatter: FrontmatterScalars(doc.Frontmatter), Mined: time.Now().UTC(), Governed: govern.Version, NoteFormat: NoteFormat}
	ch, err := p.ApplySource(ctx, wing, src, notes)
	if err != nil {
		return &palaceError{fmt.Errorf("mine %s: %w", f.path, err)}
	}
	s.NotesAdded += ch.Added
	s.NotesRemoved += ch.Removed
	s.NotesUnchanged += ch.Unchanged
	if remine {
		s.migrated.Files++
		s.migrated.Notes += len(notes)
		s.migrated.Embedded += ch.Embedded
	}
	return nil
}

// relPath names path by its place below the agent directory base,
// '/'-separated, as note ids do.
func relPath(base, path string) string {
	rel, err := filepath.Rel(base, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		// Not below it (a link to a file elsewhere in the agent
		// directory's tree is resolved below it; nothing else is mined).
		return filepath.Base(path)
	}
	return filepath.ToSlash(rel)
}

// coversDamage reports whether mining job j rebuilt a damaged wing whole:
// j's root is every root the manifest recorded for it (or none was
// recorded), and j read its root.
func coversDamage(p *palace.Palace, j job) bool {
	for _, d := range p.Damaged() {
		if d.Wing != j.wing {
			continue
		}
		for _, r := range d.Roots {
			if r != j.root {
				return false
			}
		}
		for _, pr := range j.problems {
			if pr.Path == j.root {
				return false
			}
		}
		return true
	}
	return false
}

// palaceError marks a failure of the palace or the embedder while mining a
// file, which ends the mine instead of skipping the file.
type palaceError struct{ err error }

func (e *palaceError) Error() string { return e.err.Error() }

func dryRunChange(oldIDs []string, notes []palace.Note) Summary {
	var s Summary
	had := map[string]bool{}
	for _, id := range oldIDs {
		had[id] = true
	}
	keep := map[string]bool{}
	for _, n := range notes {
		keep[n.ID] = true
		if had[n.ID] {
			s.NotesUnchanged++
		} else {
			s.NotesAdded++
		}
	}
	for _, id := range oldIDs {
		if !keep[id] {
			s.NotesRemoved++
		}
	}
	return s
}

func readFile(path string, maxBytes int64) ([]byte, error) {
	// The file may have grown since it was listed; never read past the cap.
	data, err := hivefile.ReadLimited(path, maxBytes+1)
	if err != nil {
		return nil, unwrapPathErr(err)
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Errorf("file is larger than the %s limit (max_file_bytes); not mined", bytesize.Format(maxBytes))
	}
	return data, nil
}

// checkText refuses content that is not UTF-8 text: binary files and
// other encodings would mine as noise.
func checkText(data []byte) error {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return fmt.Errorf("looks like a binary file (NUL byte at offset %d); not mined", i)
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, size := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		line := bytes.Count(data[:off], []byte{'\n'}) + 1
		return fmt.Errorf("not valid UTF-8 (first bad byte at offset %d, line %d); convert it to UTF-8 to mine it", off, line)
	}
	return nil
}

// FrontmatterScalars returns the scalar values of frontmatter as text, as
// the palace keeps them (palace.Source.Frontmatter); lists and mappings are
// left out.
func FrontmatterScalars(fm map[string]any) map[string]string {
	if len(fm) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range fm {
		switch x := v.(type) {
		case string:
			out[k] = x
		case bool, int, int64, uint64, float64:
			out[k] = fmt.Sprint(x)
		case time.Time:
			out[k] = x.Format(time.RFC3339)
		}
	}
	return out
}

// unwrapPathErr drops the *PathError wrapper whose path the caller already
// prints, keeping messages short.
func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
