package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/clients/skill"
	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
)

func (a *app) searchCmd() *cobra.Command {
	var (
		args searchArgs
		out  searchOutput
	)
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search the palace for notes relevant to QUERY",
		Long: `Search every wing (or those of --wing, less those of --exclude-wing) for the
notes most relevant to QUERY.

Search is hybrid: BM25 over the notes' words, fused with vector similarity when
an embedding model is configured. With the lexical model it is BM25 alone.

Search is governed: superseded notes are left out (--include-superseded shows
them, marked), so are notes waiting in an agent's inbox (--include-inbox
shows them, marked unapproved), stale notes are marked with why (not updated
for stale_after, 90 days by default, or past their review date), and every
hit has an absolute relevance in [0, 1]: the note's share of the query's words
(or of one topic of it), or its cosine as far as the query's words are near
the palace's notes; a query naming an identifier (JIRA-1234, ECONNRESET) no
note has finds nothing. Hits below --min-relevance are dropped; when none is
left, search prints "no matching notes" and exits 1, like grep. --explain
says why, per hit and for the best near misses.

Output, one of: the hits as text (the default), --json (one object),
--jsonl (one hit per line, the keys of a hit in --json), -l (the files with
hits, one per line, as the hive names them) or -c (WING:HITS per wing with
hits). -l and -c summarise every relevant note, up to --results (1000 for
them unless given); with no hit they print nothing and exit 1.

The hive's published skills that match the query follow the notes, a shelf
of their own ("skills" in --json; not in --jsonl, -l or -c); a skill found
is something found. Proposed and deprecated skills are never listed.

When the daemon (memminer run) serves the palace, the search goes to it over
its socket: no model or palace is loaded. The output is the same either way.

How the scores are computed and fused, relevance and skills: docs/search.md;
statuses, dates and the filters: docs/governance.md.`,
		Example: `  memminer search "how do we build the web bundle?"
  memminer search "db-2 failover" --wing dwight --wing pam --results 10 --json
  memminer search "release process" --exclude-wing jim -l
  memminer search "postgres" -c
  memminer search "release process" --status approved --fresh
  memminer search "incidents" --since 2w --tag postgres --tag incident --jsonl
  memminer search "JIRA-1234" --explain`,
		RunE: func(cmd *cobra.Command, words []string) error {
			args.Query = strings.Join(words, " ")
			if err := out.check(args.Explain); err != nil {
				return err
			}
			if out.summary() && !cmd.Flags().Changed("results") {
				args.Results = maxResults
			}
			if !cmd.Flags().Changed("min-relevance") {
				args.MinRelevance = nil
			} else if err := api.CheckMinRelevance(*args.MinRelevance); err != nil {
				return usagef("--min-relevance %v", err)
			}
			if args.Status != "" {
				if _, err := govern.ParseStatus(args.Status); err != nil {
					return usagef("--status: %v", err)
				}
			}
			res, err := a.search(cmd.Context(), args)
			err = a.duringFirstMine(cmd.Context(), err)
			var empty *emptyPalaceError
			if out.json && errors.As(err, &empty) {
				// The shape a script reads is the same with nothing to search.
				if werr := writeJSON(a.stdout, api.NewSearchResult(strings.TrimSpace(args.Query), nil)); werr != nil {
					return werr
				}
			}
			if err != nil {
				return err
			}
			if !out.summary() {
				// -l and -c show no hit numbers for show to refer to.
				a.saveLastSearch(res)
			}
			if err := out.print(a.stdout, res); err != nil {
				return err
			}
			if len(res.Results) == 0 && (len(res.Skills) == 0 || !out.showsSkills()) {
				a.foundNothing = true
				return &codeError{code: exitError}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar((*[]string)(&args.Wing), "wing", nil, "search only wing `ID` (repeatable: any of them)")
	f.StringArrayVar(&args.ExcludeWings, "exclude-wing", nil, "leave out wing `ID` (repeatable)")
	f.IntVarP(&args.Results, "results", "n", palace.DefaultResults, "number of results (1000 with -l or -c)")
	f.BoolVar(&out.json, "json", false, "print results as JSON")
	f.BoolVar(&out.jsonl, "jsonl", false, "print one JSON object per hit per line")
	f.BoolVarP(&out.files, "files-with-matches", "l", false, "print only the files with hits, one per line")
	f.BoolVarP(&out.count, "count", "c", false, "print the number of hits per wing")
	f.BoolVar(&args.IncludeSuperseded, "include-superseded", false, "also show superseded notes, marked")
	f.BoolVar(&args.IncludeInbox, "include-inbox", false, "also show notes waiting in an agent's inbox, marked unapproved")
	f.StringVar(&args.Status, "status", "", "only notes of this status: approved, stale, superseded or unapproved")
	f.BoolVar(&args.Fresh, "fresh", false, "leave out stale notes")
	f.StringVar(&args.Since, "since", "", "only notes dated on or after this: 7d, 2w, 36h or YYYY-MM-DD")
	f.StringVar(&args.Until, "until", "", "only notes dated on or before this: 7d, 2w, 36h or YYYY-MM-DD")
	f.StringArrayVar(&args.Tags, "tag", nil, "only notes with this tag (repeatable: all must match)")
	args.MinRelevance = new(float64)
	f.Float64Var(args.MinRelevance, "min-relevance", palace.DefaultMinRelevance, "drop hits below this absolute relevance, 0 to 1 (0 keeps every hit)")
	f.BoolVar(&args.Explain, "explain", false, "show why each hit is relevant, and why the best near misses are not")
	domainFlags(f, &args.domainArgs)
	settingFlags(f, "hive") // names the hits' files
	return cmd
}

// searchArgs is one search, as the search command's arguments and flags
// or an MCP client give it.
type searchArgs struct {
	Query        string   `json:"query" jsonschema:"what to look for, in words"`
	Wing         wingList `json:"wing,omitempty" jsonschema:"only these wings (agent ids)"`
	ExcludeWings []string `json:"exclude_wings,omitempty"`
	Results      int      `json:"results,omitempty" jsonschema:"1-1000"`

	IncludeSuperseded bool `json:"include_superseded,omitempty" jsonschema:"superseded too, marked"`
	// IncludeInbox is the CLI's alone: what waits for a person's approval
	// is not handed to an agent over MCP.
	IncludeInbox bool     `json:"-"`
	Status       string   `json:"status,omitempty" jsonschema:"approved, stale or superseded"`
	Fresh        bool     `json:"fresh,omitempty" jsonschema:"no stale notes"`
	Since        string   `json:"since,omitempty" jsonschema:"on or after: 7d, 2w, YYYY-MM-DD"`
	Until        string   `json:"until,omitempty" jsonschema:"on or before, as since"`
	Tags         []string `json:"tags,omitempty" jsonschema:"notes with all of these"`
	// MinRelevance nil means palace.DefaultMinRelevance.
	MinRelevance *float64 `json:"min_relevance,omitempty" jsonschema:"0-1, default 0.22"`
	Explain      bool     `json:"explain,omitempty" jsonschema:"why hits passed, near misses not"`
	// Prompt is the prompt hook's question (recall), not a flag of search.
	Prompt bool `json:"-"`
	domainArgs
}

// request checks args and turns them into the daemon's search request;
// dates are resolved against now, so the daemon and a direct search read
// "7d" alike.
func (args searchArgs) request(query string, model string, staleAfter time.Duration, now time.Time) (api.SearchRequest, error) {
	req := api.SearchRequest{Query: query, Results: args.Results, Model: model, Prompt: args.Prompt,
		IncludeSuperseded: args.IncludeSuperseded, IncludeInbox: args.IncludeInbox, Status: args.Status, Fresh: args.Fresh,
		StaleAfter: staleAfter, MinRelevance: args.MinRelevance, Explain: args.Explain}
	var err error
	if req.Wings, err = normalizeWings("--wing", args.Wing); err != nil {
		return req, err
	}
	if req.ExcludeWings, err = normalizeWings("--exclude-wing", args.ExcludeWings); err != nil {
		return req, err
	}
	for _, t := range args.Tags {
		t = govern.NormalTag(t)
		if t == "" {
			return req, usagef("--tag needs a tag")
		}
		req.Tags = append(req.Tags, t)
	}
	if args.Since != "" {
		t, err := govern.ParseSince(args.Since, now)
		if err != nil {
			return req, usagef("--since: %v", err)
		}
		req.Since = &t
	}
	if args.Until != "" {
		t, err := govern.ParseUntil(args.Until, now)
		if err != nil {
			return req, usagef("--until: %v", err)
		}
		req.Until = &t
	}
	if req.Since != nil && req.Until != nil && req.Until.Before(*req.Since) {
		return req, usagef("--until %s is before --since %s", args.Until, args.Since)
	}
	// Checked here too, so a bad value is a usage error before any daemon is asked.
	if _, err := req.Options(); err != nil {
		return req, usagef("%v", err)
	}
	return req, nil
}

// search runs a search as the search command does: through the daemon
// when one serves the palace, otherwise in the palace itself. Sources are
// shown relative to the working directory when they lie below it.
func (a *app) search(ctx context.Context, args searchArgs) (api.SearchResult, error) {
	query := strings.TrimSpace(args.Query)
	if query == "" {
		return api.SearchResult{}, usagef("search needs a QUERY")
	}
	results := args.Results
	if results < 1 || results > maxResults {
		return api.SearchResult{}, usagef("--results must be between 1 and %d, got %d", maxResults, results)
	}
	req, err := args.request(query, a.cfg.Model, a.cfg.StaleAfter, time.Now())
	if err != nil {
		return api.SearchResult{}, err
	}
	if req.Scope, err = a.domainScope(args.domainArgs); err != nil {
		return api.SearchResult{}, err
	}
	out, err := a.service().Search(ctx, req)
	var otherModel error // the daemon's refusal, when it serves another model
	var fb *fellBackError
	if errors.As(err, &fb) {
		otherModel = fb.refusal
	}
	switch {
	case errors.Is(err, palace.ErrModelMismatch):
		return api.SearchResult{}, a.modelMismatchAdvice(err, otherModel)
	case errors.Is(err, palace.ErrEmpty):
		return api.SearchResult{}, a.emptyPalace()
	case errors.Is(err, palace.ErrUnknownWing):
		return api.SearchResult{}, nothingFound(usagef("%s: %v", unknownWingFlag(err, req), err))
	case isDomainError(err):
		return api.SearchResult{}, usagef("%v", err)
	case err != nil:
		return api.SearchResult{}, err
	}
	for i := range out.Results {
		out.Results[i].Source = a.sourceName(out.Results[i].Path)
	}
	if ex := out.Explanation; ex != nil {
		// Near misses are hits too: named as the hits are.
		for i := range ex.NearMisses {
			ex.NearMisses[i].Source = a.sourceName(ex.NearMisses[i].Path)
		}
	}
	return out, nil
}

// hitName is how text output names a hit's file: its source, relative to
// the hive as remember, -l and the JSON name it, so an agent reads one
// name whatever its working directory; a file outside the hive relative to
// the working directory.
func hitName(h api.Hit) string { return fileName(h.Source, h.Path) }

// fileName is how text output names a note's file from its source and
// path: the source when it is hive-relative, else the path relative to
// the working directory.
func fileName(source, path string) string {
	if source == "" || filepath.IsAbs(source) {
		return displayPath(path)
	}
	return source
}

// printHits prints the text output of a search: per hit a header naming
// its source, then the note's lines indented, so no line of a note starts
// a line of the output. What the palace holds is rendered with quote:
// escaped for the terminal, and defused where it imitates an agent
// client's markup (docs/security.md).
func printHits(w io.Writer, out api.SearchResult) {
	if len(out.Results) == 0 {
		fmt.Fprintln(w, "no matching notes")
	}
	for i, h := range out.Results {
		printHit(w, fmt.Sprintf("%d. ", i+1), h)
	}
	if ex := out.Explanation; ex != nil {
		printExplanation(w, ex)
	}
	printSkillHits(w, out.Skills)
}

// printSkillHits prints the published skills a search found, after the
// notes: a shelf of their own.
func printSkillHits(w io.Writer, found []skill.Match) {
	if len(found) == 0 {
		return
	}
	fmt.Fprintln(w, "skills that match (the published ones, which connected clients load by name):")
	for _, m := range found {
		fmt.Fprintf(w, "  %s: %s  (%s, relevance %.2f)\n", quote.Inline(m.Name), quote.Inline(m.Description), quote.Inline(m.Source), m.Relevance)
	}
}

func printHit(w io.Writer, prefix string, h api.Hit) {
	heading := ""
	if h.Heading != "" {
		heading = "  " + quote.Inline(h.Heading)
	}
	fmt.Fprintf(w, "%s[%s] %s:%d%s  (%.2f, relevance %.2f%s)\n", prefix, quote.Inline(h.Wing), quote.Inline(hitName(h)), h.Line, heading, h.Score, h.Relevance, quote.Inline(marks(h.Fields)))
	fmt.Fprintln(w, quote.Body(h.Text, "   "))
	if e := h.Evidence; e != nil {
		fmt.Fprintf(w, "   why: %s\n", e.Reason)
		vectors := ""
		if e.Cosine != 0 || e.Semantic != 0 {
			vectors = fmt.Sprintf(", cosine %.2f, semantic %.2f, standout %.2f sd", e.Cosine, e.Semantic, e.Standout)
		}
		hook := "no"
		if e.Answers {
			hook = "yes"
		}
		fmt.Fprintf(w, "   evidence: coverage %.2f%s, channels agreeing %d; the prompt hook gives it: %s\n", e.Coverage, vectors, e.Channels, hook)
	}
}

// marks renders a hit's date and governance for the text output:
// ", 2026-11-03, superseded, stale: review due 2026-10-01".
func marks(g govern.Fields) string { return marksFor(g, "") }

// marksFor is marks for a line that also shows text, the note's words:
// the date is left out when text says it (govern.Fields.DateTextFor).
func marksFor(g govern.Fields, text string) string {
	var b strings.Builder
	if d := g.DateTextFor(text); d != "" {
		b.WriteString(", " + d)
	}
	if g.Status != nil && *g.Status != string(govern.Stale) {
		b.WriteString(", " + *g.Status)
	}
	if g.Stale {
		b.WriteString(", STALE")
		if g.StaleReason != nil && *g.StaleReason != "" {
			b.WriteString(": " + *g.StaleReason)
		}
	}
	if len(g.Tags) > 0 {
		b.WriteString(", #" + strings.Join(g.Tags, " #"))
	}
	return b.String()
}
