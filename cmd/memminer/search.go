package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/palace"
)

func (a *app) searchCmd() *cobra.Command {
	var (
		wing    string
		results int
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the palace for notes relevant to QUERY",
		Long: `Search every wing (or one, with --wing) for the notes most relevant to QUERY.

Search is hybrid: BM25 over the notes' words, fused with vector similarity when
an embedding model is configured. With the lexical model it is BM25 alone.

When the daemon (memminer run) serves the palace, the search goes to it over
its socket: no model or palace is loaded. The output is the same either way.

How the scores are computed and fused: docs/search.md.`,
		Example: `  memminer search "how do we build the web bundle?"
  memminer search "db-2 failover" --wing dwight --results 10 --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := a.search(cmd.Context(), searchArgs{Query: strings.Join(args, " "), Wing: wing, Results: results})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, out)
			}
			printHits(a.stdout, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&wing, "wing", "", "search only this wing")
	f.IntVarP(&results, "results", "n", palace.DefaultResults, "number of results")
	f.BoolVar(&asJSON, "json", false, "print results as JSON")
	return cmd
}

// searchArgs is one search, as the search command's arguments and flags
// or an MCP client give it.
type searchArgs struct {
	Query   string `json:"query" jsonschema:"what to look for, in words"`
	Wing    string `json:"wing,omitempty" jsonschema:"search only this wing (agent id)"`
	Results int    `json:"results,omitempty" jsonschema:"number of results, 1-1000"`
}

// search runs a search as the search command does: through the daemon
// when one serves the palace, otherwise in the palace itself. Sources are
// shown relative to the working directory when they lie below it.
func (a *app) search(ctx context.Context, args searchArgs) (daemon.SearchResult, error) {
	query := strings.TrimSpace(args.Query)
	if query == "" {
		return daemon.SearchResult{}, usagef("search needs a QUERY")
	}
	results := args.Results
	if results < 1 || results > 1000 {
		return daemon.SearchResult{}, usagef("--results must be between 1 and 1000, got %d", results)
	}
	wing, err := normalizeWing(args.Wing)
	if err != nil {
		return daemon.SearchResult{}, err
	}
	var wings []string
	if wing != "" {
		wings = []string{wing}
	}
	out, err := a.client().Search(ctx, daemon.SearchRequest{Query: query, Wings: wings, Results: results, Model: a.cfg.Model})
	if errors.Is(err, daemon.ErrNotRunning) || errors.Is(err, daemon.ErrOtherModel) {
		out, err = a.searchPalace(ctx, query, wings, results)
	}
	switch {
	case errors.Is(err, palace.ErrEmpty):
		return daemon.SearchResult{}, fmt.Errorf("the palace at %s has no notes yet; mine some memory first: memminer mine hive/agents/<id>", a.cfg.Palace)
	case errors.Is(err, palace.ErrUnknownWing):
		return daemon.SearchResult{}, usagef("%v", err)
	case err != nil:
		return daemon.SearchResult{}, err
	}
	for i := range out.Results {
		out.Results[i].Source = displayPath(out.Results[i].Source)
	}
	return out, nil
}

// searchPalace searches the palace itself, read-only: no daemon serves it.
func (a *app) searchPalace(ctx context.Context, query string, wings []string, results int) (daemon.SearchResult, error) {
	e, _, err := a.embedder(ctx)
	if err != nil {
		return daemon.SearchResult{}, err
	}
	p, err := a.openPalace(ctx, e, readPalace, wings)
	if err != nil {
		return daemon.SearchResult{}, err
	}
	defer p.Close()
	hits, err := p.Search(ctx, query, palace.SearchOptions{Wings: wings, Results: results})
	if err != nil {
		return daemon.SearchResult{}, err
	}
	return daemon.NewSearchResult(query, hits), nil
}

func printHits(w io.Writer, out daemon.SearchResult) {
	if len(out.Results) == 0 {
		fmt.Fprintln(w, "no matching notes")
		return
	}
	for i, h := range out.Results {
		heading := ""
		if h.Heading != "" {
			heading = "  " + h.Heading
		}
		fmt.Fprintf(w, "%d. [%s] %s:%d%s  (%.2f)\n", i+1, h.Wing, h.Source, h.Line, heading, h.Score)
		for _, line := range strings.Split(h.Text, "\n") {
			fmt.Fprintln(w, "   "+line)
		}
	}
}
