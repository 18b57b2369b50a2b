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
	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/internal/backoff"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/memory/memfile"
	"github.com/memminer/memminer/memory/secrets"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
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
	// File and Line are the note already superseded (RefSuperseded) or
	// kept by a client (RefClientMemory), File relative to the hive.
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Client is the client whose own memory holds the note
	// (RefClientMemory).
	Client string `json:"client,omitempty"`
}

// The kinds of a RefError.
const (
	RefSuperseded = "already_superseded" // the note is marked superseded
	RefOtherWing  = "other_wing"         // the note is in another agent's wing
	RefNoID       = "no_such_id"         // no note of the wing has the id
	RefMalformed  = "malformed"          // neither an id nor FILE:LINE
	RefNoLine     = "no_such_line"       // no note of the wing starts at FILE:LINE
	// RefClientMemory: the note is in a client's own memory folder
	// (hive.ClientOf), the client's file, which memminer never edits.
	RefClientMemory = "client_memory"
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
	case RefClientMemory:
		return fmt.Sprintf("%s %s: %s:%d is %s's own memory, which memminer never edits; have %s change it, or leave out %s", field, e.Ref, e.File, e.Line, e.Client, e.Client, field)
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
//
// It runs these steps, each one function: prepare (check the request,
// classify it, find the file: the inbox for a note that waits for a
// person), refuseConflicts (an open conflict copy), lock (the agent
// directory's lock, the file confined to it), then under the lock
// writeRetried, whose every attempt brings the palace up to date
// (catchUp), reads the file, looks for a duplicate and writes, and last
// finish, which marks the notes the new one supersedes and mines the
// file once.
func Remember(ctx context.Context, p *palace.Palace, req Request, opts Options) (Result, error) {
	c, err := prepare(p, req, opts)
	if err != nil {
		return Result{}, err
	}
	if err := c.refuseConflicts(ctx); err != nil {
		return Result{}, err
	}
	unlock, err := c.lock(ctx)
	if err != nil {
		return Result{}, err
	}
	defer unlock()
	o, err := c.writeRetried(ctx)
	if err != nil {
		return Result{}, err
	}
	return c.finish(ctx, o)
}

// call is one Remember: the request checked, its settings resolved and
// where it goes, and the Result it builds.
type call struct {
	p     *palace.Palace
	req   Request
	opts  Options
	class inbox.Class
	// item is the line to append; fact the note as the agent stated it,
	// what a memory write compares (an inbox item is compared with its
	// marker, as item.Text holds it).
	item    memfile.Item
	fact    string
	heading string
	date    string
	t       target
	// mine is how the agent directory is mined; maxFile bounds the
	// memory files read and written.
	mine    mine.Options
	maxFile int64
	// vec is the note's vector for the similarity hint, made once.
	vec []float32
	res Result
}

// outcome is what the write step did: the note written, found written by
// an earlier try of the request (replayed), or found stated already
// (dup); old are the notes it supersedes, still to be marked.
type outcome struct {
	old []palace.Note
	dup bool
}

// prepare checks the request and resolves where and how it is written:
// nothing is read from or written to the hive's files yet.
func prepare(p *palace.Palace, req Request, opts Options) (*call, error) {
	if opts.Hive == "" {
		return nil, ErrNoHive
	}
	if !p.Writable() {
		return nil, fmt.Errorf("remember: %w", palace.ErrReadOnly)
	}
	c := &call{p: p, opts: opts}
	if err := c.check(req); err != nil {
		return nil, err
	}
	h, err := hive.Open(opts.Hive, opts.Agents)
	if err != nil {
		return nil, fmt.Errorf("remember: %w", err)
	}
	machine, err := machineName(opts.Machine)
	if err != nil {
		return nil, err
	}
	if c.t, err = locate(h, c.req.Wing, machine); err != nil {
		return nil, err
	}
	if c.class.Pending() {
		c.t.toInbox()
	}
	c.res = Result{Wing: c.t.wing, File: c.t.rel, Path: c.t.file, Superseded: []NoteRef{}, ForcedPast: []string{}, Pending: c.class.Pending()}
	c.mine = opts.Mine
	c.mine.Wing, c.mine.Hive, c.mine.Agents = c.t.wing, opts.Hive, opts.Agents
	if c.maxFile = c.mine.MaxFileBytes; c.maxFile <= 0 {
		c.maxFile = config.DefaultMaxFileBytes
	}
	return c, nil
}

// check validates and classifies req (checkRequest, inbox.ParseClass)
// and dates its item.
func (c *call) check(req Request) error {
	item, heading, err := checkRequest(&req, c.opts)
	if err != nil {
		return err
	}
	class, err := inbox.ParseClass(req.Confidence, req.Risk, req.TTL)
	if err != nil {
		return badRequest("%v", err)
	}
	if class.Pending() && len(req.Supersedes) > 0 {
		return badRequest("a %s %s-risk note waits in the inbox and supersedes nothing until a person approves it; leave out supersedes", class.Confidence, class.Risk)
	}
	now := time.Now
	if c.opts.Now != nil {
		now = c.opts.Now
	}
	today := now()
	c.req, c.class, c.heading, c.fact = req, class, heading, item.Text
	c.date = today.Format(time.DateOnly)
	item.Text, item.Date = class.Text(item.Text, today), c.date
	c.item = item
	return nil
}

// refuseConflicts refuses a wing with an open conflict copy, unless the
// request forces the write: then the copies are named in the result.
func (c *call) refuseConflicts(ctx context.Context) error {
	found, err := c.t.h.ConflictCopies(ctx, c.t.wing)
	if err != nil && len(found) == 0 {
		return fmt.Errorf("remember: check for conflict copies: %w", err)
	}
	copies := []string{}
	for _, f := range found {
		copies = append(copies, filepath.ToSlash(mustRel(c.t.h.Dir(), f.Path)))
	}
	if len(copies) > 0 && !c.req.Force {
		return &ConflictError{Wing: c.t.wing, Copies: copies}
	}
	c.res.ForcedPast = copies
	return nil
}

// lock creates the agent directory, takes its lock (every memminer
// writer of the directory takes it), confines the memory file to the
// directory and clears the leftovers of an interrupted write of it.
func (c *call) lock(ctx context.Context) (unlock func(), err error) {
	if err := os.MkdirAll(c.t.dir, 0o755); err != nil {
		return nil, fmt.Errorf("remember: %w", err)
	}
	unlock, err = memfile.Lock(ctx, c.t.dir)
	if err != nil {
		return nil, fmt.Errorf("remember: %w", err)
	}
	if err := c.t.confine(); err != nil {
		unlock()
		return nil, err
	}
	c.res.Path, c.res.File = c.t.file, c.t.relOf(c.t.file)
	if _, _, err := atomicfile.RemoveStale(filepath.Dir(c.t.file), nil, filepath.Base(c.t.file)); err != nil {
		unlock()
		return nil, fmt.Errorf("remember: remove the leftovers of an interrupted write: %w", err)
	}
	return unlock, nil
}

// writeRetried tries the write until the file stays still between the
// read and the write, at most attempts times with a growing pause.
func (c *call) writeRetried(ctx context.Context) (outcome, error) {
	bo := newBackoff()
	// replay: the note may be in the file already, written by this
	// request before (a daemon that died answering, a write whose file
	// was replaced meanwhile); then it is not written again.
	replay := c.req.Retry
	for attempt := 1; ; attempt++ {
		o, err := c.try(ctx, replay)
		if errors.Is(err, memfile.ErrReplaced) {
			replay = true // the lines may have reached the file that replaced it
		}
		switch {
		case !retryable(err):
			return o, err
		case attempt == attempts:
			return outcome{}, fmt.Errorf("remember: %w: %s changed between read and write %d times; try again", ErrBusy, c.t.rel, attempts)
		}
		if err := backoff.Sleep(ctx, bo.Next()); err != nil {
			return outcome{}, fmt.Errorf("remember: %w", err)
		}
	}
}

// try is one attempt: the palace brought up to date, the file read, the
// note found there already (replay), the file's hash checked, the
// references resolved, a duplicate looked for, and the note written.
func (c *call) try(ctx context.Context, replay bool) (outcome, error) {
	if err := c.catchUp(ctx); err != nil {
		return outcome{}, err
	}
	snap, err := memfile.Read(c.t.file, c.maxFile)
	if err != nil {
		return outcome{}, fmt.Errorf("remember: %w", err)
	}
	if replay {
		if line, ok := findItem(snap.Data, c.item); ok {
			c.res.Line, c.res.Hash = line, snap.Hash
			// The request that wrote it may have died before marking
			// what it replaces in other files.
			return outcome{old: unmarkedRefs(c.p, c.t, c.req.Supersedes)}, nil
		}
	}
	if c.req.ExpectHash != "" && !strings.EqualFold(c.req.ExpectHash, snap.Hash) {
		return outcome{}, &HashMismatchError{File: c.t.rel, Want: c.req.ExpectHash, Have: snap.Hash}
	}
	old, err := resolveRefs(c.p, c.t, c.req.Supersedes)
	if err != nil {
		return outcome{}, err
	}
	if err := checkHandoffRef(c.p, c.t.wing, c.fact); err != nil {
		return outcome{}, err
	}
	if same := c.duplicate(ctx, old); same != nil {
		ref := c.t.ref(*same)
		c.res.Line, c.res.ID, c.res.Hash, c.res.DuplicateOf = same.Line, same.ID, snap.Hash, &ref
		c.res.File = ref.File
		return outcome{old: old, dup: true}, nil
	}
	return outcome{old: old}, write(ctx, c.t, snap, c.heading, c.item, old, c.date, c.maxFile, &c.res)
}

// catchUp mines the agent directory when its files changed since the
// last mine (an edit, a file Syncthing brought, a write while no daemon
// ran): the duplicate check, the references and the inbox's pending notes
// read the palace, whose notes carry the ids and vectors search answers
// with, and must see the wing as its files hold it. When nothing changed,
// as after memminer's own writes, it mines nothing.
func (c *call) catchUp(ctx context.Context) error {
	ch := mine.Changed(c.p, c.t.wing, c.t.realDir)
	if len(ch.Changed) == 0 && len(ch.Gone) == 0 {
		return nil
	}
	if err := mineDir(ctx, c.p, c.t.realDir, c.t.file, c.mine); err != nil {
		return fmt.Errorf("remember: mine %s before writing: %w", c.t.rel, err)
	}
	return nil
}

// duplicate is the wing's note that states the note's fact already
// (SameFact), or nil; a note it only resembles becomes the result's
// SimilarTo. The notes the request supersedes are no duplicate, and
// neither is what waits in the inbox for a note written into memory.
func (c *call) duplicate(ctx context.Context, old []palace.Note) *palace.Note {
	if c.req.AllowDuplicate {
		return nil
	}
	except := make([]string, len(old))
	for i, n := range old {
		except[i] = n.ID
	}
	probe := c.item.Text // in the inbox, an item is the same with its marker
	if !c.class.Pending() {
		except = append(except, inbox.PendingIDs(c.p.Notes(c.t.wing))...)
		probe = c.fact
	}
	if c.vec == nil && c.opts.Embedder != nil {
		c.vec = embedProbe(ctx, c.p, c.opts.Embedder, c.t.wing, c.heading, c.fact)
	}
	same, similar := findSame(c.p, c.t.wing, probe, c.vec, except)
	if similar != nil {
		ref := c.t.ref(*similar)
		c.res.SimilarTo = &ref
	}
	return same
}

// finish marks the notes the new one supersedes and mines the agent
// directory, once. A duplicate marks them in every file, its own
// included (the note that would have marked them there was not written),
// and mines only when it marked any.
func (c *call) finish(ctx context.Context, o outcome) (Result, error) {
	if err := markOthers(ctx, c.t, o.old, c.date, c.maxFile, o.dup); err != nil {
		if o.dup {
			return Result{}, err
		}
		return c.notMarked(ctx, err)
	}
	for _, n := range o.old {
		c.res.Superseded = append(c.res.Superseded, c.t.ref(n))
	}
	if o.dup {
		if len(o.old) == 0 {
			return c.res, nil
		}
		if now, err := memfile.Read(c.t.file, c.maxFile); err == nil {
			c.res.Hash = now.Hash
		}
		return c.res, c.mineAfter(ctx)
	}
	c.res.Added = true
	if err := c.mineAfter(ctx); err != nil {
		return c.res, err
	}
	return c.res, c.kept(ctx)
}

// kept makes sure, after the mine, that the note is in the file and in the
// palace at the same line before it is acknowledged. An editor that saves
// the file in place (truncates it and writes its buffer back) after the
// write was checked, or while it was mined, took it: it is then appended
// again and mined again, at most attempts times. The note found in the
// file but not at its line in the palace (the file changed since the
// mine), the directory is mined again.
func (c *call) kept(ctx context.Context) error {
	bo := newBackoff()
	for attempt := 1; ; attempt++ {
		now, err := memfile.Read(c.t.file, c.maxFile)
		if err != nil {
			return fmt.Errorf("remember: %s: %w: %w", c.t.rel, ErrNotMined, err)
		}
		line, found := findItem(now.Data, c.item)
		if found {
			c.res.Line, c.res.Hash = line, now.Hash
			if c.res.ID = noteAt(c.p, c.t, line); c.res.ID != "" {
				return nil
			}
		}
		switch {
		case attempt == attempts && !found:
			c.res.Added = false
			return fmt.Errorf("remember: %w: %s was rewritten under the note %d times, and the note is not in it (an editor saving it?); close the editor and remember again", ErrBusy, c.t.rel, attempts)
		case attempt == attempts:
			return fmt.Errorf("remember: %s: %w: no note at line %d after mining", c.t.rel, ErrNotMined, c.res.Line)
		}
		if !found {
			// Appended again as it was the first time; a file that changes
			// under this write too is read again at the next attempt.
			err := write(ctx, c.t, now, c.heading, c.item, nil, c.date, c.maxFile, &c.res)
			if err != nil && !retryable(err) {
				return err
			}
			if err != nil {
				if err := backoff.Sleep(ctx, bo.Next()); err != nil {
					return fmt.Errorf("remember: %w", err)
				}
			}
		}
		if err := c.mineAfter(ctx); err != nil {
			return err
		}
	}
}

// mineAfter mines the agent directory after the write, so the note is in
// the next search; its error matches ErrNotMined.
func (c *call) mineAfter(ctx context.Context) error {
	if err := mineDir(ctx, c.p, c.t.realDir, c.t.file, c.mine); err != nil {
		return fmt.Errorf("remember: %s: %w: %w", c.t.rel, ErrNotMined, err)
	}
	return nil
}

// notMarked answers a request whose note is written but whose supersedes
// in other files could not be marked. %v for the cause: the error must not
// read as one to retry, which would append the note again.
func (c *call) notMarked(ctx context.Context, err error) (Result, error) {
	c.res.Added = true
	_ = c.mineAfter(ctx)
	c.res.ID = noteAt(c.p, c.t, c.res.Line)
	return c.res, fmt.Errorf("remember: %s:%d: %w: %v", c.t.rel, c.res.Line, ErrNotMarked, err)
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
		if found := secrets.FindWritten(tag); len(found) > 0 {
			// Before the pattern check: a refused tag is never echoed
			// when it is a secret.
			return memfile.Item{}, "", &SecretError{Field: "tags", Found: found}
		}
		if !tagRe().MatchString(tag) {
			return memfile.Item{}, "", bad("tag %q: want letters, digits, _, - or /, no spaces", tag)
		}
		// As governance will read it, so that the same tag twice is one.
		tag = govern.NormalTag(tag)
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
		if found := secrets.FindWritten(s); len(found) > 0 {
			return "", &SecretError{Field: field, Found: found}
		}
		return s, nil
	}
	s, _ = secrets.RedactWritten(s)
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
