// Package remember is memminer's write path: it appends one note to an
// agent's own memory file, following the hive's write protocol (append
// only, dated, never past an open conflict copy, never a fact the wing
// already holds), and mines the file at once so the note is searchable in
// the next search. The CLI, the daemon and the MCP server all call
// Remember; the file editing itself is package memfile's.
package remember

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/govern"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/inbox"
	"github.com/memminer/memminer/memfile"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/wakeup"
)

// DefaultMaxNoteBytes bounds a note's text when Options.MaxNoteBytes is zero.
const DefaultMaxNoteBytes = 4 << 10

// attempts is how often Remember reads, edits and writes before it gives
// up on a file other writers keep changing.
const attempts = 5

// Errors callers tell apart.
var (
	// ErrBadRequest is matched by every error about the request itself: an
	// empty, oversized or non-text note, a bad tag, heading, wing or
	// reference. Nothing was written.
	ErrBadRequest = errors.New("bad request")
	// ErrNoHive means no hive is configured.
	ErrNoHive = errors.New("no hive configured")
	// ErrOutsideHive means the wing's directory or memory file leads out of
	// the hive through a symlink.
	ErrOutsideHive = errors.New("leads out of the hive")
	// ErrConflict is matched by a *ConflictError.
	ErrConflict = errors.New("open conflict")
	// ErrHashMismatch is matched by a *HashMismatchError.
	ErrHashMismatch = errors.New("memory file is not the version expected")
	// ErrBusy means the file kept changing under other writers.
	ErrBusy = errors.New("memory file kept changing")
	// ErrNotMined means the note was written but mining the file failed: it
	// is in the markdown, not yet in search.
	ErrNotMined = errors.New("written but not mined")
)

// requestError is a bad request; it matches ErrBadRequest.
type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

func (e *requestError) Is(target error) bool { return target == ErrBadRequest }

func badRequest(format string, args ...any) error {
	return &requestError{msg: fmt.Sprintf(format, args...)}
}

// ConflictError is an open Syncthing conflict copy in the wing: nothing
// was written.
type ConflictError struct {
	Wing string
	// Copies are the conflict copies, relative to the hive.
	Copies []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("wing %s has an open conflict: %s", e.Wing, strings.Join(e.Copies, ", "))
}

// Is makes a *ConflictError match ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// HashMismatchError is a memory file whose hash is not Request.ExpectHash.
type HashMismatchError struct {
	File       string // relative to the hive
	Want, Have string
}

func (e *HashMismatchError) Error() string {
	return fmt.Sprintf("%s has changed since you read it: its hash is %s, not %s", e.File, e.Have, e.Want)
}

// Is makes a *HashMismatchError match ErrHashMismatch.
func (e *HashMismatchError) Is(target error) bool { return target == ErrHashMismatch }

// Request is one note to remember. Its JSON is what the daemon's socket
// and the MCP tool take.
type Request struct {
	// Wing is the agent's own wing id.
	Wing string `json:"wing"`
	// Text is the note; several lines stay one list item.
	Text string `json:"text"`
	// Heading, when set, is the section ("## Heading") the note goes under,
	// created at the end of the file when missing.
	Heading string `json:"heading,omitempty"`
	// Tags are added as #tag.
	Tags []string `json:"tags,omitempty"`
	// Supersedes are notes the new one replaces: note ids, or FILE:LINE
	// with FILE relative to the agent directory (memory.md:12). Each is
	// marked "(superseded DATE)" at the end of its first line.
	Supersedes []string `json:"supersedes,omitempty"`
	// ExpectHash, when set, is the hash of the memory file the caller
	// read: any other version fails with a *HashMismatchError.
	ExpectHash string `json:"expect_hash,omitempty"`
	// Force writes even though the wing has an open conflict copy.
	Force bool `json:"force,omitempty"`
	// AllowDuplicate appends even when the wing holds the same fact.
	AllowDuplicate bool `json:"allow_duplicate,omitempty"`
	// Confidence is "verified" (the default) or "hypothesis", and Risk
	// "low" (the default) or "high": a hypothesis or a high-risk note goes
	// to the agent's inbox, not its memory (package inbox).
	Confidence string `json:"confidence,omitempty"`
	Risk       string `json:"risk,omitempty"`
	// TTL, for a verified low-risk note, is how long it holds before it is
	// stale until reviewed ("30d"; govern.ParseAge).
	TTL string `json:"ttl,omitempty"`
}

// NoteRef names one note of the palace.
type NoteRef struct {
	ID   string `json:"id"`
	Wing string `json:"wing"`
	// File is the note's file relative to the hive, "/"-separated, as
	// every command's JSON names files (hive.SourceName).
	File string `json:"file"`
	// Path is the note's file, absolute.
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// Result says what Remember did. Its JSON is `remember --json`.
type Result struct {
	Wing string `json:"wing"`
	// File is the memory file relative to the hive, "/"-separated
	// (hive.SourceName).
	File string `json:"file"`
	// Path is the memory file, absolute (symlinks resolved, as the
	// palace and search name it).
	Path string `json:"path"`
	// Line and ID are the new note's, or the existing one's for a duplicate.
	Line int    `json:"line"`
	ID   string `json:"id"`
	// Hash is the memory file's hash after the write (memfile.Hash).
	Hash string `json:"hash"`
	// Added is false when the fact was already remembered.
	Added bool `json:"added"`
	// DuplicateOf is the note that already holds the fact, or nil.
	DuplicateOf *NoteRef `json:"duplicate_of"`
	// Superseded are the notes marked superseded, as they were before.
	Superseded []NoteRef `json:"superseded"`
	// ForcedPast are the open conflict copies written past with Force.
	ForcedPast []string `json:"forced_past"`
	// Pending is set when the note went to the agent's inbox, to wait for
	// a person's approval (memminer inbox).
	Pending bool `json:"pending"`
}

// Options configure Remember.
type Options struct {
	// Hive is the hive directory.
	Hive string
	// Agents are the configured globs of agent directories besides
	// agents/<id> (config agents).
	Agents []string
	// MaxNoteBytes bounds the note's text; zero means DefaultMaxNoteBytes.
	MaxNoteBytes int64
	// Mine is how files are mined (MaxFileBytes also bounds the memory
	// file Remember writes); Wing and Hive are set by Remember.
	Mine mine.Options
	// Embedder makes the vector the duplicate check compares; nil means
	// lexical only.
	Embedder embed.Embedder
	// Now is the clock dates are taken from; nil means time.Now.
	Now func() time.Time
}

// tagRe is compiled on first use: its Unicode classes make it costly, and
// every command would pay for it at start-up.
var tagRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\p{L}\p{N}_][\p{L}\p{N}_/-]*$`) })

// target is where a wing's notes go.
type target struct {
	wing    string
	dir     string // agent directory as named below the hive
	realDir string // with symlinks resolved, as the palace records paths
	file    string // memory file, symlinks resolved
	rel     string // memory file relative to the hive, for display
	title   string // the first line of a file the write creates
	hive    string // hive, symlinks resolved
	h       *hive.Hive
}

// Remember appends req's note to the wing's memory file and mines the file
// into p, which must be writable (the caller holds the palace lock). On
// ErrNotMined the Result is filled: the note is in the file.
func Remember(ctx context.Context, p *palace.Palace, req Request, opts Options) (Result, error) {
	if opts.Hive == "" {
		return Result{}, ErrNoHive
	}
	if !p.Writable() {
		return Result{}, fmt.Errorf("remember: %w", palace.ErrReadOnly)
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	date := now().Format(time.DateOnly)
	item, heading, err := checkRequest(&req, opts)
	if err != nil {
		return Result{}, err
	}
	class, err := inbox.ParseClass(req.Confidence, req.Risk, req.TTL)
	if err != nil {
		return Result{}, badRequest("%v", err)
	}
	if class.Pending() && len(req.Supersedes) > 0 {
		return Result{}, badRequest("a %s %s-risk note waits in the inbox and supersedes nothing until a person approves it; leave out supersedes", class.Confidence, class.Risk)
	}
	// The fact as the agent stated it is what the duplicate check compares.
	fact := item.Text
	item.Text, item.Date = class.Text(item.Text, now()), date
	h, err := hive.Open(opts.Hive, opts.Agents)
	if err != nil {
		return Result{}, fmt.Errorf("remember: %w", err)
	}
	name := hive.MemoryFileName
	if class.Pending() {
		name = hive.InboxFileName
	}
	t, err := locate(h, req.Wing, name)
	if err != nil {
		return Result{}, err
	}
	res := Result{Wing: t.wing, File: hive.SourceName(t.h, t.file), Path: t.file, Superseded: []NoteRef{}, ForcedPast: []string{}, Pending: class.Pending()}

	found, err := h.ConflictCopies(ctx, t.wing)
	if err != nil && len(found) == 0 {
		return Result{}, fmt.Errorf("remember: check for conflict copies: %w", err)
	}
	copies := []string{}
	for _, c := range found {
		copies = append(copies, filepath.ToSlash(mustRel(h.Dir(), c.Path)))
	}
	if len(copies) > 0 && !req.Force {
		return Result{}, &ConflictError{Wing: t.wing, Copies: copies}
	}
	res.ForcedPast = copies

	if err := os.MkdirAll(t.dir, 0o755); err != nil {
		return Result{}, fmt.Errorf("remember: %w", err)
	}
	unlock, err := memfile.Lock(ctx, t.dir)
	if err != nil {
		return Result{}, fmt.Errorf("remember: %w", err)
	}
	defer unlock()
	if t.realDir, err = filepath.EvalSymlinks(t.dir); err != nil {
		return Result{}, fmt.Errorf("remember: %w", err)
	}
	if err := memfile.RemoveStale(t.file); err != nil {
		return Result{}, fmt.Errorf("remember: remove the leftovers of an interrupted write: %w", err)
	}

	mopts := opts.Mine
	mopts.Wing, mopts.Hive, mopts.Agents = t.wing, opts.Hive, opts.Agents
	maxFile := mopts.MaxFileBytes
	if maxFile <= 0 {
		maxFile = config.DefaultMaxFileBytes
	}
	var vec []float32
	for attempt := 1; ; attempt++ {
		// The palace must be current for the duplicate check and the
		// references: mine what changed since the last mine, if anything
		// did (by mine's rule: a mine that changes nothing still flushes).
		if ch := mine.Changed(p, t.wing, t.realDir); len(ch.Changed) > 0 || len(ch.Gone) > 0 {
			if err := mineDir(ctx, p, t.realDir, t.file, mopts); err != nil {
				return Result{}, fmt.Errorf("remember: mine %s before writing: %w", t.rel, err)
			}
		}
		snap, err := memfile.Read(t.file, maxFile)
		if err != nil {
			return Result{}, fmt.Errorf("remember: %w", err)
		}
		if req.ExpectHash != "" && !strings.EqualFold(req.ExpectHash, snap.Hash) {
			return Result{}, &HashMismatchError{File: t.rel, Want: req.ExpectHash, Have: snap.Hash}
		}
		old, err := resolveRefs(p, t, req.Supersedes)
		if err != nil {
			return Result{}, err
		}
		if !req.AllowDuplicate {
			if vec == nil && opts.Embedder != nil {
				vec = embedProbe(ctx, p, opts.Embedder, t.wing, heading, fact)
			}
			except := make([]string, len(old))
			for i, n := range old {
				except[i] = n.ID
			}
			if !class.Pending() {
				// What waits in the inbox is no memory: a fact written
				// (or approved) into memory does not duplicate it.
				except = append(except, inbox.PendingIDs(p.Notes(t.wing))...)
			}
			if n, ok := wakeup.Duplicate(p, t.wing, fact, vec, except...); ok {
				ref := t.ref(n)
				res.Line, res.ID, res.Hash, res.DuplicateOf = n.Line, n.ID, snap.Hash, &ref
				res.File = ref.File
				return res, nil
			}
		}
		err = write(ctx, t, snap, heading, item, old, date, maxFile, &res)
		if errors.Is(err, memfile.ErrChanged) && attempt < attempts {
			continue
		}
		if errors.Is(err, memfile.ErrChanged) {
			return Result{}, fmt.Errorf("remember: %w: %s changed between read and write %d times; try again", ErrBusy, t.rel, attempts)
		}
		if err != nil {
			return Result{}, err
		}
		break
	}
	res.Added = true
	if err := mineDir(ctx, p, t.realDir, t.file, mopts); err != nil {
		return res, fmt.Errorf("remember: %s: %w: %w", t.rel, ErrNotMined, err)
	}
	for _, n := range p.Notes(t.wing) {
		if n.Source == t.file && n.Line == res.Line {
			res.ID = n.ID
			break
		}
	}
	if res.ID == "" {
		return res, fmt.Errorf("remember: %s: %w: no note at line %d after mining", t.rel, ErrNotMined, res.Line)
	}
	return res, nil
}

// write edits the memory file (and the files of superseded notes) and
// writes them. Superseded notes in other files are marked after the new
// note is written.
func write(ctx context.Context, t target, snap memfile.Snapshot, heading string, item memfile.Item, old []palace.Note, date string, maxFile int64, res *Result) error {
	data := snap.Data
	if !snap.Exists {
		data = []byte(t.title + "\n\n")
	}
	var others []palace.Note
	for _, n := range old {
		if n.Source != t.file {
			others = append(others, n)
			continue
		}
		var err error
		if data, err = memfile.MarkSuperseded(data, n.Line, date); err != nil {
			return fmt.Errorf("remember: supersede %s:%d: %w", t.rel, n.Line, err)
		}
	}
	out, line, err := memfile.Append(data, heading, item)
	if err != nil {
		return fmt.Errorf("remember: %s: %w", t.rel, err)
	}
	if heading == "" && governedByHeading(out, line) {
		// The file's last section would hide or mark the new note at
		// once (## Superseded, ## Archive): it goes under its own heading.
		if out, line, err = memfile.Append(data, NotesHeading, item); err != nil {
			return fmt.Errorf("remember: %s: %w", t.rel, err)
		}
	}
	if int64(len(out)) > maxFile {
		return badRequest("%s would grow past max_file_bytes (%d bytes) and stop being mined; split it", t.rel, maxFile)
	}
	// The other files are read and checked before anything is written.
	type edit struct {
		snap memfile.Snapshot
		data []byte
	}
	var edits []edit
	for _, n := range others {
		s, err := memfile.Read(n.Source, maxFile)
		if err != nil {
			return fmt.Errorf("remember: supersede: %w", err)
		}
		for i := range edits {
			if edits[i].snap.Path == n.Source {
				s = edits[i].snap
			}
		}
		marked, err := memfile.MarkSuperseded(s.Data, n.Line, date)
		if err != nil {
			return fmt.Errorf("remember: supersede %s:%d: %w", t.relOf(n.Source), n.Line, err)
		}
		edits = append(edits, edit{snap: s, data: marked})
	}
	ctx = memfile.Describe(ctx, t.wing, "remember: "+memfile.FirstWords(item.Text))
	if err := memfile.Write(ctx, snap, out); err != nil {
		return err
	}
	res.Line, res.Hash = line, memfile.Hash(out)
	for _, e := range edits {
		if err := memfile.Write(ctx, e.snap, e.data); err != nil {
			// %v, not %w: this must not match memfile.ErrChanged, which
			// would make Remember append the note a second time.
			return fmt.Errorf("remember: the note is written, but marking %s superseded failed: %v", t.relOf(e.snap.Path), err)
		}
	}
	for _, n := range old {
		res.Superseded = append(res.Superseded, t.ref(n))
	}
	return nil
}

// NotesHeading is the section a note without a heading goes under when
// the file's last section is one governance reads as superseded or stale.
const NotesHeading = "Notes"

// governedByHeading reports whether the note starting at line of data is
// superseded or stale by its heading path alone.
func governedByHeading(data []byte, line int) bool {
	doc, err := mine.Parse(data, mine.ParseOptions{})
	if err != nil {
		return false
	}
	for _, n := range doc.Notes {
		if n.Line == line {
			st := govern.Classify(govern.File{}, n.Heading, "").Status
			return st == govern.Superseded || st == govern.Stale
		}
	}
	return false
}

// checkRequest normalises and checks req, returning the item to append and
// the heading.
func checkRequest(req *Request, opts Options) (memfile.Item, string, error) {
	bad := badRequest
	w, err := hive.NormalizeWingID(req.Wing)
	if err != nil {
		return memfile.Item{}, "", bad("wing: %v", err)
	}
	req.Wing = w
	limit := opts.MaxNoteBytes
	if limit <= 0 {
		limit = DefaultMaxNoteBytes
	}
	if err := memfile.CheckText([]byte(req.Text)); err != nil {
		return memfile.Item{}, "", bad("the note is %v", err)
	}
	text := strings.TrimSpace(req.Text)
	switch {
	case text == "":
		return memfile.Item{}, "", bad("the note is empty")
	case int64(len(text)) > limit:
		return memfile.Item{}, "", bad("the note is %d bytes, over the %d-byte limit (max_note_bytes); remember small atomic facts, one at a time", len(text), limit)
	}
	heading := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(req.Heading), "#"))
	if req.Heading != "" && (heading == "" || strings.ContainsAny(heading, "\r\n") || memfile.CheckText([]byte(heading)) != nil) {
		return memfile.Item{}, "", bad("heading %q: want one line of text", req.Heading)
	}
	var tags []string
	for _, tag := range req.Tags {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "#")
		if !tagRe().MatchString(tag) {
			return memfile.Item{}, "", bad("tag %q: want letters, digits, _, - or /, no spaces", tag)
		}
		if !slices.Contains(tags, tag) {
			tags = append(tags, tag)
		}
	}
	return memfile.Item{Text: text, Tags: tags}, heading, nil
}

// FileOf returns the memory file Remember writes for wing, relative to the
// hive and "/"-separated: agents/<wing>/memory.md, or the memory.md of the
// directory an agents glob names for that wing.
func FileOf(hiveDir string, agents []string, wing string) (string, error) {
	h, err := hive.Open(hiveDir, agents)
	if err != nil {
		return "", err
	}
	t, err := locate(h, wing, hive.MemoryFileName)
	if err != nil {
		return "", err
	}
	return t.rel, nil
}

// locate finds the wing's agent directory: the one the hive gives that
// wing (agents/<id>/ or a directory the agents globs match), else
// agents/<id>/ to be created, and its file name (memory.md, or the inbox).
// Neither the directory nor the file may lead out of the hive.
func locate(h *hive.Hive, wing, name string) (target, error) {
	abs := h.Dir()
	realHive, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return target{}, fmt.Errorf("remember: hive %s: %w", abs, err)
	}
	t := target{wing: wing, hive: realHive, h: h, dir: filepath.Join(abs, "agents", wing)}
	a, err := h.WingDir(wing)
	switch {
	case err == nil:
		t.dir = a.Path
	case errors.Is(err, hive.ErrNoAgentDir):
		_, skipped, _ := h.Agents()
		for _, s := range skipped {
			if s.Reason == hive.OutsideHive && filepath.Base(s.Path) == wing {
				return target{}, fmt.Errorf("remember: agent directory %s: %w (%v)", s.Rel, ErrOutsideHive, s.Err)
			}
		}
	default:
		return target{}, fmt.Errorf("remember: %w", err)
	}
	file := filepath.Join(t.dir, name)
	t.rel = filepath.ToSlash(mustRel(abs, file))
	t.title = "# " + wing + "'s memory"
	if hive.IsInboxFile(name) {
		t.title = inbox.Title(wing)
	}
	// The deepest part of the path that exists must not lead out of the
	// hive (a symlinked agents/, say); nor may the memory file.
	for p := file; ; p = filepath.Dir(p) {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			if p == abs || filepath.Dir(p) == p {
				t.file = file
				break
			}
			continue
		}
		if p != abs && h.LeadsOut(p) {
			return target{}, fmt.Errorf("remember: %s: %w (it resolves to %s)", filepath.ToSlash(mustRel(abs, p)), ErrOutsideHive, r)
		}
		t.file = filepath.Join(r, mustRel(p, file))
		break
	}
	return t, nil
}

func mustRel(base, p string) string {
	r, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return r
}

// ref names a palace note for output.
func (t target) ref(n palace.Note) NoteRef {
	return NoteRef{ID: n.ID, Wing: n.Wing, File: t.relOf(n.Source), Path: n.Source, Line: n.Line, Text: n.Text}
}

// relOf names a palace path as output does.
func (t target) relOf(path string) string { return hive.SourceName(t.h, path) }

// resolveRefs finds the notes refs name, in the wing.
func resolveRefs(p *palace.Palace, t target, refs []string) ([]palace.Note, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	notes := p.Notes(t.wing)
	var out []palace.Note
	for _, ref := range refs {
		n, err := resolveRef(p, t, notes, strings.TrimSpace(ref))
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(o palace.Note) bool { return o.ID == n.ID }) {
			continue
		}
		if strings.Contains(strings.ToLower(n.Text), "(superseded") {
			return nil, &RefError{Ref: ref, Kind: RefSuperseded, File: t.relOf(n.Source), Line: n.Line}
		}
		out = append(out, n)
	}
	return out, nil
}

var noteIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{32}$`) })

func resolveRef(p *palace.Palace, t target, notes []palace.Note, ref string) (palace.Note, error) {
	id, file, line, ok := ParseRef(ref)
	if !ok {
		return palace.Note{}, &RefError{Ref: ref, Kind: RefMalformed}
	}
	if id != "" {
		for _, n := range notes {
			if n.ID == ref {
				return n, nil
			}
		}
		for _, w := range p.Wings() {
			if w.ID == t.wing {
				continue
			}
			for _, n := range p.Notes(w.ID) {
				if n.ID == ref {
					return palace.Note{}, &RefError{Ref: ref, Kind: RefOtherWing, Wing: w.ID}
				}
			}
		}
		return palace.Note{}, &RefError{Ref: ref, Kind: RefNoID, Wing: t.wing}
	}
	file = filepath.FromSlash(file)
	// FILE is relative to the agent directory, or to the hive.
	var candidates []string
	if !filepath.IsAbs(file) {
		candidates = append(candidates, filepath.Join(t.realDir, file), filepath.Join(t.hive, file))
	} else {
		candidates = append(candidates, file)
	}
	for _, c := range candidates {
		if r, err := filepath.EvalSymlinks(c); err == nil {
			c = r
		}
		for _, n := range notes {
			if n.Source == c && n.Line == line {
				return n, nil
			}
		}
	}
	return palace.Note{}, &RefError{Ref: ref, Kind: RefNoLine, Wing: t.wing}
}

// mineDir mines the agent directory into p when it holds markdown; a
// problem with the memory file is an error.
func mineDir(ctx context.Context, p *palace.Palace, dir, file string, opts mine.Options) error {
	if files, _ := mine.ListFiles(dir); len(files) == 0 {
		return nil
	}
	s, err := mine.Mine(ctx, p, dir, opts)
	if err != nil {
		return err
	}
	for _, pr := range s.Problems {
		if pr.Path == file {
			return errors.New(pr.Err)
		}
	}
	return nil
}

// embedProbe embeds the note as the palace would, for the duplicate
// check; nil when the wing has vectors of another model or embedding fails
// (the check is then lexical).
func embedProbe(ctx context.Context, p *palace.Palace, e embed.Embedder, wing, heading, text string) []float32 {
	if model, ok := p.ModelOf(wing); !ok || model != e.Model() {
		return nil
	}
	n := palace.Note{Heading: heading, Text: text}
	vecs, err := e.Embed(ctx, []string{n.EmbedText()})
	if err != nil || len(vecs) != 1 {
		return nil
	}
	return vecs[0]
}
