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
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/githive"
	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/inproc"
)

func (a *app) showCmd() *cobra.Command {
	var asJSON, history bool
	var dom domainArgs
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

An agent (MEMMINER_WING) is shown only notes of the wings its domain
sees, as its search finds them (--all-domains: every domain). The JSON:
docs/search.md ("Showing one note").`,
		Example: `  memminer show 1
  memminer show agents/dwight/memory.md:12 --history
  memminer show 7f00ce657f1a12366d12b3d869ff0cdf --json`,
		Args: exactArgs(1, "show takes one REF: a note id, FILE:LINE or a hit number of the last search"),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := a.showNote(cmd.Context(), args[0], history, dom)
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
	f.BoolVar(&dom.AllDomains, "all-domains", false, "an agent (MEMMINER_WING) sees notes of every domain, not only its own and global")
	settingFlags(f, "hive")
	return cmd
}

// showNote finds the note ref names (the service's Show, a hit number of
// the last search taken here) and what show prints of it.
func (a *app) showNote(ctx context.Context, ref string, history bool, dom domainArgs) (api.ShownNote, error) {
	req, err := a.showRequest(ref)
	if err != nil {
		return api.ShownNote{}, err
	}
	if req.Scope, err = a.domainScope(dom); err != nil {
		return api.ShownNote{}, err
	}
	out, err := a.service().Show(ctx, req)
	if err != nil {
		return api.ShownNote{}, a.refError(err)
	}
	out.Source = a.sourceName(out.Path)
	if history {
		if out.History, err = noteHistory(ctx, out); err != nil {
			return api.ShownNote{}, err
		}
	}
	return out, nil
}

// noteHistory is the Git commits that touched the shown note n.
func noteHistory(ctx context.Context, n api.ShownNote) ([]githive.Commit, error) {
	r, err := githive.Open(ctx, filepath.Dir(n.Path))
	if err != nil {
		return nil, advised(err, "--history: %v: the note's file %s is not in a Git work tree", err, n.Source)
	}
	last := n.Line + strings.Count(n.Text, "\n")
	h, err := r.History(ctx, n.Path, n.Line, last)
	if err != nil {
		return nil, fmt.Errorf("--history: %w", err)
	}
	return h, nil
}

// showRequest is the service's request for ref: a hit number of the last
// search (which this machine keeps for this palace) becomes the hit's id,
// and a relative FILE is relative to the working directory.
func (a *app) showRequest(ref string) (api.ShowRequest, error) {
	ref = strings.TrimSpace(ref)
	req := api.ShowRequest{Ref: ref, StaleAfter: a.cfg.StaleAfter}
	req.Dir, _ = os.Getwd()
	// Six digits or more are an id prefix: no search has that many hits.
	if k, err := strconv.Atoi(ref); err == nil && !inproc.IsIDPrefix(ref) {
		ids, err := a.lastSearch()
		switch {
		case err != nil:
			return req, nothingFound(usagef("%s: no search to take hit %d from (%v); run memminer search first, or give a note id or FILE:LINE", ref, k, err))
		case k < 1 || k > len(ids):
			return req, usagef("%s: the last search had %d %s", ref, len(ids), plural(len(ids), "hit", "hits"))
		}
		req.Ref = ids[k-1]
	}
	return req, nil
}

// refError is err of the service's Show with the CLI's advice.
func (a *app) refError(err error) error {
	switch {
	case errors.Is(err, palace.ErrEmpty):
		return a.emptyPalace()
	case errors.Is(err, api.ErrBadRef), errors.Is(err, api.ErrAmbiguousRef), isDomainError(err):
		return usagef("%v", err)
	}
	return err
}

// refHelp says what a REF is, for every command that takes one.
const refHelp = `REF is a note: its id (32 hex digits, as search --json and inbox --json
give it), a prefix of the id of at least 6 digits that no other note shares
(as git takes a commit), FILE:LINE (the file relative to the hive, or an
agent directory's file name), or the number of a hit of the last search.`

// fullRefs replaces each of refs that is a hit number or an id prefix with
// the id of the note it names (the service's Show); full ids and
// FILE:LINE stay as they are, for remember to resolve within the wing.
// name is what errors call the refs (the flag, or the MCP argument);
// without hits a number is left as it is, for remember to refuse: an MCP
// client's searches are not the last search.
func (a *app) fullRefs(ctx context.Context, refs []string, name string, hits bool) ([]string, error) {
	out := make([]string, len(refs))
	for i, ref := range refs {
		out[i] = ref
		ref = strings.TrimSpace(ref)
		if _, err := strconv.Atoi(ref); (err != nil || !hits) && !inproc.IsIDPrefix(ref) {
			continue
		}
		req, err := a.showRequest(ref)
		if err != nil {
			return nil, fmt.Errorf("%s %w", name, err)
		}
		n, err := a.service().Show(ctx, req)
		if errors.Is(err, palace.ErrEmpty) {
			return nil, usagef("%s %s: nothing is mined yet", name, ref)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %w", name, a.refError(err))
		}
		out[i] = n.ID
	}
	return out, nil
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

func printShown(w io.Writer, n api.ShownNote, history bool) {
	fmt.Fprintf(w, "[%s] %s:%d", n.Wing, fileName(n.Source, n.Path), n.Line)
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
		n           *api.NeighbourNote
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

// readNoteArgs is a call of MCP's read_note tool: a note of a wing the
// server's agent does not see by domain (its own and global) is refused,
// as its search hides it.
type readNoteArgs struct {
	Ref     string `json:"ref" jsonschema:"note id, FILE:LINE, or N: last search's Nth hit"`
	History bool   `json:"history,omitempty" jsonschema:"also its Git commits"`
}

// readNote is MCP's read_note: what memminer show --json prints.
func (s *mcpServer) readNote(ctx context.Context, _ *mcp.CallToolRequest, in readNoteArgs) (*mcp.CallToolResult, api.ShownNote, error) {
	var out api.ShownNote
	err := s.call(func() (err error) {
		out, err = s.a.showNote(ctx, in.Ref, in.History, domainArgs{})
		return err
	})
	if err != nil {
		return nil, out, err
	}
	return toolText(func(w io.Writer) { printShown(w, out, in.History) }), out, nil
}
