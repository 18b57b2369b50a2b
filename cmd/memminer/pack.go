package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/recall/pack"
)

// exitStale: pack refused a block_stale pack that uses stale files.
const exitStale = 3

func (a *app) packCmd() *cobra.Command {
	var (
		tokens              int
		asJSON, list, inbox bool
		mark, note, by      string
		dom                 domainArgs
	)
	cmd := &cobra.Command{
		Use:   "pack NAME",
		Short: "Render a Context Pack: the notes one task needs, governed",
		Long: `Render the Context Pack HIVE/packs/NAME.md: its task (the pack's body), then
the notes its use: entries select (wing:ID, file:PATH, tag:T, query:TEXT)
less those its avoid: entries exclude (the same, and status:S; avoid wins),
within --tokens. Rendering is governed as search is: superseded notes and
notes waiting in an inbox are left out (--include-inbox shows the latter,
marked unapproved), approved notes come first, and each note has its file,
line and date.

Each file the pack uses whose newest note (or mtime) is older than the
pack's stale_after (default the hive's, 90d), or whose review date has
passed, is warned of; with block_stale: true the pack is refused instead
(exit status 3) and the files are named.

--mark good|bad|reviewed [--note WHY] adds a line to the pack's validation
log, packs/NAME.marks. Three bad marks in a row flag the pack "review
needed" here, in status and in wake-up, until the pack is edited or marked
reviewed. --list shows every pack with its last use, marks and state.

An agent's rendering (MEMMINER_WING) brings notes of its domain and global
only; --all-domains widens it, --domain narrows it (docs/domains.md).

The format and the rules: docs/packs.md.`,
		Example: `  memminer pack deploy
  memminer pack deploy --tokens 400 --json
  memminer pack deploy --mark bad --note "missed the db-2 failover"
  memminer pack --list
  memminer pack new deploy --use wing:dwight --avoid status:stale`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.cfg.Hive == "" {
				return errNoHive()
			}
			if list {
				if len(args) > 0 {
					return usagef("pack --list takes no NAME")
				}
				return a.packList(asJSON)
			}
			if len(args) != 1 {
				return usagef("pack needs a NAME (memminer pack --list shows them) (got %d arguments)", len(args))
			}
			if mark != "" {
				kind, err := pack.ParseMark(mark)
				if err != nil {
					return usagef("--mark: %v", err)
				}
				if by == "" {
					by = a.whoAmI()
				}
				msg, err := a.packMark(cmd.Context(), args[0], pack.Mark{Time: time.Now(), Kind: kind, By: by, Note: note})
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(a.stdout, msg)
				return err
			}
			if tokens < 1 {
				return usagef("--tokens must be at least 1, got %d", tokens)
			}
			r, err := a.renderPack(cmd.Context(), args[0], tokens, inbox, a.whoAmI(), dom)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, r)
			}
			_, err = io.WriteString(a.stdout, r.Text())
			return err
		},
	}
	f := cmd.Flags()
	settingFlags(f, "hive")
	f.IntVar(&tokens, "tokens", pack.DefaultTokens, "hard budget of the rendering, in estimated tokens")
	f.BoolVar(&asJSON, "json", false, "print the rendering (or the list) as JSON")
	f.BoolVar(&inbox, "include-inbox", false, "also bring notes waiting in an agent's inbox, marked unapproved")
	f.BoolVar(&list, "list", false, "list every pack with its last use, marks and state")
	f.StringVar(&mark, "mark", "", "add a mark to the pack's validation log: good, bad or reviewed")
	f.StringVar(&note, "note", "", "why, with --mark")
	f.StringVar(&by, "by", "", "who marks, with --mark (default MEMMINER_USER, else your login name)")
	domainFlags(f, &dom)
	cmd.AddCommand(a.packNewCmd())
	return cmd
}

func (a *app) packNewCmd() *cobra.Command {
	var (
		use, avoid        []string
		body, staleAfter  string
		reviewDate        string
		blockStale, toOut bool
		asJSON            bool
	)
	cmd := &cobra.Command{
		Use:   "new NAME",
		Short: "Write a new Context Pack, HIVE/packs/NAME.md",
		Long: `Write HIVE/packs/NAME.md with the given entries: --use and --avoid take
wing:ID, file:PATH (relative to the hive), tag:T or query:TEXT, and --avoid
also status:S; both repeat. The file is checked as pack reads it before it
is written, atomically; an existing pack is never replaced. Edit its body
afterwards to say the task it is for. The format: docs/packs.md.`,
		Example: `  memminer pack new deploy --use wing:dwight --use "query:release process"
  memminer pack new onboarding --use tag:onboarding --stale-after 30d`,
		Args: exactArgs(1, "pack new takes the pack's NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.cfg.Hive == "" {
				return errNoHive()
			}
			s := pack.Spec{Body: body, BlockStale: blockStale}
			for _, u := range use {
				e, err := pack.ParseEntry(u, false)
				if err != nil {
					return usagef("--use: %v", err)
				}
				s.Use = append(s.Use, e)
			}
			for _, u := range avoid {
				e, err := pack.ParseEntry(u, true)
				if err != nil {
					return usagef("--avoid: %v", err)
				}
				s.Avoid = append(s.Avoid, e)
			}
			if len(s.Use) == 0 {
				return usagef("pack new needs at least one --use ENTRY")
			}
			if staleAfter != "" {
				if _, err := govern.ParseAge(staleAfter); err != nil {
					return usagef("--stale-after: %v", err)
				}
				s.StaleAfter = staleAfter
			}
			if reviewDate != "" {
				d, err := time.Parse(time.DateOnly, reviewDate)
				if err != nil {
					return usagef("--review-date %q: want YYYY-MM-DD", reviewDate)
				}
				s.ReviewDate = d
			}
			if toOut {
				if asJSON {
					return writeJSON(a.stdout, packNewJSON{Name: args[0], Use: len(s.Use), Avoid: len(s.Avoid), Content: string(s.Content(args[0]))})
				}
				_, err := a.stdout.Write(s.Content(args[0]))
				return err
			}
			p, err := pack.New(a.cfg.Hive, args[0], s)
			switch {
			case errors.Is(err, pack.ErrBadName), errors.Is(err, pack.ErrExists):
				return usagef("%v", err)
			case err != nil:
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, packNewJSON{Name: args[0], File: p.File, Written: true, Use: len(p.Use), Avoid: len(p.Avoid), Content: string(s.Content(args[0]))})
			}
			fmt.Fprintf(a.stdout, "wrote %s: %d use, %d avoid; say the task it is for in its body\n", p.File, len(p.Use), len(p.Avoid))
			return nil
		},
	}
	f := cmd.Flags()
	settingFlags(f, "hive")
	f.StringArrayVar(&use, "use", nil, "what the pack brings: wing:ID, file:PATH, tag:T or query:TEXT (repeatable)")
	f.StringArrayVar(&avoid, "avoid", nil, "what it never brings: the same, or status:S (repeatable)")
	f.StringVar(&body, "body", "", "the task the pack is for, in a few lines")
	f.StringVar(&staleAfter, "stale-after", "", "warn of used files older than this: 30d, 2w, 36h or never (default the hive's)")
	f.BoolVar(&blockStale, "block-stale", false, "refuse to render while a used file is stale")
	f.StringVar(&reviewDate, "review-date", "", "when the pack is due for review, YYYY-MM-DD")
	dryRunFlag(f, &toOut, "print the pack file instead of writing it", "print")
	f.BoolVar(&asJSON, "json", false, "print what was written (or, with --dry-run, would be) as JSON")
	return cmd
}

// packNewJSON is pack new --json.
type packNewJSON struct {
	Name string `json:"name"`
	// File is the pack's file relative to the hive; empty under --dry-run.
	File    string `json:"file"`
	Written bool   `json:"written"`
	Use     int    `json:"use"`
	Avoid   int    `json:"avoid"`
	Content string `json:"content"`
}

// loadPack loads the hive's pack name, the CLI's advice added.
func (a *app) loadPack(name string) (*pack.Pack, error) {
	p, err := pack.Load(a.cfg.Hive, name)
	switch {
	case errors.Is(err, pack.ErrNoPack), errors.Is(err, pack.ErrBadName):
		return nil, usagef("%v", err)
	case errors.Is(err, pack.ErrMalformed):
		return nil, fmt.Errorf("%w; fix the pack (the format: docs/packs.md)", err)
	}
	return p, err
}

// renderPack renders pack name from the palace, read-only, and records
// the use in its log, by who; dom scopes it by domain, as search.
func (a *app) renderPack(ctx context.Context, name string, tokens int, inbox bool, by string, dom domainArgs) (pack.Rendered, error) {
	pk, err := a.loadPack(name)
	if err != nil {
		return pack.Rendered{}, err
	}
	marks, err := pack.Marks(a.cfg.Hive, name)
	if err != nil {
		return pack.Rendered{}, err
	}
	p, err := a.readPalace(ctx)
	if err != nil {
		return pack.Rendered{}, err
	}
	if p == nil {
		return pack.Rendered{}, a.emptyPalace()
	}
	defer p.Close()
	scope, err := a.domainScope(dom)
	if err != nil {
		return pack.Rendered{}, err
	}
	sc, err := p.ScopeWings(scope)
	if err != nil {
		return pack.Rendered{}, usagef("%v", err)
	}
	opts := pack.Options{Tokens: tokens, StaleAfter: a.cfg.StaleAfter, IncludeInbox: inbox, Hive: a.cfg.Hive, Name: a.sourceName, State: pack.StateOf(pk, marks), Sees: sc.Sees}
	opts.Search = func(ctx context.Context, q string) ([]string, error) {
		out, err := a.search(ctx, searchArgs{Query: q, Results: packQueryResults, IncludeInbox: inbox, domainArgs: dom})
		var empty *emptyPalaceError
		if errors.As(err, &empty) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(out.Results))
		for i, h := range out.Results {
			ids[i] = h.ID
		}
		return ids, nil
	}
	r, err := pack.Render(ctx, p, pk, opts)
	var stale *pack.StaleError
	if errors.As(err, &stale) {
		var b strings.Builder
		fmt.Fprintf(&b, "pack %s uses stale files and has block_stale: true, so it is not rendered:", name)
		for _, w := range stale.Warnings {
			fmt.Fprintf(&b, "\n  %s: %s", w.File, w.Reason)
		}
		b.WriteString("\nupdate or review them (a review_date in their frontmatter), or set block_stale: false in " + pk.File)
		return r, &codeError{code: exitStale, msg: b.String()}
	}
	if errors.Is(err, palace.ErrUnknownWing) {
		// As search --wing: a usage error naming the known wings.
		return r, nothingFound(usagef("%v; fix the entry in %s", err, pk.File))
	}
	if err != nil {
		return r, err
	}
	if err := pack.AddMark(ctx, a.cfg.Hive, name, pack.Mark{Time: time.Now(), Kind: pack.Used, By: by}); err != nil {
		fmt.Fprintf(a.stderr, "memminer: warning: could not record the use of pack %s: %v\n", name, err)
	}
	return r, nil
}

// packQueryResults is how many hits a query: entry brings at most.
const packQueryResults = 20

// packMark adds m to pack name's log and says what it did, and whether
// the pack now needs review.
func (a *app) packMark(ctx context.Context, name string, m pack.Mark) (string, error) {
	pk, err := a.loadPack(name)
	if err != nil {
		return "", err
	}
	if err := pack.AddMark(ctx, a.cfg.Hive, name, m); err != nil {
		return "", err
	}
	marks, err := pack.Marks(a.cfg.Hive, name)
	if err != nil {
		return "", err
	}
	st := pack.StateOf(pk, marks)
	msg := fmt.Sprintf("marked pack %s %s (%d good, %d bad)", name, m.Kind, st.Good, st.Bad)
	if st.ReviewNeeded {
		msg += fmt.Sprintf("\npack %s needs review: %d bad marks in a row; edit %s or mark it reviewed", name, st.BadInARow, pk.File)
	}
	return msg, nil
}

// packRow is one pack in pack --list.
type packRow struct {
	Name  string `json:"name"`
	File  string `json:"file"`
	Error string `json:"error,omitempty"`
	pack.State
}

// packRows lists the hive's packs with their states; a malformed pack is
// listed with its error.
func (a *app) packRows() ([]packRow, error) {
	names, err := pack.Names(a.cfg.Hive)
	if err != nil {
		return nil, err
	}
	rows := []packRow{}
	for _, n := range names {
		row := packRow{Name: n, File: "packs/" + n + ".md"}
		pk, err := pack.Load(a.cfg.Hive, n)
		if err != nil {
			row.Error = err.Error()
			rows = append(rows, row)
			continue
		}
		marks, err := pack.Marks(a.cfg.Hive, n)
		if err != nil {
			row.Error = err.Error()
		}
		row.State = pack.StateOf(pk, marks)
		rows = append(rows, row)
	}
	return rows, nil
}

func (a *app) packList(asJSON bool) error {
	rows, err := a.packRows()
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(a.stdout, struct {
			Packs []packRow `json:"packs"`
		}{rows})
	}
	if len(rows) == 0 {
		fmt.Fprintf(a.stdout, "no packs in %s (memminer pack new NAME --use ENTRY writes one)\n", pack.Dir(a.cfg.Hive))
		return nil
	}
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(a.stdout, "%s  MALFORMED: %s\n", r.Name, quote.Line(r.Error))
			continue
		}
		used := "never used"
		if r.LastUsed != nil {
			used = "last used " + r.LastUsed.UTC().Format(time.DateOnly)
		}
		state := "ok"
		if r.ReviewNeeded {
			state = fmt.Sprintf("REVIEW NEEDED (%d bad in a row)", r.BadInARow)
		}
		fmt.Fprintf(a.stdout, "%s  %s, %d good, %d bad, %s\n", r.Name, used, r.Good, r.Bad, state)
	}
	return nil
}

// packsToReview are the configured hive's packs flagged review needed; a
// pack that cannot be read is listed by pack --list, not here.
func (a *app) packsToReview() []packRow {
	if a.cfg.Hive == "" {
		return nil
	}
	names, _ := pack.Names(a.cfg.Hive)
	var out []packRow
	for _, n := range names {
		marks, err := pack.Marks(a.cfg.Hive, n)
		// Marks counted against a pack never edited are at least those
		// counted against the real one: most packs are ruled out by their
		// log alone, without reading and parsing the pack (every status
		// and wake-up asks).
		if err != nil || !pack.StateOf(&pack.Pack{}, marks).ReviewNeeded {
			continue
		}
		pk, err := pack.Load(a.cfg.Hive, n)
		if err != nil {
			continue
		}
		if st := pack.StateOf(pk, marks); st.ReviewNeeded {
			out = append(out, packRow{Name: n, File: "packs/" + n + ".md", State: st})
		}
	}
	return out
}

// packNotices are the lines wake-up carries for packs that need review.
func (a *app) packNotices() []string {
	var out []string
	for _, r := range a.packsToReview() {
		out = append(out, fmt.Sprintf("pack %s needs review: %d bad marks in a row (memminer pack %s)", r.Name, r.BadInARow, r.Name))
	}
	return out
}
