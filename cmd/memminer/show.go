package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/memminer/memminer/api"
	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/githive"
	"github.com/memminer/memminer/govern"
	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/local"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/remember"
)

// ShownNote is the shape of `memminer show --json` and of MCP's read_note.
type ShownNote struct {
	api.Note
	Mtime string `json:"mtime"`
	govern.Fields
	// Before and After are the notes next to it in its file; null at
	// either end.
	Before *NeighbourNote `json:"before"`
	After  *NeighbourNote `json:"after"`
	// History are the commits that touched the note, newest first, with
	// --history; null without it.
	History []githive.Commit `json:"history"`
}

// NeighbourNote is a note next to the one shown.
type NeighbourNote struct {
	ID      string `json:"id"`
	Line    int    `json:"line"`
	Heading string `json:"heading"`
	Text    string `json:"text"`
}

func (a *app) showCmd() *cobra.Command {
	var asJSON, history bool
	cmd := &cobra.Command{
		Use:   "show REF",
		Short: "Print one note: heading path, neighbours, governance, history",
		Long: `Print one note of the palace: its wing, file and line, heading path,
governance (status, date, review date, staleness, tags), the notes before
and after it in its file and, with --history, the Git commits that touched
its lines (git log -L; the hive must lie in a Git work tree).

REF is a note id (search --json gives each note's), FILE:LINE (a note's
file, relative to the current directory, the hive or an agent directory,
and any line of the note), or N, the Nth hit of the last search run on
this machine for this palace.

The palace is read directly, with or without the daemon. The JSON:
docs/search.md ("Showing one note").`,
		Example: `  memminer show 1
  memminer show agents/dwight/memory.md:12 --history
  memminer show 7f00ce657f1a12366d12b3d869ff0cdf --json`,
		Args: exactArgs(1, "show takes one REF: a note id, FILE:LINE or a hit number of the last search"),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := a.showNote(cmd.Context(), args[0], history)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, n)
			}
			printShown(a.stdout, n, history)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print the note as JSON")
	f.BoolVar(&history, "history", false, "list the Git commits that touched the note")
	settingFlags(f, "hive")
	return cmd
}

// errNoNote is a REF that names no note of the palace.
var errNoNote = errors.New("no such note")

// showNote finds the note ref names and what show prints of it.
func (a *app) showNote(ctx context.Context, ref string, history bool) (ShownNote, error) {
	if !palace.HasWings(a.cfg.Palace) {
		return ShownNote{}, a.emptyPalace()
	}
	p, err := a.openPalace(ctx, nil, local.Read, nil)
	if err != nil {
		return ShownNote{}, err
	}
	defer p.Close()
	n, err := a.resolveRef(p, ref)
	if err != nil {
		return ShownNote{}, err
	}
	src, _ := p.Source(n.Wing, n.Source)
	stale, reason := n.Governance.Staleness(src.Mtime, time.Now(), a.cfg.StaleAfter)
	out := ShownNote{Note: api.NewNote(n), Mtime: src.Mtime.UTC().Format(time.RFC3339), Fields: n.Governance.Fields(src.Mtime, stale, reason)}
	out.Source = a.sourceName(n.Source)
	file := fileNotes(p, n)
	i := slices.IndexFunc(file, func(o palace.Note) bool { return o.ID == n.ID })
	if i > 0 {
		out.Before = neighbour(file[i-1])
	}
	if i >= 0 && i+1 < len(file) {
		out.After = neighbour(file[i+1])
	}
	if history {
		r, err := githive.Open(ctx, filepath.Dir(n.Source))
		if err != nil {
			return ShownNote{}, advised(err, "--history: %v: the note's file %s is not in a Git work tree", err, out.Source)
		}
		last := n.Line + strings.Count(n.Text, "\n")
		if out.History, err = r.History(ctx, n.Source, n.Line, last); err != nil {
			return ShownNote{}, fmt.Errorf("--history: %w", err)
		}
	}
	return out, nil
}

func neighbour(n palace.Note) *NeighbourNote {
	return &NeighbourNote{ID: n.ID, Line: n.Line, Heading: n.Heading, Text: n.Text}
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

// refHelp says what a REF is, for every command that takes one.
const refHelp = `REF is a note: its id (32 hex digits, as search --json and inbox --json
give it), a prefix of the id of at least 6 digits that no other note shares
(as git takes a commit), FILE:LINE (the file relative to the hive, or an
agent directory's file name), or the number of a hit of the last search.`

// minRefPrefix is the shortest id prefix a REF may be, as git's.
const minRefPrefix = 6

// idPrefixRe is a ref that may be a unique prefix of a note id.
var idPrefixRe = regexp.MustCompile(`^[0-9a-f]{6,31}$`)

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

// fullRefs replaces each of refs that is a hit number or an id prefix with
// the id resolveRef finds for it; full ids and FILE:LINE stay as they are,
// for remember to resolve within the wing. The palace is opened, read-only,
// only when one needs it.
func (a *app) fullRefs(ctx context.Context, refs []string) ([]string, error) {
	var p *palace.Palace
	defer func() {
		if p != nil {
			p.Close()
		}
	}()
	out := make([]string, len(refs))
	for i, ref := range refs {
		out[i] = ref
		ref = strings.TrimSpace(ref)
		if _, err := strconv.Atoi(ref); err != nil && !idPrefixRe.MatchString(ref) {
			continue
		}
		if p == nil {
			var err error
			if p, err = a.readPalace(ctx); err != nil {
				return nil, err
			}
			if p == nil {
				return nil, usagef("--supersedes %s: nothing is mined yet", ref)
			}
		}
		n, err := a.resolveRef(p, ref)
		if err != nil {
			return nil, fmt.Errorf("--supersedes %w", err)
		}
		out[i] = n.ID
	}
	return out, nil
}

// resolveRef finds the note of ref (refHelp): a hit number of the last
// search, a note id, a unique prefix of one, or FILE:LINE. It is the one
// reading of a REF: show, inbox approve and reject, and remember's
// --supersedes take refs through it.
func (a *app) resolveRef(p *palace.Palace, ref string) (palace.Note, error) {
	ref = strings.TrimSpace(ref)
	// Six digits or more are an id prefix: no search has that many hits.
	if idPrefixRe.MatchString(ref) {
		switch found := notesByIDPrefix(p, ref); len(found) {
		case 1:
			return found[0], nil
		case 0:
			return palace.Note{}, fmt.Errorf("%s: %w with an id starting so (ids change when a note is edited; search again)", ref, errNoNote)
		default:
			return palace.Note{}, usagef("%s: %d notes have an id starting so; give more of it", ref, len(found))
		}
	}
	if k, err := strconv.Atoi(ref); err == nil {
		ids, err := a.lastSearch()
		switch {
		case err != nil:
			return palace.Note{}, nothingFound(usagef("%s: no search to take hit %d from (%v); run memminer search first, or give a note id or FILE:LINE", ref, k, err))
		case k < 1 || k > len(ids):
			return palace.Note{}, usagef("%s: the last search had %d %s", ref, len(ids), plural(len(ids), "hit", "hits"))
		}
		ref = ids[k-1]
	}
	id, file, line, ok := remember.ParseRef(ref)
	if !ok {
		return palace.Note{}, usagef("%q: want a note id (or its first %d digits or more), FILE:LINE such as agents/dwight/memory.md:12, or the number of a hit of the last search", ref, minRefPrefix)
	}
	for _, w := range p.Wings() {
		if id == "" {
			continue
		}
		for _, n := range p.Notes(w.ID) {
			if n.ID == id {
				return n, nil
			}
		}
	}
	if id != "" {
		return palace.Note{}, fmt.Errorf("%s: %w with that id (ids change when a note is edited; search again)", ref, errNoNote)
	}
	var candidates []string
	if filepath.IsAbs(file) {
		candidates = []string{file}
	} else {
		if abs, err := filepath.Abs(file); err == nil {
			candidates = append(candidates, abs)
		}
		if a.cfg.Hive != "" {
			candidates = append(candidates, filepath.Join(a.cfg.Hive, file))
		}
	}
	for _, c := range candidates {
		if r, err := filepath.EvalSymlinks(c); err == nil {
			c = r
		}
		for _, w := range p.Wings() {
			if n, ok := coveringNote(p.Notes(w.ID), func(src string) bool { return src == c }, line); ok {
				return n, nil
			}
		}
	}
	// FILE may name an agent directory's file: take the one source
	// ending in it.
	suffix := string(filepath.Separator) + filepath.Clean(file)
	var found []palace.Note
	for _, w := range p.Wings() {
		notes := p.Notes(w.ID)
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
	return palace.Note{}, fmt.Errorf("%s: %w at that line (search gives each note's file and line)", ref, errNoNote)
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

// lastSearchFile is where search keeps the ids of its hits for show N:
// one file per palace, in the per-user runtime directory.
func (a *app) lastSearchFile() string {
	sum := sha256.Sum256([]byte(a.cfg.Palace))
	return filepath.Join(config.RuntimeDir(a.getenv), "memminer", "last-search-"+hex.EncodeToString(sum[:8])+".json")
}

// saveLastSearch records the ids of a search's hits; failing to is not
// the search's failure.
func (a *app) saveLastSearch(out api.SearchResult) {
	ids := make([]string, len(out.Results))
	for i, h := range out.Results {
		ids[i] = h.ID
	}
	data, err := json.Marshal(map[string]any{"query": out.Query, "ids": ids})
	if err != nil {
		return
	}
	path := a.lastSearchFile()
	if os.MkdirAll(filepath.Dir(path), 0o700) == nil {
		_ = atomicfile.Write(path, data, 0o600)
	}
}

// lastSearch returns the ids of the last search's hits.
func (a *app) lastSearch() ([]string, error) {
	data, err := os.ReadFile(a.lastSearchFile())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("no search was run yet")
	}
	if err != nil {
		return nil, err
	}
	var v struct {
		IDs []string `json:"ids"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("the record of the last search is damaged: %w", err)
	}
	return v.IDs, nil
}

func printShown(w io.Writer, n ShownNote, history bool) {
	fmt.Fprintf(w, "[%s] %s:%d", n.Wing, displayPath(n.Path), n.Line)
	if n.Heading != "" {
		fmt.Fprintf(w, "  %s", n.Heading)
	}
	fmt.Fprintf(w, "\n  id %s%s\n\n", n.ID, marks(n.Fields))
	for _, line := range strings.Split(n.Text, "\n") {
		fmt.Fprintln(w, "  "+line)
	}
	fmt.Fprintln(w)
	for _, nb := range []struct {
		label, none string
		n           *NeighbourNote
	}{{"before", "(the file's first note)", n.Before}, {"after", "(the file's last note)", n.After}} {
		if nb.n == nil {
			fmt.Fprintf(w, "%s: %s\n", nb.label, nb.none)
			continue
		}
		fmt.Fprintf(w, "%s: line %d  %s\n", nb.label, nb.n.Line, notePreview("", nb.n.Text))
	}
	if !history {
		return
	}
	fmt.Fprintln(w)
	if len(n.History) == 0 {
		fmt.Fprintln(w, "history: no commit touched the note (is the file committed?)")
		return
	}
	fmt.Fprintf(w, "history (%d %s):\n", len(n.History), plural(len(n.History), "commit", "commits"))
	for _, c := range n.History {
		fmt.Fprintf(w, "  %s %s %s  %s\n", c.Hash[:min(12, len(c.Hash))], c.Date.UTC().Format(time.DateOnly), c.Author, c.Subject)
	}
}

// readNoteArgs is a call of MCP's read_note tool.
type readNoteArgs struct {
	Ref     string `json:"ref" jsonschema:"note id, FILE:LINE, or N: last search's Nth hit"`
	History bool   `json:"history,omitempty" jsonschema:"also its Git commits"`
}

// readNote is MCP's read_note: what memminer show --json prints.
func (s *mcpServer) readNote(ctx context.Context, _ *mcp.CallToolRequest, in readNoteArgs) (*mcp.CallToolResult, ShownNote, error) {
	var out ShownNote
	err := s.call(func() (err error) {
		out, err = s.a.showNote(ctx, in.Ref, in.History)
		return err
	})
	if err != nil {
		return nil, out, err
	}
	return toolText(func(w io.Writer) { printShown(w, out, in.History) }), out, nil
}
