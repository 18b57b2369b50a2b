package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/clients/skill"
	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/memory/inbox"
	"github.com/memminer/memminer/memory/remember"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/inproc"
)

func (a *app) inboxCmd() *cobra.Command {
	var (
		wing        string
		all, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "inbox",
		Short: "List the notes waiting for a person's approval",
		Long: `List the notes agents wrote as hypotheses or as high-risk (remember
--confidence hypothesis, --risk high): they wait in the agent's inbox,
HIVE/agents/<wing>/inbox.md, mined but left out of search, wake-up, packs
and MCP until a person approves them into memory or rejects them.

Each item has its age, confidence and risk, and a ref (its note id) that
"memminer inbox approve REF" and "memminer inbox reject REF" take. --all
also lists the decided items, kept in the inbox as history.

The rules: docs/remember.md ("The inbox").`,
		Example: `  memminer inbox
  memminer inbox --wing dwight --json
  memminer inbox approve 3f2a… --note "checked the failover log"
  memminer inbox reject 3f2a… --note "db-2 was never primary"`,
		Args: exactArgs(0, "inbox takes no arguments; approve and reject take a REF"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			id, err := normalizeWing(wing)
			if err != nil {
				return err
			}
			items, err := a.inboxItems(cmd.Context(), id, all)
			if err != nil {
				return err
			}
			skills := a.proposedSkills()
			if asJSON {
				return writeJSON(a.stdout, inboxJSON{Pending: countPending(items), Items: items, SkillsProposed: skills})
			}
			printInbox(a.stdout, items)
			printProposedSkills(a.stdout, skills)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&wing, "wing", "", "list only this wing's inbox")
	f.BoolVar(&all, "all", false, "also list approved and rejected items")
	f.BoolVar(&asJSON, "json", false, "print the items as JSON")
	// approve and reject write to the hive: they take --hive too.
	settingFlags(cmd.PersistentFlags(), "hive")
	cmd.AddCommand(a.inboxDecideCmd(true), a.inboxDecideCmd(false))
	return cmd
}

// inboxJSON is inbox --json.
type inboxJSON struct {
	Pending int          `json:"pending"`
	Items   []inbox.Item `json:"items"`
	// SkillsProposed are the skills waiting for approval (skill.go).
	SkillsProposed []skill.Skill `json:"skills_proposed"`
}

func countPending(items []inbox.Item) int {
	n := 0
	for _, it := range items {
		if it.State == inbox.Pending {
			n++
		}
	}
	return n
}

func (a *app) inboxDecideCmd(approve bool) *cobra.Command {
	var (
		d      inbox.Decision
		asJSON bool
	)
	use, short, long := "approve REF", "Approve an inbox item into the agent's memory", `Approve the inbox item REF: its note is written into the agent's memory
file of this machine, memory.<machine>.md, through remember, marked
"(status: approved DATE by WHO)", and the inbox line is marked
"(inbox: approved DATE by WHO into FILE:LINE)", kept as history, never
deleted. Both writes are atomic; approving again after a failure in between
finds the note already in memory and only marks the inbox.

Approval is a person's act: it is a command, never an MCP tool.`
	if !approve {
		use, short, long = "reject REF", "Reject an inbox item, keeping it as history", `Reject the inbox item REF: the inbox line is marked
"(inbox: rejected DATE by WHO: WHY)" and stays in the file as history;
nothing goes into memory. --note says why and is required.`
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long + "\n\n" + refHelp + "\n\nWHO is --by, else MEMMINER_USER, else your login name. The rules:\ndocs/remember.md (\"The inbox\").",
		Args:  exactArgs(1, "give the item's REF (memminer inbox --json lists them)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if d.By == "" {
				d.By = a.whoAmI()
			}
			d.Now = time.Now()
			if !approve && strings.TrimSpace(d.Note) == "" {
				return usagef("reject needs --note saying why")
			}
			res, err := a.decide(cmd.Context(), args[0], d, approve)
			if res.Decision != "" {
				if asJSON {
					if werr := writeJSON(a.stdout, res); werr != nil {
						return werr
					}
				} else {
					fmt.Fprintln(a.stdout, res.message())
				}
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the decision as JSON")
	noteHelp := "a remark kept with the approval"
	if !approve {
		noteHelp = "why it is rejected (required)"
	}
	cmd.Flags().StringVar(&d.Note, "note", "", noteHelp)
	cmd.Flags().StringVar(&d.By, "by", "", "who decides (default MEMMINER_USER, else your login name)")
	return cmd
}

// whoAmI is the person a decision is attributed to by default.
func (a *app) whoAmI() string {
	if u := a.getenv("MEMMINER_USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return a.getenv("USER")
}

// readPalace opens the palace read-only, as every reader of it does;
// nil when nothing was mined yet.
func (a *app) readPalace(ctx context.Context) (*palace.Palace, error) {
	if _, err := os.Stat(a.cfg.Palace); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return a.openPalace(ctx, nil, inproc.AsIs, nil)
}

// inboxItems lists the inbox (the service's Inbox).
func (a *app) inboxItems(ctx context.Context, wing string, all bool) ([]inbox.Item, error) {
	items, err := a.service().Inbox(ctx, api.InboxRequest{Wing: wing, All: all})
	if errors.Is(err, palace.ErrUnknownWing) {
		return nil, nothingFound(usagef("--wing: %v", err))
	}
	return items, err
}

// decision is what inbox approve or reject did, as --json prints it.
type decision api.Decision

// message is the decision as the text output says it.
func (d decision) message() string {
	switch {
	case d.Into == nil:
		return fmt.Sprintf("rejected %s:%d; it stays in the inbox as history", d.File, d.Line)
	case d.AlreadyInMemory:
		return fmt.Sprintf("approved %s:%d: memory already holds it at %s (note %s)", d.File, d.Line, *d.Into, d.ID)
	}
	return fmt.Sprintf("approved %s:%d into %s (note %s)", d.File, d.Line, *d.Into, d.ID)
}

// decide approves or rejects the item ref names (the service's Decide),
// which mines its inbox, so the next listing, search and wake-up see the
// decision. The result says what was decided, also when mining it then
// failed.
func (a *app) decide(ctx context.Context, ref string, d inbox.Decision, approve bool) (decision, error) {
	if a.cfg.Hive == "" {
		return decision{}, errNoHive()
	}
	sr, err := a.showRequest(ref)
	if err != nil {
		return decision{}, err
	}
	hive, err := filepath.Abs(a.cfg.Hive)
	if err != nil {
		return decision{}, err
	}
	res, err := a.service().Decide(ctx, api.DecideRequest{
		Ref: sr.Ref, Dir: sr.Dir, Approve: approve, By: d.By, Note: d.Note, Now: d.Now,
		Hive: hive, MaxNoteBytes: a.cfg.MaxNoteBytes, Machine: a.cfg.Machine,
	})
	if err != nil && res.Decision == "" {
		return decision{}, a.decisionError(err, res.Wing)
	}
	return decision(res), err
}

// decisionError is err of an inbox decision with the CLI's advice.
func (a *app) decisionError(err error, wing string) error {
	switch {
	case errors.Is(err, inbox.ErrSecret):
		return &codeError{code: exitSecret, msg: err.Error()}
	case errors.Is(err, inbox.ErrBadDecision), errors.Is(err, inbox.ErrNoItem):
		return usagef("%v", err)
	case errors.Is(err, api.ErrBadRef), errors.Is(err, api.ErrAmbiguousRef):
		return a.refError(err)
	case errors.Is(err, remember.ErrNoHive):
		return errNoHive()
	}
	return rememberError(err, wing)
}

func printInbox(w io.Writer, items []inbox.Item) {
	pending := countPending(items)
	switch pending {
	case 0:
		fmt.Fprintln(w, "no notes wait for approval")
	case 1:
		fmt.Fprintln(w, "1 note waits for approval")
	default:
		fmt.Fprintf(w, "%d notes wait for approval\n", pending)
	}
	for _, it := range items {
		class := "written by hand"
		if it.Confidence != "" {
			class = it.Confidence + ", risk " + it.Risk
		}
		state := fmt.Sprintf("%s, %d %s old", class, it.AgeDays, plural(it.AgeDays, "day", "days"))
		if it.State != inbox.Pending {
			state = fmt.Sprintf("%s %s by %s", it.State, *it.On, quote.Line(*it.By))
			switch {
			case *it.Note == "":
			case it.State == inbox.Approved:
				state += " into " + quote.Line(*it.Note)
			default:
				state += ": " + quote.Line(*it.Note)
			}
		}
		fmt.Fprintf(w, "%s [%s] %s:%d (%s)\n", it.Ref, quote.Line(it.Wing), quote.Line(it.File), it.Line, state)
		fmt.Fprintln(w, quote.Body(it.Text, "   "))
	}
}
