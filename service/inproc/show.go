package inproc

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
)

// Show finds the note req.Ref names (ResolveRef) and what show prints of
// it: governance, and the notes before and after it in its file. A note
// of a wing req.Scope does not see is refused as a search of that wing
// is (palace.ErrOutsideDomain).
func (s *Service) Show(ctx context.Context, req api.ShowRequest) (api.ShownNote, error) {
	if s.opts.Palace == nil && !palace.HasWings(s.opts.Dir) {
		return api.ShownNote{}, palace.ErrEmpty
	}
	p, done, err := s.open(ctx, nil, Read, nil)
	if err != nil {
		return api.ShownNote{}, err
	}
	defer done()
	n, err := ResolveRef(p, s.opts.Hive, req.Dir, req.Ref)
	if err != nil {
		return api.ShownNote{}, err
	}
	if sc, err := p.ScopeWings(req.Scope); err != nil {
		return api.ShownNote{}, err
	} else if !sc.Sees(n.Wing) {
		return api.ShownNote{}, sc.Outside(n.Wing)
	}
	src, _ := p.Source(n.Wing, n.Source)
	stale, reason := n.Governance.Staleness(src.Mtime, time.Now(), req.StaleAfter)
	out := api.ShownNote{Note: api.NewNote(n), Mtime: src.Mtime.UTC().Format(time.RFC3339), Fields: n.Governance.Fields(src.Mtime, stale, reason)}
	file := fileNotes(p, n)
	i := slices.IndexFunc(file, func(o palace.Note) bool { return o.ID == n.ID })
	if i > 0 {
		out.Before = neighbour(file[i-1])
	}
	if i >= 0 && i+1 < len(file) {
		out.After = neighbour(file[i+1])
	}
	return out, nil
}

func neighbour(n palace.Note) *api.NeighbourNote {
	return &api.NeighbourNote{ID: n.ID, Line: n.Line, Heading: n.Heading, Text: n.Text}
}

// fileNotes are the notes of n's file, in line order.
func fileNotes(p *palace.Palace, n palace.Note) []palace.Note {
	var out []palace.Note
	for _, o := range p.Notes(n.Wing) {
		if o.Source == n.Source {
			out = append(out, o)
		}
	}
	slices.SortStableFunc(out, func(x, y palace.Note) int { return x.Line - y.Line })
	return out
}

// idPrefixRe is a ref that may be a unique prefix of a note id.
var idPrefixRe = regexp.MustCompile(fmt.Sprintf(`^[0-9a-f]{%d,31}$`, api.MinRefPrefix))

// IsIDPrefix reports whether ref reads as a prefix of a note id (six hex
// digits or more): a number that long is one, never a hit number.
func IsIDPrefix(ref string) bool { return idPrefixRe.MatchString(strings.TrimSpace(ref)) }

// notesByIDPrefix are the notes of p whose id starts with prefix.
func notesByIDPrefix(p *palace.Palace, prefix string) []palace.Note {
	var found []palace.Note
	for _, w := range p.Wings() {
		for _, n := range p.Notes(w.ID) {
			if strings.HasPrefix(n.ID, prefix) {
				found = append(found, n)
			}
		}
	}
	return found
}

// ResolveRef finds the note of ref (api.ShowRequest.Ref) in p: a note id,
// a unique prefix of one, or FILE:LINE, FILE absolute, relative to dir or
// to hive, or the end of one mined file's path. It is the one reading of
// a ref: show, inbox approve and reject, and remember's --supersedes take
// refs through it. What names no single note is a *api.RefError.
func ResolveRef(p *palace.Palace, hive, dir, ref string) (palace.Note, error) {
	ref = strings.TrimSpace(ref)
	if idPrefixRe.MatchString(ref) {
		switch found := notesByIDPrefix(p, ref); len(found) {
		case 1:
			return found[0], nil
		case 0:
			return palace.Note{}, refError(api.ErrNoNote, "%s: no such note with an id starting so (ids change when a note is edited; search again)", ref)
		default:
			return palace.Note{}, refError(api.ErrAmbiguousRef, "%s: %d notes have an id starting so; give more of it", ref, len(found))
		}
	}
	id, file, line, ok := remember.ParseRef(ref)
	if !ok {
		return palace.Note{}, refError(api.ErrBadRef, "%q: want a note id (or its first %d digits or more), FILE:LINE such as agents/dwight/memory.md:12, or the number of a hit of the last search", ref, api.MinRefPrefix)
	}
	if id != "" {
		for _, w := range p.Wings() {
			for _, n := range p.Notes(w.ID) {
				if n.ID == id {
					return n, nil
				}
			}
		}
		return palace.Note{}, refError(api.ErrNoNote, "%s: no such note with that id (ids change when a note is edited; search again)", ref)
	}
	wings := newWingNotes(p)
	if n, ok := noteAtFile(wings, fileCandidates(file, hive, dir), line); ok {
		return n, nil
	}
	// FILE may name an agent directory's file: take the one source
	// ending in it.
	suffix := string(filepath.Separator) + filepath.Clean(file)
	var found []palace.Note
	for i := range wings.ids {
		notes := wings.notes(i)
		sources := map[string]bool{}
		for _, n := range notes {
			if strings.HasSuffix(n.Source, suffix) {
				sources[n.Source] = true
			}
		}
		for src := range sources {
			if n, ok := coveringNote(notes, func(s string) bool { return s == src }, line); ok {
				found = append(found, n)
			}
		}
	}
	if len(found) == 1 {
		return found[0], nil
	}
	return palace.Note{}, refError(api.ErrNoNote, "%s: no such note at that line (search gives each note's file and line)", ref)
}

func refError(err error, format string, args ...any) error {
	return &api.RefError{Err: err, Msg: fmt.Sprintf(format, args...)}
}

// fileCandidates are the files a FILE of a ref may be: itself when
// absolute, else relative to dir, then to hive.
func fileCandidates(file, hive, dir string) []string {
	if filepath.IsAbs(file) {
		return []string{file}
	}
	var out []string
	if dir != "" {
		out = append(out, filepath.Join(dir, file))
	}
	if hive != "" {
		out = append(out, filepath.Join(hive, file))
	}
	return out
}

// wingNotes are the notes of a palace's wings, each wing's read when
// first asked for and then kept: Palace.Notes sorts and copies a whole
// wing, and a ref's FILE may be looked for in every wing more than once.
type wingNotes struct {
	p    *palace.Palace
	ids  []string
	read [][]palace.Note
	done []bool
}

func newWingNotes(p *palace.Palace) *wingNotes {
	var ids []string
	for _, w := range p.Wings() {
		ids = append(ids, w.ID)
	}
	return &wingNotes{p: p, ids: ids, read: make([][]palace.Note, len(ids)), done: make([]bool, len(ids))}
}

// notes are the notes of the i-th wing.
func (w *wingNotes) notes(i int) []palace.Note {
	if !w.done[i] {
		w.read[i], w.done[i] = w.p.Notes(w.ids[i]), true
	}
	return w.read[i]
}

// noteAtFile is the note holding line of the first of candidates (with
// symlinks resolved) that is a mined source.
func noteAtFile(wings *wingNotes, candidates []string, line int) (palace.Note, bool) {
	for _, c := range candidates {
		if r, err := filepath.EvalSymlinks(c); err == nil {
			c = r
		}
		for i := range wings.ids {
			if n, ok := coveringNote(wings.notes(i), func(src string) bool { return src == c }, line); ok {
				return n, true
			}
		}
	}
	return palace.Note{}, false
}

// coveringNote returns the note of a source in notes that holds line: the
// last one starting at or before it, as long as the line is not past the
// end of the source's last note.
func coveringNote(notes []palace.Note, source func(string) bool, line int) (palace.Note, bool) {
	var best *palace.Note
	last := true
	for i := range notes {
		n := &notes[i]
		if !source(n.Source) {
			continue
		}
		switch {
		case n.Line <= line && (best == nil || n.Line > best.Line):
			best = n
		case n.Line > line:
			last = false
		}
	}
	if best == nil || last && line > best.Line+strings.Count(best.Text, "\n") {
		return palace.Note{}, false
	}
	return *best, true
}
