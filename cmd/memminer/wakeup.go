package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/recall/wakeup"
)

// minWakeupTokens is the smallest --tokens accepted: room for both
// headings, a few identity lines and a note. Below it a digest is empty or
// identity alone, which no session can use.
const minWakeupTokens = 100

func (a *app) wakeupCmd() *cobra.Command {
	var (
		tokens int
		wing   string
		asJSON bool
		hook   string
		preErr error
		inbox  bool
		dom    domainArgs
	)
	cmd := &cobra.Command{
		Use:     "wake-up",
		Aliases: []string{"wakeup"},
		Short:   "Print a session-start digest: who is in the hive, what matters",
		Long: `Print a digest for an agent starting a session: one identity line per wing,
then the essential story, the notes that matter most now, within a token budget.

Notes are ranked by recency (file mtime and dates written in the note),
explicit markers (decision, rule, important, pinned, "!"), centrality in their
wing, corroboration by other wings, and diversity; superseded notes never
appear, notes waiting in an inbox only with --include-inbox (the digest opens
with how many wait, and with the packs that need review), and stale ones are
penalised (the same status model as search:
docs/governance.md). Staleness is measured from the newest file mtime in the
palace, not the clock, so the same palace gives the same digest.

Tokens are estimated as max(words, ceil(runes/3)), which never counts fewer
tokens than words; --tokens is a hard budget on the whole Markdown output.

With --hook AGENT it is that client's session-start hook, as memminer
connect installs it: any error prints nothing and exits 0.

An agent's digest (its wing from MEMMINER_WING, or a hook's --wing) opens
with the handoffs open to it, and holds the wings of its domain and global
only; --all-domains widens it, --domain narrows it (docs/domains.md).
--wing tells one wing's story, led by the handoffs open to that wing.

When the daemon (memminer run) serves the palace, it computes the digest;
otherwise the command reads the palace itself. Both give the same digest.

The ranking, the identity sources and the token estimate: docs/wake-up.md.`,
		Example: `  memminer wake-up
  memminer wake-up --tokens 400 --wing dwight
  memminer wake-up --json`,
		Args: exactArgs(0, "wake-up takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if hook != "" {
				if wing != "" {
					a.cfg.Wing = wing // the hook runs for the agent of its --wing
				}
				return a.runHook(cmd, "wake-up", hook, preErr, func(ctx context.Context, _ hookInput) (string, error) {
					return a.wakeupHook(ctx, wakeupArgs{Tokens: tokens, Wing: wing, IncludeInbox: inbox, Domains: dom})
				})
			}
			if preErr != nil {
				return preErr
			}
			d, err := a.wakeUp(cmd.Context(), wakeupArgs{Tokens: tokens, Wing: wing, IncludeInbox: inbox, Domains: dom})
			err = a.duringFirstMine(cmd.Context(), err)
			var empty *emptyPalaceError
			if asJSON && errors.As(err, &empty) {
				// The shape a script reads is the same with nothing to digest.
				if werr := writeJSON(a.stdout, wakeup.EmptyDigest()); werr != nil {
					return werr
				}
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, d)
			}
			_, err = io.WriteString(a.stdout, d.Markdown())
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&tokens, "tokens", wakeup.DefaultTokens, fmt.Sprintf("hard budget of the digest, in estimated tokens (at least %d)", minWakeupTokens))
	f.StringVar(&wing, "wing", "", "tell the story of this wing only (other wings' identities in one line)")
	f.BoolVar(&asJSON, "json", false, "print the digest as JSON")
	a.hookable(cmd, &hook, &preErr)
	settingFlags(f, "hive")
	f.BoolVar(&inbox, "include-inbox", false, "let notes waiting in an agent's inbox into the story, marked unapproved")
	domainFlags(f, &dom)
	return cmd
}

// wakeupArgs is one wake-up, as the wake-up command's flags or an MCP
// client give it.
type wakeupArgs struct {
	Tokens int    `json:"tokens,omitempty" jsonschema:"at least 100, default 800"`
	Wing   string `json:"wing,omitempty" jsonschema:"only this wing's story"`

	// IncludeInbox is the CLI's alone, as searchArgs.IncludeInbox.
	IncludeInbox bool `json:"-"`
	// Domains are the CLI's alone: over MCP, search widens
	// (all_domains); the digest stays the agent's own.
	Domains domainArgs `json:"-"`
}

// wakeUp builds the digest as the wake-up command does. Story
// sources are shown relative to the working directory when they lie below it.
func (a *app) wakeUp(ctx context.Context, args wakeupArgs) (wakeup.Digest, error) {
	if args.Tokens < minWakeupTokens {
		return wakeup.Digest{}, usagef("--tokens must be at least %d, got %d", minWakeupTokens, args.Tokens)
	}
	wing, err := normalizeWing(args.Wing)
	if err != nil {
		return wakeup.Digest{}, err
	}
	scope, err := a.domainScope(args.Domains)
	if err != nil {
		return wakeup.Digest{}, err
	}
	opts := wakeup.Options{Tokens: args.Tokens, Wing: wing, ReadFile: wakeup.ReadFileLimited, StaleAfter: a.cfg.StaleAfter,
		IncludeInbox: args.IncludeInbox, Notices: a.packNotices(), Scope: scope}
	d, err := a.service().WakeUp(ctx, opts)
	switch {
	case errors.Is(err, wakeup.ErrEmpty):
		return wakeup.Digest{}, a.emptyPalace()
	case errors.Is(err, wakeup.ErrUnknownWing):
		return wakeup.Digest{}, nothingFound(usagef("--wing: %v", err))
	case isDomainError(err):
		return wakeup.Digest{}, usagef("%v", err)
	case err != nil:
		return wakeup.Digest{}, err
	}
	for i := range d.Story {
		d.Story[i].Source = a.sourceName(d.Story[i].Path)
	}
	for i := range d.Handoffs {
		d.Handoffs[i].Source = a.sourceName(d.Handoffs[i].Path)
	}
	return d, nil
}
