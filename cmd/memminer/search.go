package main

import (
	"context"
	"errors"
	"fmt"
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
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 || strings.TrimSpace(strings.Join(args, " ")) == "" {
				return usagef("search needs a QUERY")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			query := strings.TrimSpace(strings.Join(args, " "))
			if results < 1 || results > 1000 {
				return usagef("--results must be between 1 and 1000, got %d", results)
			}
			var wings []string
			if wing != "" {
				w, err := normalizeWing(wing)
				if err != nil {
					return err
				}
				wings = []string{w}
			}
			ctx := cmd.Context()
			out, err := a.client().Search(ctx, daemon.SearchRequest{Query: query, Wings: wings, Results: results, Model: a.cfg.Model})
			if errors.Is(err, daemon.ErrNotRunning) || errors.Is(err, daemon.ErrOtherModel) {
				out, err = a.searchPalace(ctx, query, wings, results)
			}
			switch {
			case errors.Is(err, palace.ErrEmpty):
				return fmt.Errorf("the palace at %s has no notes yet; mine some memory first: memminer mine hive/agents/<id>", a.cfg.Palace)
			case errors.Is(err, palace.ErrUnknownWing):
				return usagef("%v", err)
			case err != nil:
				return err
			}
			for i := range out.Results {
				out.Results[i].Source = displayPath(out.Results[i].Source)
			}
			if asJSON {
				return writeJSON(a.stdout, out)
			}
			printHits(a, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&wing, "wing", "", "search only this wing")
	f.IntVarP(&results, "results", "n", palace.DefaultResults, "number of results")
	f.BoolVar(&asJSON, "json", false, "print results as JSON")
	return cmd
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

func printHits(a *app, out daemon.SearchResult) {
	if len(out.Results) == 0 {
		fmt.Fprintln(a.stdout, "no matching notes")
		return
	}
	for i, h := range out.Results {
		heading := ""
		if h.Heading != "" {
			heading = "  " + h.Heading
		}
		fmt.Fprintf(a.stdout, "%d. [%s] %s:%d%s  (%.2f)\n", i+1, h.Wing, h.Source, h.Line, heading, h.Score)
		for _, line := range strings.Split(h.Text, "\n") {
			fmt.Fprintln(a.stdout, "   "+line)
		}
	}
}
