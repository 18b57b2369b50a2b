// Package remember is memminer's write path: it appends one note to an
// agent's own memory file on this machine (memory.<machine>.md, which no
// other machine writes), following the hive's write protocol (append
// only, dated, never past an open conflict copy, never a fact the wing
// already holds: SameFact), and mines the file at once so the note is
// searchable in the next search. The CLI, the daemon and the MCP server all call
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
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/inbox"
	"github.com/memminer/memminer/internal/backoff"
	"github.com/memminer/memminer/memfile"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/secrets"
)

// DefaultMaxNoteBytes bounds a note's text when Options.MaxNoteBytes is zero.
const DefaultMaxNoteBytes = 4 << 10

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
	// ErrOutsideAgentDir is matched by a *LinkError: a file the wing would
	// write is a symlink out of its own agent directory.
	ErrOutsideAgentDir = errors.New("leads out of the agent directory")
	// ErrConflict is matched by a *ConflictError.
	ErrConflict = errors.New("open conflict")
	// ErrHashMismatch is matched by a *HashMismatchError.
	ErrHashMismatch = errors.New("memory file is not the version expected")
	// ErrBusy means the file kept changing under other writers.
	ErrBusy = errors.New("memory file kept changing")
	// ErrNotMined means the note was written but mining the file failed: it
	// is in the markdown, not yet in search.
	ErrNotMined = errors.New("written but not mined")
	// ErrSecret is matched by a *SecretError: the note holds a credential,
	// and nothing was written.
	ErrSecret = errors.New("the note holds a secret")
	// ErrNotMarked means the note was written but a note it supersedes in
	// another file could not be marked: the Result is filled, and the old
	// note is still live.
	ErrNotMarked = errors.New("written but the superseded note not marked")
)

// requestError is a bad request; it matches ErrBadRequest.
type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

func (e *requestError) Is(target error) bool { return target == ErrBadRequest }

func badRequest(format string, args ...any) error {
	return &requestError{msg: fmt.Sprintf(format, args...)}
}

// RefError is a supersedes reference that names no note the request may
// supersede. It matches ErrBadRequest. Its text names the request field
// and the search that gives notes' ids and lines as every caller knows
// them; Explain words it for a caller with other names (the CLI's flag).
type RefError struct {
	// Ref is the reference as the request gave it.
	Ref string `json:"ref"`
	// Kind says what is wrong with it: one of the Ref* kinds.
	Kind string `json:"kind"`
	// Wing is the wing the note was looked for in (RefNoID, RefNoLine) or
	// the other wing that holds it (RefOtherWing).
	Wing string `json:"wing,omitempty"`
	// File and Line are the note already superseded (RefSuperseded), File
	// relative to the hive.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
}

// The kinds of a RefError.
const (
	RefSuperseded = "already_superseded" // the note is marked superseded
	RefOtherWing  = "other_wing"         // the note is in another agent's wing
	RefNoID       = "no_such_id"         // no note of the wing has the id
	RefMalformed  = "malformed"          // neither an id nor FILE:LINE
	RefNoLine     = "no_such_line"       // no note of the wing starts at FILE:LINE
)

func (e *RefError) Error() string { return e.Explain("supersedes", "search") }

// Is reports whether target is ErrBadRequest.
func (e *RefError) Is(target error) bool { return target == ErrBadRequest }

// Explain words e for a caller that names the reference field and the
// search that gives each note's id and line.
func (e *RefError) Explain(field, search string) string {
	switch e.Kind {
	case RefSuperseded:
		return fmt.Sprintf("%s %s: %s:%d is already marked superseded", field, e.Ref, e.File, e.Line)
	case RefOtherWing:
		return fmt.Sprintf("%s %s: that note is in wing %s; an agent supersedes only notes of its own wing", field, e.Ref, e.Wing)
	case RefNoID:
		return fmt.Sprintf("%s %s: no note of wing %s has that id (ids change when a note is edited; %s again)", field, e.Ref, e.Wing, search)
	case RefNoLine:
		return fmt.Sprintf("%s %s: no note of wing %s starts at that line (%s gives each note's line)", field, e.Ref, e.Wing, search)
	}
	return fmt.Sprintf("%s %q: want a note id (%s gives each note's), or FILE:LINE such as memory.md:12", field, e.Ref, search)
}

// SecretError is a note that holds a credential (package secrets): nothing
// was written. Its text names each secret's kind and where it is in the
// request's field, never the secret; Request.Redact writes the note with
// each one replaced by "[redacted: KIND]" instead.
type SecretError struct {
	// Field is the request's field that holds them: "text", "heading" or
	// "tags".
	Field string `json:"field"`
	// Found are the secrets, in the order they appear.
	Found []secrets.Finding `json:"found"`
}

func (e *SecretError) Error() string {
	return fmt.Sprintf("the note's %s holds a secret: %s", e.Field, secrets.Describe(e.Found))
}

// Is makes a *SecretError match ErrSecret.
func (e *SecretError) Is(target error) bool { return target == ErrSecret }

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
	// Retry says the request may have been carried out already, its
	// answer lost (a daemon that died answering): when the machine's file
	// holds the note's lines, dated today, that is taken as its write and
	// answered as such, and nothing is written twice.
	Retry bool `json:"retry,omitempty"`
	// Confidence is "verified" (the default) or "hypothesis", and Risk
	// "low" (the default) or "high": a hypothesis or a high-risk note goes
	// to the agent's inbox, not its memory (package inbox).
	Confidence string `json:"confidence,omitempty"`
	Risk       string `json:"risk,omitempty"`
	// TTL, for a verified low-risk note, is how long it holds before it is
	// stale until reviewed ("30d"; govern.ParseAge).
	TTL string `json:"ttl,omitempty"`
	// Redact writes a note that holds a secret with each one replaced by
	// "[redacted: KIND]"; without it such a note is refused (SecretError).
	// A secret in a tag is always refused.
	Redact bool `json:"redact,omitempty"`
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
	// SimilarTo, for a note written, is a note of the wing it resembles
	// (wakeup.Similar) without stating the same fact, or nil: if the new
	// note replaces it, supersede it.
	SimilarTo *NoteRef `json:"similar_to"`
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
	// Machine names this machine: notes go to the agent directory's
	// memory.<machine>.md (hive.MachineFileName), which no other machine
	// writes. Empty means hive.DefaultMachine.
	Machine string
	// MaxNoteBytes bounds the note's text; zero means DefaultMaxNoteBytes.
	MaxNoteBytes int64
	// Mine is how files are mined (MaxFileBytes also bounds the memory
	// file Remember writes); Wing and Hive are set by Remember.
	Mine mine.Options
	// Embedder makes the vector the similarity hint compares (never the
	// duplicate rule, SameFact); nil means lexical only.
	Embedder embed.Embedder
	// Now is the clock dates are taken from; nil means time.Now.
	Now func() time.Time
}

// tagRe is compiled on first use: its Unicode classes make it costly, and
// every command would pay for it at start-up.
var tagRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\p{L}\p{N}_][\p{L}\p{N}_/-]*$`) })

// Remember appends req's note to this machine's memory file of the wing
// (memory.<Options.Machine>.md) and mines the agent directory into p,
// which must be writable (the caller holds the palace lock). The rules:
// docs/remember.md. On ErrNotMined and ErrNotMarked the Result is filled:
// the note is in the file.
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
	// The fact as the agent stated it is what a memory write compares.
	fact := item.Text
	item.Text, item.Date = class.Text(item.Text, now()), date
	h, err := hive.Open(opts.Hive, opts.Agents)
	if err != nil {
		return Result{}, fmt.Errorf("remember: %w", err)
	}
	machine, err := machineName(opts.Machine)
	if err != nil {
		return Result{}, err
	}
	t, err := locate(h, req.Wing, machine)
	if err != nil {
		return Result{}, err
	}
	if class.Pending() {
		t.toInbox()
	}
	res := Result{Wing: t.wing, File: t.rel, Path: t.file, Superseded: []NoteRef{}, ForcedPast: []string{}, Pending: class.Pending()}

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
	if err := t.confine(); err != nil {
		return Result{}, err
	}
	res.Path, res.File = t.file, t.relOf(t.file)
	if err := memfile.RemoveStale(t.file); err != nil {
		return Result{}, fmt.Errorf("remember: remove the leftovers of an interrupted write: %w", err)
	}

	mopts := opts.Mine
	mopts.Wing, mopts.Hive, mopts.Agents = t.wing, opts.Hive, opts.Agents
	maxFile := mopts.MaxFileBytes
	if maxFile <= 0 {
		maxFile = config.DefaultMaxFileBytes
	}
	var (
		vec []float32
		old []palace.Note
		bo  = newBackoff()
		// replay: the note may be in the file already, written by this
		// request before (a daemon that died answering, a write whose
		// file was replaced meanwhile); then it is not written again.
		replay = req.Retry
	)
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
		if replay {
			if line, ok := findItem(snap.Data, item); ok {
				res.Line, res.Hash = line, snap.Hash
				// The request that wrote it may have died before marking
				// what it replaces in other files.
				old = unmarkedRefs(p, t, req.Supersedes)
				if err := markOthers(ctx, t, old, date, maxFile, false); err != nil {
					return notMarked(ctx, p, t, mopts, res, err)
				}
				for _, n := range old {
					res.Superseded = append(res.Superseded, t.ref(n))
				}
				break
			}
		}
		if req.ExpectHash != "" && !strings.EqualFold(req.ExpectHash, snap.Hash) {
			return Result{}, &HashMismatchError{File: t.rel, Want: req.ExpectHash, Have: snap.Hash}
		}
		if old, err = resolveRefs(p, t, req.Supersedes); err != nil {
			return Result{}, err
		}
		except := make([]string, len(old))
		for i, n := range old {
			except[i] = n.ID
		}
		probe := item.Text // in the inbox, an item is the same with its marker
		if !class.Pending() {
			// What waits in the inbox is no memory: a fact written (or
			// approved) into memory does not duplicate it.
			except = append(except, inbox.PendingIDs(p.Notes(t.wing))...)
			probe = fact
		}
		if !req.AllowDuplicate {
			if vec == nil && opts.Embedder != nil {
				vec = embedProbe(ctx, p, opts.Embedder, t.wing, heading, fact)
			}
			same, similar := findSame(p, t.wing, probe, vec, except)
			if same != nil {
				ref := t.ref(*same)
				res.Line, res.ID, res.Hash, res.DuplicateOf = same.Line, same.ID, snap.Hash, &ref
				res.File = ref.File
				// The fact is there (written with a similar_to hint,
				// say): what is left to do is marking what it replaces.
				if err := markOthers(ctx, t, old, date, maxFile, true); err != nil {
					return Result{}, err
				}
				for _, n := range old {
					res.Superseded = append(res.Superseded, t.ref(n))
				}
				if len(old) > 0 {
					if now, err := memfile.Read(t.file, maxFile); err == nil {
						res.Hash = now.Hash
					}
					if err := mineDir(ctx, p, t.realDir, t.file, mopts); err != nil {
						return res, fmt.Errorf("remember: %s: %w: %w", t.rel, ErrNotMined, err)
					}
				}
				return res, nil
			}
			if similar != nil {
				ref := t.ref(*similar)
				res.SimilarTo = &ref
			}
		}
		err = write(ctx, t, snap, heading, item, old, date, maxFile, &res)
		if errors.Is(err, memfile.ErrReplaced) {
			replay = true // the lines may have reached the file that replaced it
		}
		if retryable(err) && attempt < attempts {
			if err := backoff.Sleep(ctx, bo.Next()); err != nil {
				return Result{}, fmt.Errorf("remember: %w", err)
			}
			continue
		}
		if retryable(err) {
			return Result{}, fmt.Errorf("remember: %w: %s changed between read and write %d times; try again", ErrBusy, t.rel, attempts)
		}
		if err != nil {
			return Result{}, err
		}
		if err := markOthers(ctx, t, old, date, maxFile, false); err != nil {
			return notMarked(ctx, p, t, mopts, res, err)
		}
		for _, n := range old {
			res.Superseded = append(res.Superseded, t.ref(n))
		}
		break
	}
	res.Added = true
	if err := mineDir(ctx, p, t.realDir, t.file, mopts); err != nil {
		return res, fmt.Errorf("remember: %s: %w: %w", t.rel, ErrNotMined, err)
	}
	if res.ID = noteAt(p, t, res.Line); res.ID == "" {
		return res, fmt.Errorf("remember: %s: %w: no note at line %d after mining", t.rel, ErrNotMined, res.Line)
	}
	return res, nil
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
	// Before any check that echoes the text: a refusal never shows a
	// secret.
	if text, err = withoutSecrets("text", text, req.Redact); err != nil {
		return memfile.Item{}, "", err
	}
	shownHeading := req.Heading
	if h, err := withoutSecrets("heading", heading, req.Redact); err != nil {
		return memfile.Item{}, "", err
	} else if h != heading {
		heading, shownHeading = h, h
	}
	if req.Heading != "" && (heading == "" || strings.ContainsAny(heading, "\r\n") || memfile.CheckText([]byte(heading)) != nil) {
		return memfile.Item{}, "", bad("heading %q: want one line of text", shownHeading)
	}
	var tags []string
	for _, tag := range req.Tags {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "#")
		if found := secrets.Find(tag); len(found) > 0 {
			// Before the pattern check: a refused tag is never echoed
			// when it is a secret.
			return memfile.Item{}, "", &SecretError{Field: "tags", Found: found}
		}
		if !tagRe().MatchString(tag) {
			return memfile.Item{}, "", bad("tag %q: want letters, digits, _, - or /, no spaces", tag)
		}
		if !slices.Contains(tags, tag) {
			tags = append(tags, tag)
		}
	}
	return memfile.Item{Text: text, Tags: tags}, heading, nil
}

// withoutSecrets is field's text s when it holds no secret, else s
// redacted when redact is set, else a *SecretError.
func withoutSecrets(field, s string, redact bool) (string, error) {
	if !redact {
		if found := secrets.Find(s); len(found) > 0 {
			return "", &SecretError{Field: field, Found: found}
		}
		return s, nil
	}
	s, _ = secrets.Redact(s)
	return s, nil
}

// noteAt is the id of the wing's note at line of the machine's file, or "".
func noteAt(p *palace.Palace, t target, line int) string {
	for _, n := range p.Notes(t.wing) {
		if n.Source == t.file && n.Line == line {
			return n.ID
		}
	}
	return ""
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

// notMarked answers a request whose note is written but whose supersedes
// in other files could not be marked. %v for the cause: the error must not
// read as one to retry, which would append the note again.
func notMarked(ctx context.Context, p *palace.Palace, t target, mopts mine.Options, res Result, err error) (Result, error) {
	res.Added = true
	_ = mineDir(ctx, p, t.realDir, t.file, mopts)
	res.ID = noteAt(p, t, res.Line)
	return res, fmt.Errorf("remember: %s:%d: %w: %v", t.rel, res.Line, ErrNotMarked, err)
}
