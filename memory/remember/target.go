package remember

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace"
)

// LinkError is a file remember would write that a symlink leads out of
// the wing's own agent directory: into another agent's directory, say
// (agents/inner/memory.md → ../a/memory.md). It matches ErrOutsideAgentDir.
type LinkError struct {
	// Link is the symlink, Target what it resolves to (or "" for a link
	// that resolves to nothing) and AgentDir the wing's agent directory,
	// all relative to the hive.
	Link, Target, AgentDir string
}

func (e *LinkError) Error() string {
	if e.Target == "" {
		return fmt.Sprintf("%s is a symlink that leads nowhere; a wing writes only files inside its agent directory %s: remove the link", e.Link, e.AgentDir)
	}
	return fmt.Sprintf("%s is a symlink to %s, outside agent directory %s; a wing writes only files inside its own agent directory: remove the link", e.Link, e.Target, e.AgentDir)
}

// Is makes a *LinkError match ErrOutsideAgentDir.
func (e *LinkError) Is(target error) bool { return target == ErrOutsideAgentDir }

// target is where a wing's notes go.
type target struct {
	wing    string
	machine string
	dir     string // agent directory as named below the hive
	realDir string // with symlinks resolved, as the palace records paths
	named   string // the machine's memory file as named below dir
	file    string // memory file, symlinks resolved
	rel     string // memory file relative to the hive, for display
	hive    string // hive, symlinks resolved
	h       *hive.Hive
	inbox   bool // the file is the agent's inbox
}

// FileOf returns the memory file Remember writes for wing on machine (""
// means hive.DefaultMachine), relative to the hive and "/"-separated:
// agents/<wing>/memory.<machine>.md, or that file in the directory an
// agents glob names for the wing.
func FileOf(hiveDir string, agents []string, wing, machine string) (string, error) {
	h, err := hive.Open(hiveDir, agents)
	if err != nil {
		return "", err
	}
	m, err := machineName(machine)
	if err != nil {
		return "", err
	}
	t, err := locate(h, wing, m)
	if err != nil {
		return "", err
	}
	return t.rel, nil
}

// machineName is the machine the options name, or this one's default.
func machineName(m string) (string, error) {
	if m == "" {
		return hive.DefaultMachine(), nil
	}
	n, err := hive.NormalizeMachine(m)
	if err != nil {
		return "", badRequest("machine: %v", err)
	}
	return n, nil
}

// locate finds the wing's agent directory: the one the hive gives that
// wing (agents/<id>/ or a directory the agents globs match), else
// agents/<id>/ to be created. Neither it nor its memory file may lead out
// of the hive; confine checks, once the directory exists, that the file
// stays inside it.
func locate(h *hive.Hive, wing, machine string) (target, error) {
	abs := h.Dir()
	realHive, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return target{}, fmt.Errorf("remember: hive %s: %w", abs, err)
	}
	t := target{wing: wing, machine: machine, hive: realHive, h: h, dir: filepath.Join(abs, "agents", wing)}
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
	t.named = filepath.Join(t.dir, hive.MachineFileName(machine))
	t.rel = filepath.ToSlash(mustRel(abs, t.named))
	// The deepest part of the path that exists must not lead out of the
	// hive (a symlinked agents/, say).
	for p := t.dir; ; p = filepath.Dir(p) {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			if p == abs || filepath.Dir(p) == p {
				break
			}
			continue
		}
		if p != abs && h.LeadsOut(p) {
			return target{}, fmt.Errorf("remember: %s: %w (it resolves to %s)", filepath.ToSlash(mustRel(abs, p)), ErrOutsideHive, r)
		}
		break
	}
	t.file = t.named
	return t, nil
}

// toInbox makes t the agent's inbox (hive.InboxFileName) instead of the
// machine's memory file: where a pending note goes.
func (t *target) toInbox() {
	t.named = filepath.Join(t.dir, hive.InboxFileName)
	t.rel = filepath.ToSlash(mustRel(t.h.Dir(), t.named))
	t.file = t.named
	t.inbox = true
}

// confine resolves the agent directory, which exists now, and the memory
// file: a symlink may lead to another file of the agent directory, never
// out of it (a *LinkError).
func (t *target) confine() error {
	var err error
	if t.realDir, err = filepath.EvalSymlinks(t.dir); err != nil {
		return fmt.Errorf("remember: %w", err)
	}
	if t.h.LeadsOut(t.dir) {
		return fmt.Errorf("remember: %s: %w (it resolves to %s)", t.relOf(t.dir), ErrOutsideHive, t.realDir)
	}
	t.file = filepath.Join(t.realDir, filepath.Base(t.named))
	fi, err := os.Lstat(t.file)
	if errors.Is(err, fs.ErrNotExist) || err == nil && fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remember: %w", err)
	}
	r, err := t.inside(t.file)
	if err != nil {
		return err
	}
	t.file = r
	return nil
}

// inside resolves path, a file the wing is to write, and checks that it
// lies inside the agent directory (a *LinkError naming the link if not).
func (t *target) inside(path string) (string, error) {
	r, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("remember: %w", &LinkError{Link: t.relOf(path), AgentDir: t.relOf(t.dir)})
	}
	if err != nil {
		return "", fmt.Errorf("remember: %w", err)
	}
	if !hive.Inside(t.realDir, r) {
		link := path
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			link = t.linkTo(r) // a palace path, resolved already
		}
		return "", fmt.Errorf("remember: %w", &LinkError{Link: t.relOf(link), Target: t.relOf(r), AgentDir: t.relOf(t.dir)})
	}
	return r, nil
}

// linkTo returns the symlink in the agent directory that resolves to
// real, or real itself when none does.
func (t *target) linkTo(real string) string {
	found := real
	_ = filepath.WalkDir(t.realDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		if r, err := filepath.EvalSymlinks(p); err == nil && r == real {
			found = filepath.Join(t.dir, mustRel(t.realDir, p))
			return fs.SkipAll
		}
		return nil
	})
	return found
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

// resolveRefs finds the notes refs name, in the wing. A note governance
// reads as superseded (govern: its marker, strike-through, heading or
// file) is refused: it is superseded already.
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
		if n.Governance.Status == govern.Superseded {
			return nil, &RefError{Ref: ref, Kind: RefSuperseded, File: t.relOf(n.Source), Line: n.Line}
		}
		if rel, err := filepath.Rel(t.realDir, n.Source); err == nil {
			if client, ok := hive.ClientOf(filepath.ToSlash(rel)); ok {
				return nil, &RefError{Ref: ref, Kind: RefClientMemory, File: t.relOf(n.Source), Line: n.Line, Client: client}
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// unmarkedRefs is what of refs is still to be marked superseded when a
// request is replayed: the first attempt resolved every ref, so one that
// no longer resolves, or is superseded already, was marked by it.
func unmarkedRefs(p *palace.Palace, t target, refs []string) []palace.Note {
	notes := p.Notes(t.wing)
	var out []palace.Note
	for _, ref := range refs {
		n, err := resolveRef(p, t, notes, strings.TrimSpace(ref))
		if err != nil || n.Governance.Status == govern.Superseded {
			continue
		}
		if !slices.ContainsFunc(out, func(o palace.Note) bool { return o.ID == n.ID }) {
			out = append(out, n)
		}
	}
	return out
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
	for i, c := range candidates {
		if i == 0 && !filepath.IsAbs(file) {
			// A link in the agent directory to another agent's file
			// names a file the wing may not write.
			if fi, err := os.Lstat(c); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				if _, err := t.inside(c); err != nil {
					return palace.Note{}, err
				}
			}
		}
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
