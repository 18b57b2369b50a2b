package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

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
an embedding model is configured. With the lexical model it is BM25 alone.`,
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
			e, _, err := a.embedder(ctx)
			if err != nil {
				return err
			}
			p, err := a.openPalace(ctx, e, false, wings)
			if err != nil {
				return err
			}
			defer p.Close()
			hits, err := p.Search(ctx, query, palace.SearchOptions{Wings: wings, Results: results})
			switch {
			case errors.Is(err, palace.ErrEmpty):
				return fmt.Errorf("the palace at %s has no notes yet; mine some memory first: memminer mine hive/agents/<id>", a.cfg.Palace)
			case err != nil:
				return err
			}
			out := searchJSON{Query: query, Results: make([]searchHit, len(hits))}
			for i, h := range hits {
				out.Results[i] = searchHit{
					ID: h.ID, Wing: h.Wing, Agent: h.Agent, Source: displayPath(h.Source), Line: h.Line,
					Heading: h.Heading, Text: h.Text, Score: roundScore(h.Score), Mtime: h.Mtime.UTC().Format(time.RFC3339),
				}
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

// searchJSON is the shape of `search --json`, read by agents and scripts.
type searchJSON struct {
	Query   string      `json:"query"`
	Results []searchHit `json:"results"`
}

type searchHit struct {
	ID      string  `json:"id"`
	Wing    string  `json:"wing"`
	Agent   string  `json:"agent"`
	Source  string  `json:"source"`
	Line    int     `json:"line"`
	Heading string  `json:"heading"`
	Text    string  `json:"text"`
	Score   float64 `json:"score"`
	Mtime   string  `json:"mtime"`
}

func roundScore(s float64) float64 { return float64(int(s*10000+0.5)) / 10000 }

func printHits(a *app, out searchJSON) {
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
