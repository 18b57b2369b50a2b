package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/memminer/memminer/memory/handoff"
	"github.com/memminer/memminer/memory/remember"
)

func (a *app) handoffCmd() *cobra.Command {
	var (
		wing, to, accept string
		asJSON           bool
	)
	cmd := &cobra.Command{
		Use:   `handoff --to ID "SUMMARY" | handoff --accept REF`,
		Short: "Hand work to another agent, or accept a handoff to you",
		Long: `memminer handoff --to ID "SUMMARY" records, in your own memory file only, a
dated note handing the work SUMMARY describes to wing ID:

  - handoff ho-1a2b3c4d to ID: SUMMARY (added YYYY-MM-DD)

memminer wake-up --wing ID then shows it first, before the story, with who
sent it and when, until the receiver accepts it:

memminer handoff --accept REF (REF is the ho-… reference) writes, in the
receiver's own memory file, a note accepting it; it no longer leads the
digest. Both go through remember (refused on an open conflict, mined at
once), with the daemon or without. Your wing is --wing or MEMMINER_WING.
Details: docs/connect.md.`,
		Example: `  memminer handoff --wing dwight --to pam "Finish the db-2 runbook (ops/db2.md)"
  memminer handoff --wing pam --accept ho-1a2b3c4d`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("wing") {
				a.cfg.Wing = wing
			}
			if (to == "") == (accept == "") {
				return usagef("handoff needs --to ID with a SUMMARY, or --accept REF")
			}
			var (
				res handoffResult
				err error
			)
			if to != "" {
				res, err = a.handoff(cmd.Context(), to, strings.Join(args, " "))
			} else {
				if len(args) > 0 {
					return usagef("handoff --accept takes no SUMMARY")
				}
				res, err = a.acceptHandoff(cmd.Context(), accept)
			}
			if err != nil && !errors.Is(err, remember.ErrNotMined) {
				return rememberError(err, a.cfg.Wing)
			}
			if asJSON {
				if werr := writeJSON(a.stdout, res); werr != nil {
					return werr
				}
			} else {
				printHandoff(a.stdout, res)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&wing, "wing", "", "your own wing, the one written to (env MEMMINER_WING, config wing:)")
	f.StringVar(&to, "to", "", "hand the work to this wing")
	f.StringVar(&accept, "accept", "", "accept the handoff with this reference (ho-…)")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	settingFlags(f, "hive")
	return cmd
}

// handoffArgs is a call of the MCP handoff tool.
type handoffArgs struct {
	// To and Summary say themselves; descriptions would cost every
	// session tokens (TestMCPToolsListIsSmall).
	To      string `json:"to,omitempty"`
	Summary string `json:"summary,omitempty"`
	Accept  string `json:"accept,omitempty" jsonschema:"ho-... ref"`
}

// handoffResult is what handoff prints with --json.
type handoffResult struct {
	Ref     string `json:"ref"`
	From    string `json:"from"`
	To      string `json:"to"`
	Summary string `json:"summary"`
	// Accepted is true for --accept; AlreadyAccepted when the receiver's
	// file already held the acceptance.
	Accepted        bool `json:"accepted"`
	AlreadyAccepted bool `json:"already_accepted"`
	// File and Line are the note written (the handoff or the acceptance).
	File string `json:"file"`
	Line int    `json:"line"`
	ID   string `json:"id"`
}

// handoff records a handoff to wing to in the sender's own memory file.
func (a *app) handoff(ctx context.Context, to, summary string) (handoffResult, error) {
	from, err := a.ownWing(ctx, "handoff")
	if err != nil {
		return handoffResult{}, err
	}
	if to, err = normalizeWing(to); err != nil {
		return handoffResult{}, usagef("--to: %v", strings.TrimPrefix(err.Error(), "--wing: "))
	}
	if to == from {
		return handoffResult{}, usagef("--to %s is your own wing; hand work to another agent", to)
	}
	summary = strings.TrimSpace(summary)
	if summary == "" {
		return handoffResult{}, usagef(`handoff --to %s needs a SUMMARY of what is handed over`, to)
	}
	ref := handoff.NewRef()
	res, err := a.remember(ctx, remember.Request{Wing: from, Text: handoff.Text(ref, to, summary), AllowDuplicate: true})
	out := handoffResult{Ref: ref, From: from, To: to, Summary: strings.Join(strings.Fields(summary), " "), File: res.File, Line: res.Line, ID: res.ID}
	return out, err
}

// acceptHandoff closes the open handoff ref addressed to the agent's wing
// with a note in the agent's own memory file. The handoff is found the way
// search finds any note, through the daemon or the palace.
func (a *app) acceptHandoff(ctx context.Context, ref string) (handoffResult, error) {
	me, err := a.ownWing(ctx, "handoff --accept")
	if err != nil {
		return handoffResult{}, err
	}
	ref = strings.ToLower(strings.TrimSpace(ref))
	if !handoff.ValidRef(ref) {
		return handoffResult{}, usagef("--accept %s: a handoff reference is ho- and 8 hex digits (memminer wake-up --wing %s lists yours)", ref, me)
	}
	zero := 0.0
	// Withdrawn handoffs too: a ref belongs to its first handoff
	// (handoff.Owner), withdrawn or not.
	found, err := a.search(ctx, searchArgs{Query: ref, Results: 50, MinRelevance: &zero, IncludeSuperseded: true})
	var empty *emptyPalaceError
	if err != nil && !errors.As(err, &empty) {
		return handoffResult{}, err
	}
	out := handoffResult{Ref: ref, To: me, Accepted: true}
	var claims []handoff.Claim
	for _, h := range found.Results {
		if n, ok := handoff.Parse(h.Text); ok && n.Ref == ref {
			date := ""
			if h.Date != nil {
				date = *h.Date
			}
			claims = append(claims, handoff.Claim{Note: n, From: h.Wing, Date: date, Withdrawn: h.Superseded, Source: h.Source, Line: h.Line})
		}
	}
	owner, sent, err := handoff.Owner(claims)
	switch {
	case err != nil:
		return handoffResult{}, fmt.Errorf("%w; nothing written", err)
	case !sent:
		return handoffResult{}, fmt.Errorf("no handoff %s in the palace (memminer wake-up --wing %s lists the open ones); nothing written", ref, me)
	case owner.Withdrawn:
		return handoffResult{}, fmt.Errorf("handoff %s from %s was withdrawn (superseded); nothing written", ref, owner.From)
	case owner.To != me:
		return handoffResult{}, fmt.Errorf("handoff %s is addressed to %s, not to you (%s); nothing written", ref, owner.To, me)
	}
	out.From, out.Summary = owner.From, owner.Summary
	for _, h := range found.Results {
		if r, ok := handoff.ParseAccept(h.Text); ok && r == ref && h.Wing == me {
			out.AlreadyAccepted, out.File, out.Line, out.ID = true, h.Source, h.Line, h.ID
			return out, nil
		}
	}
	res, err := a.remember(ctx, remember.Request{Wing: me, Text: handoff.AcceptText(ref, out.From, out.Summary), AllowDuplicate: true})
	out.File, out.Line, out.ID = res.File, res.Line, res.ID
	return out, err
}

func printHandoff(w io.Writer, r handoffResult) {
	switch {
	case r.AlreadyAccepted:
		fmt.Fprintf(w, "handoff %s from %s was already accepted in %s:%d\n", r.Ref, r.From, r.File, r.Line)
	case r.Accepted:
		fmt.Fprintf(w, "accepted handoff %s from %s in %s:%d: %s\n", r.Ref, r.From, r.File, r.Line, r.Summary)
	default:
		fmt.Fprintf(w, "handoff %s to %s recorded in %s:%d\n", r.Ref, r.To, r.File, r.Line)
	}
}

// handoff is the MCP handoff tool: a handoff from this server's wing, or
// the acceptance of one addressed to it.
func (s *mcpServer) handoff(ctx context.Context, _ *mcp.CallToolRequest, in handoffArgs) (*mcp.CallToolResult, handoffResult, error) {
	if s.wing == "" {
		return nil, handoffResult{}, errors.New("handoff needs this server's wing: start it with memminer mcp --wing ID (or set MEMMINER_WING); nothing written")
	}
	if (in.To == "") == (in.Accept == "") {
		return nil, handoffResult{}, errors.New("give to and summary to hand work over, or accept: REF to accept a handoff; nothing written")
	}
	var res handoffResult
	var hErr error
	err := s.call(func() error {
		s.a.cfg.Wing = s.wing
		if in.To != "" {
			res, hErr = s.a.handoff(ctx, in.To, in.Summary)
		} else {
			res, hErr = s.a.acceptHandoff(ctx, in.Accept)
		}
		return nil
	})
	if err == nil && hErr != nil && !errors.Is(hErr, remember.ErrNotMined) {
		err = rememberError(hErr, s.wing)
	}
	if err != nil {
		return nil, res, err
	}
	return toolText(func(w io.Writer) { printHandoff(w, res) }), res, nil
}
