package mine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/bytesize"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/markdown"
	"github.com/memminer/memminer/memory/secrets"
	"github.com/memminer/memminer/palace"
)

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
	// Kind is ProblemVectorsKept for a wing left unmined to keep its
	// vectors, ProblemSecret for a warning about secrets in the file,
	// empty for every other problem.
	Kind string `json:"kind"`
}

// scanFrom scans data for secrets (secrets.Scan) from the start of line
// on (0 or 1: all of it), each found placed at its line in data.
func scanFrom(data []byte, line int) secrets.Masker {
	off := 0
	for l := 1; l < line && off < len(data); l++ {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			off = len(data)
			break
		}
		off += i + 1
	}
	m := secrets.Scan(string(data[off:]))
	for i := range m.Found {
		m.Found[i].Line += max(line, 1) - 1
	}
	return m
}

// hideScalars hides the secrets of frontmatter values, which wake-up and
// the index show (an identity).
func hideScalars(fm map[string]string) map[string]string {
	for k, v := range fm {
		fm[k], _ = secrets.Hide(v)
	}
	return fm
}

// ProblemSecret is the Kind of a warning about a file holding secrets:
// they are hidden from every output, and the file is as it was.
const ProblemSecret = "secret"

// secretsWarning is the warning about the secrets hidden in the file at
// path: their kinds and lines, never the secrets.
func secretsWarning(path string, found []secrets.Finding) Problem {
	where := make([]string, len(found))
	for i, f := range found {
		where[i] = fmt.Sprintf("%s at line %d", f.Kind, f.Line)
	}
	return Problem{Path: path, Kind: ProblemSecret, Err: fmt.Sprintf(
		"holds %d %s (%s), hidden from search, wake-up and every other output; remove %s from the file and store where %s, not what (memminer doctor lists them)",
		len(found), plural(len(found), "secret", "secrets"), strings.Join(where, ", "), plural(len(found), "it", "them"), plural(len(found), "it lives", "they live"))}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ProblemVectorsKept is the Kind of a problem that left a wing unmined
// because its vectors come from a model that is unavailable: mining it
// would drop them.
const ProblemVectorsKept = "vectors_kept"

// Summary reports what a mine did.
type Summary struct {
	Wings []string `json:"wings"`
	// Mined are the wings of Wings the mine put files in (changed,
	// unchanged or removed); a wing whose every file was skipped got no
	// notes and is not among them.
	Mined          []string  `json:"mined_wings"`
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
	Warnings []Problem  `json:"warnings"`
	DryRun   bool       `json:"dry_run"`
	Repaired []Repaired `json:"repaired"`
	// Migrated lists the wings whose files were mined again in the current
	// NoteFormat; a file is migrated once.
	Migrated []Migration   `json:"migrated"`
	Duration time.Duration `json:"-"`

	embedded int // notes that needed the embedder
	resumed  int // files that grew, parsed from their last section (grownNotes)
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
	s.embedded += o.embedded
	s.resumed += o.resumed
	s.Problems = append(s.Problems, o.Problems...)
	s.Migrated = append(s.Migrated, o.Migrated...)
	s.Warnings = append(s.Warnings, o.Warnings...)
}

// Migration tells that files of a wing mined with an older NoteFormat
// were mined again in the current one.
type Migration struct {
	Wing string `json:"wing"`
	// Format is the NoteFormat the files are in now.
	Format int `json:"format"`
	// Files counts the files migrated; Notes the notes the mine of the
	// wing found, Embedded those of them it had to embed.
	Files    int `json:"files"`
	Notes    int `json:"notes"`
	Embedded int `json:"embedded"`
}

// Mine mines the markdown at path (a file, or every *.md below a
// directory) into p and flushes the palace. See Options for how the wing is
// chosen. Files that cannot be mined are reported in the summary's
// Problems; an error is returned only when nothing sensible could be done.
func Mine(ctx context.Context, p *palace.Palace, path string, opts Options) (Summary, error) {
	return MinePlan(ctx, p, NewPlan(path, opts))
}

// minePath mines path into p, in memory, and flushes when p is writable.
func minePath(ctx context.Context, p *palace.Palace, path string, opts Options) (Summary, error) {
	return minePlanned(ctx, p, NewPlan(path, opts))
}

// minePlanned mines pl's jobs into p with the plan's options, in memory,
// and flushes when p is writable. The job of a wing the palace left
// unloaded (pl.Unchanged) is reported as mined, every file unchanged.
func minePlanned(ctx context.Context, p *palace.Palace, pl *Plan) (Summary, error) {
	start := time.Now()
	opts := pl.opts
	pl.list()
	if pl.err != nil {
		return Summary{}, pl.err
	}
	for i := range pl.jobs {
		pl.collect(i, nil)
	}
	path, jobs, skipped := pl.path, pl.jobs, pl.skipped
	// Every job's files are listed first, so progress counts the whole mine.
	all := 0
	for _, j := range jobs {
		all += len(j.files)
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
		var s Summary
		var err error
		if p.Unloaded(j.wing) {
			s = pl.keptSummary(j, opts)
		} else {
			s, err = mineOne(ctx, p, j, opts)
		}
		total.add(s)
		if s.FilesChanged+s.FilesUnchanged+s.FilesRemoved > 0 {
			total.Mined = append(total.Mined, j.wing)
		}
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
		pl.recordListings(p)
		// Flush even after cancellation: every applied file is whole, so
		// what was mined is kept.
		if err := p.Flush(); err != nil {
			return total, fmt.Errorf("mine %s: %w", path, err)
		}
	}
	total.Duration = time.Since(start)
	return total, runErr
}

// mineOne mines one job into its wing: the wing is made current with
// the palace's model, every file is mined, and files mined before that
// are gone are removed.
func mineOne(ctx context.Context, p *palace.Palace, j job, opts Options) (Summary, error) {
	s := Summary{Wings: []string{j.wing}, DryRun: opts.DryRun}
	s.Problems = append(s.Problems, j.problems...)
	s.FilesSeen += len(j.problems)
	s.FilesSkipped += len(j.problems)
	if pr, keep := keepVectors(p, j, opts); keep {
		s.FilesSkipped += len(j.files)
		s.Problems = append(s.Problems, pr)
		return s, nil
	}
	// A new wing is made by the first file mined into it: files that are
	// all skipped leave no empty wing behind.
	existed := p.HasWing(j.wing)
	if !opts.DryRun && existed {
		p.AddRoot(j.wing, j.root)
		if err := reembed(ctx, p, j.wing, opts, &s); err != nil {
			return s, err
		}
	}
	stale := staleSources(p, j.wing)
	if err := mineFiles(ctx, p, j, opts, &s); err != nil {
		return s, err
	}
	moved := formerRoots(p, j)
	if err := removeGone(p, j, moved, opts, &s); err != nil {
		return s, err
	}
	if !opts.DryRun {
		if !existed && p.HasWing(j.wing) {
			p.AddRoot(j.wing, j.root)
		}
		for _, r := range moved {
			p.RemoveRoot(j.wing, r)
		}
	}
	if n := stale - staleSources(p, j.wing); n > 0 && !opts.DryRun {
		// Mined again in place, or at the new place of a moved hive.
		s.Migrated = append(s.Migrated, Migration{Wing: j.wing, Format: NoteFormat, Files: n, Notes: s.NotesAdded + s.NotesUnchanged, Embedded: s.embedded})
	}
	return s, nil
}

// staleSources counts the files of wing mined in an older NoteFormat.
func staleSources(p *palace.Palace, wing string) int {
	n := 0
	for _, src := range p.SourceHeads(wing) {
		if src.NoteFormat < NoteFormat {
			n++
		}
	}
	return n
}

// keepVectors reports whether j's wing holds vectors of a model that is
// unavailable, with the problem that says so: then the wing is not mined.
// A fallback is not a model change: the vectors are kept for when the
// model is back.
func keepVectors(p *palace.Palace, j job, opts Options) (Problem, bool) {
	from, ok := p.ModelOf(j.wing)
	if !ok || opts.ModelUnavailable == "" || from == p.Model() || from == embed.Lexical || len(p.SourceHeads(j.wing)) == 0 {
		return Problem{}, false
	}
	return Problem{Path: j.root, Kind: ProblemVectorsKept, Err: fmt.Sprintf(
		"wing %s holds %s vectors and that model is unavailable (%s); not mined, so they are kept",
		j.wing, from, opts.ModelUnavailable)}, true
}

// reembed re-embeds wing with the palace's model when it was embedded with
// another one, before anything is mined into it.
func reembed(ctx context.Context, p *palace.Palace, wing string, opts Options, s *Summary) error {
	from, ok := p.ModelOf(wing)
	if !ok || from == p.Model() || len(p.SourceHeads(wing)) == 0 {
		return nil
	}
	n, err := p.Reembed(ctx, wing)
	if err != nil {
		return err
	}
	s.Reembedded += n
	if opts.OnReembed != nil {
		opts.OnReembed(wing, from, p.Model(), n)
	}
	return nil
}

// mineFiles mines every file of j. A file that cannot be mined is a
// problem and the rest go on; a failure of the embedder or the palace ends
// the mine, since every other file would fail the same way.
func mineFiles(ctx context.Context, p *palace.Palace, j job, opts Options, s *Summary) error {
	agent := opts.Agent
	if agent == "" {
		agent = j.wing
	}
	maxBytes := opts.MaxFileBytes
	if maxBytes <= 0 {
		maxBytes = config.DefaultMaxFileBytes
	}
	for i, f := range j.files {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.FilesSeen++
		if err := mineFile(ctx, p, j, agent, f, maxBytes, opts, s); err != nil {
			var pe *palaceError
			if errors.As(err, &pe) {
				return pe.err
			}
			s.FilesSkipped++
			s.Problems = append(s.Problems, Problem{Path: f.path, Err: err.Error()})
		}
		if opts.Progress != nil {
			opts.Progress(i+1, len(j.files))
		}
	}
	return nil
}

// formerRoots lists the roots of j's wing that are earlier places of j's
// root: gone, with the name of j's root (a moved or renamed hive), or at
// j's place in another hive (a copy of the hive mined before this one).
// Their files hold the same note ids as j's, so their notes would
// otherwise stand twice or be claimed by two files. A root that is merely
// out of reach elsewhere (an unmounted disk) keeps its notes, and a
// damaged wing's roots are left alone.
func formerRoots(p *palace.Palace, j job) []string {
	if p.IsDamaged(j.wing) {
		return nil
	}
	var out []string
	for _, r := range p.Roots(j.wing) {
		if r == j.root {
			continue
		}
		if j.hive != nil && strings.HasSuffix(filepath.ToSlash(r), "/"+j.place) {
			if _, inHive := j.hive.Rel(r); !inHive {
				out = append(out, r)
				continue
			}
		}
		if filepath.Base(r) != filepath.Base(j.root) {
			continue
		}
		if _, err := os.Lstat(r); errors.Is(err, fs.ErrNotExist) {
			out = append(out, r)
		}
	}
	return out
}

// removeGone removes from j's wing the files mined from j's root, or from
// a former root (formerRoots), that j did not find. A file in a directory
// that could not be read is not gone: its notes stay.
func removeGone(p *palace.Palace, j job, moved []string, opts Options, s *Summary) error {
	seen := map[string]bool{}
	for _, f := range j.files {
		seen[f.path] = true
	}
	hidden := func(path string) bool {
		for _, pr := range j.problems {
			if path == pr.Path || within(pr.Path, path, true) {
				return true
			}
		}
		return false
	}
	inMoved := func(path string) bool {
		for _, r := range moved {
			if path == r || within(r, path, true) {
				return true
			}
		}
		return false
	}
	// Heads: a wing none of whose files went is not read whole.
	for _, src := range p.SourceHeads(j.wing) {
		if seen[src.Path] || hidden(src.Path) {
			continue
		}
		if !within(j.root, src.Path, j.isDir) && !inMoved(src.Path) {
			continue
		}
		s.FilesRemoved++
		if opts.DryRun {
			s.NotesRemoved += src.Notes
			continue
		}
		if to := movedTo(j, moved, src.Path); seen[to] {
			p.InheritVersions(j.wing, src.Path, to)
		}
		n, err := p.RemoveSource(j.wing, src.Path)
		if err != nil {
			return err
		}
		s.NotesRemoved += n
	}
	return nil
}

// movedTo returns where path, in one of the former roots, lies now: the
// same place below j's root; "" when path is in none.
func movedTo(j job, moved []string, path string) string {
	for _, r := range moved {
		if rel, err := filepath.Rel(r, path); err == nil && within(r, path, true) {
			return filepath.Join(j.root, rel)
		}
	}
	return ""
}

// Classified reports whether a mined file's notes were classified by the
// current governance rules (govern.Version). A file that was not is mined
// again though it did not change, which upgrades an older palace.
func Classified(s palace.Source) bool { return s.Governed == govern.Version }

// mineFile mines one file of job j.
func mineFile(ctx context.Context, p *palace.Palace, j job, agent string, f candidate, maxBytes int64, opts Options, s *Summary) error {
	wing := j.wing
	mtime, size := f.info.ModTime().UTC(), f.info.Size()
	// The head: an unchanged file does not have its wing read whole.
	head, known := p.SourceHead(wing, f.path)
	old := head.Source
	wasSettled := settled(old)
	current := known && currentRules(old, opts.DryRun)
	if current && unchangedStat(old, mtime, size) {
		s.FilesUnchanged++
		s.NotesUnchanged += head.Notes
		return nil
	}
	if size > maxBytes {
		return fmt.Errorf("file is %s, larger than the %s limit (max_file_bytes); not mined", bytesize.Format(size), bytesize.Format(maxBytes))
	}
	data, err := readFile(j, f.path, maxBytes)
	if err != nil {
		return err
	}
	if err := checkText(data); err != nil {
		return err
	}
	hash, grew := hashFile(data, old)
	if current && old.Hash == hash {
		s.FilesUnchanged++
		s.NotesUnchanged += head.Notes
		// Record the new stat, or that the file has now settled; nothing
		// while its mtime is recent or in the future, so an unchanged
		// file never rewrites the palace on every mine.
		nowSettled := settledAt(mtime, time.Now())
		if !opts.DryRun && (!sameStat(old, mtime, size) || (nowSettled && !wasSettled)) {
			p.TouchSource(wing, f.path, mtime, size)
		}
		return nil
	}
	// A file that only grew is parsed from the start of its last section
	// (markdown.Resume), unless what is held of it says otherwise.
	var doc *markdown.Document
	var sections iter.Seq[[]markdown.Note]
	resumeLine := 0
	rel := relPath(j.base, f.path)
	agent = agentOf(agent, rel)
	if grew && current {
		doc, sections, resumeLine = resumeFile(p, wing, f.path, rel, data)
	}
	if doc == nil {
		if doc, sections, err = markdown.Sections(data, markdown.MemoryOptions()); err != nil {
			return fmt.Errorf("parse: %w", err)
		}
	}
	file, govWarnings := govern.ParseFile(doc.Frontmatter)
	if hive.IsInboxFile(f.path) {
		file = govern.InInbox(file)
	}
	for _, w := range append(doc.Warnings, govWarnings...) {
		s.Warnings = append(s.Warnings, Problem{Path: f.path, Err: w})
	}
	// Classify depends on nothing but the file's governance and a note's
	// heading and text: a note the wing holds of this file, classified
	// under the same rules and frontmatter, keeps its governance.
	fileKey := file.Key()
	sameGovern := known && Classified(old) && old.GovernedFile != "" && old.GovernedFile == fileKey
	of := fileOf{wing: wing, rel: rel, agent: agent, path: f.path, govern: file, heldGoverned: sameGovern}
	// Secrets are found in the file's text, not note by note: a long note
	// is cut in parts, which may cut one in two. The notes held of a file
	// that grew had theirs hidden when they were mined.
	var notes *palace.NoteSet
	if resumeLine > 0 {
		of.mask = scanFrom(data, resumeLine)
		if notes = grownNotes(p, sections, resumeLine, of); notes != nil {
			s.resumed++
		} else if doc, sections, err = markdown.Sections(data, markdown.MemoryOptions()); err != nil {
			return fmt.Errorf("parse: %w", err)
		}
	}
	if notes == nil {
		of.mask = scanFrom(data, 0)
		notes = palaceNotes(p, sections, of)
	}
	if len(of.mask.Found) > 0 {
		s.Warnings = append(s.Warnings, secretsWarning(f.path, of.mask.Found))
	}
	if opts.DryRun {
		s.FilesChanged++
		full, _ := p.Source(wing, f.path)
		s.add(dryRunChange(full.NoteIDs, notes))
		return nil
	}
	src := palace.Source{Path: f.path, Agent: agent, Mtime: mtime, Size: size, Hash: hash, Frontmatter: hideScalars(markdown.FrontmatterScalars(doc.Frontmatter)), Mined: time.Now().UTC(), Governed: govern.Version, GovernedFile: fileKey, NoteFormat: NoteFormat}
	if doc.Resume != nil {
		src.Resume = encodeResume(rel, doc.Resume)
	}
	ch, err := p.ApplySet(ctx, src, notes)
	if err != nil {
		return &palaceError{fmt.Errorf("mine %s: %w", f.path, err)}
	}
	// Counted once applied, so an interrupted mine says what it kept.
	s.FilesChanged++
	s.NotesAdded += ch.Added
	s.NotesRemoved += ch.Removed
	s.NotesUnchanged += ch.Unchanged
	s.embedded += ch.Embedded
	return nil
}

// agentOf is whom the notes of the file at rel (relative to its agent
// directory) are recorded as written by: the client whose own memory
// folder holds it (hive.ClientOf; Claude Code's auto memory), whoever
// mines it; otherwise agent.
func agentOf(agent, rel string) string {
	if client, ok := hive.ClientOf(rel); ok {
		return client
	}
	return agent
}

// hashFile returns the hex SHA-256 of data, and whether its first
// old.Size bytes are the content old was mined from: the file only grew.
func hashFile(data []byte, old palace.Source) (string, bool) {
	h := sha256.New()
	prefix := int64(0)
	if old.Size > 0 && old.Size < int64(len(data)) {
		prefix = old.Size
	}
	h.Write(data[:prefix])
	grew := prefix > 0 && hex.EncodeToString(h.Sum(nil)) == old.Hash
	h.Write(data[prefix:])
	return hex.EncodeToString(h.Sum(nil)), grew
}

// resumeFile parses the file at path of wing, which only grew, from where
// its last parse left off (markdown.SectionsFrom); a nil document when it
// cannot be. rel is the file's path in note ids now: the notes before
// the resume point were given ids with the one they were mined under.
func resumeFile(p *palace.Palace, wing, path, rel string, data []byte) (*markdown.Document, iter.Seq[[]markdown.Note], int) {
	full, ok := p.Source(wing, path)
	if !ok {
		return nil, nil, 0
	}
	minedAs, r, ok := decodeResume(full.Resume)
	if !ok || minedAs != rel {
		return nil, nil, 0
	}
	doc, sections, err := markdown.SectionsFrom(data, markdown.MemoryOptions(), r)
	if err != nil {
		return nil, nil, 0
	}
	return doc, sections, r.Line
}

// encodeResume is what a source keeps as palace.Source.Resume: the path
// the file's note ids name it by, then markdown's resume point.
func encodeResume(rel string, r *markdown.Resume) []byte {
	point, _ := r.MarshalBinary()
	b := binary.AppendUvarint(nil, uint64(len(rel)))
	return append(append(b, rel...), point...)
}

// decodeResume decodes what encodeResume encoded; false for anything else.
func decodeResume(b []byte) (string, *markdown.Resume, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return "", nil, false
	}
	rel, point := string(b[k:k+int(n)]), b[k+int(n):]
	var r markdown.Resume
	if r.UnmarshalBinary(point) != nil {
		return "", nil, false
	}
	return rel, &r, true
}

// palaceError marks a failure of the palace or the embedder while mining a
// file, which ends the mine instead of skipping the file.
type palaceError struct{ err error }

func (e *palaceError) Error() string { return e.err.Error() }

func dryRunChange(oldIDs []string, notes *palace.NoteSet) Summary {
	var s Summary
	had := map[string]bool{}
	for _, id := range oldIDs {
		had[id] = true
	}
	keep := map[string]bool{}
	for id := range notes.IDs() {
		keep[id] = true
		if had[id] {
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
