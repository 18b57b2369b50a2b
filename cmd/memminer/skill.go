package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/clients/skill"
	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/internal/quote"
)

func (a *app) skillCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "skill",
		Short: "Share skills: propose, approve, reject, deprecate, list",
		Long: `Skills are reusable knowledge the hive shares: folders of a SKILL.md
(frontmatter name and description, then the instructions) that Claude Code
and Codex load. An agent proposes one (HIVE/skills/proposed/NAME); a person
approves it (HIVE/skills/published/NAME) or rejects it; a published skill is
deprecated when it is no longer good (HIVE/skills/deprecated/NAME, kept as
history). HIVE/skills/LOG.md records each step. memminer connect installs
the published skills into the client's skills folder; the daemon (memminer
run) keeps them in step as skills are published and deprecated, as connect
run again does; disconnect removes them.

With no subcommand it lists the skills (--json for scripts).

The rules: docs/skills.md.`,
		Example: `  memminer skill propose deploy-api ./SKILL.md --wing dwight
  memminer skill approve deploy-api
  memminer skill reject deploy-api --note "covered by the release skill"
  memminer skill deprecate deploy-api
  memminer skill list --json`,
		Args: exactArgs(0, "skill takes a subcommand: propose, approve, reject, deprecate or list"),
		RunE: func(*cobra.Command, []string) error { return a.skillList(asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the skills as JSON")
	settingFlags(cmd.PersistentFlags(), "hive")
	cmd.AddCommand(a.skillProposeCmd(), a.skillDecideCmd("approve"), a.skillDecideCmd("reject"), a.skillDecideCmd("deprecate"), a.skillListCmd())
	return cmd
}

// configuredHive is the configured hive, or the advice to configure one.
func (a *app) configuredHive() (string, error) {
	if a.cfg.Hive == "" {
		return "", errNoHive()
	}
	return a.cfg.Hive, nil
}

// skillStepJSON is --json of skill propose, approve, reject and
// deprecate: what was done to the skill, and where it lies now.
type skillStepJSON struct {
	Name string `json:"name"`
	// Done is proposed, approved, rejected or deprecated.
	Done string `json:"done"`
	By   string `json:"by"`
	// State is the folder the skill lies in now; Source its SKILL.md
	// relative to the hive, Path absolute. All three are "" once rejected.
	State  string `json:"state"`
	Source string `json:"source"`
	Path   string `json:"path"`
}

// printSkillStep prints a step done to skill s (Name alone once rejected).
func (a *app) printSkillStep(asJSON bool, done, by string, s skill.Skill) error {
	if asJSON {
		out := skillStepJSON{Name: s.Name, Done: done, By: by, State: s.State, Path: s.Path}
		if s.Path != "" {
			out.Source = a.sourceName(s.Path)
		}
		return writeJSON(a.stdout, out)
	}
	var err error
	switch done {
	case "proposed":
		_, err = fmt.Fprintf(a.stdout, "proposed skill %s (%s); it waits for a person: memminer skill approve %s\n", s.Name, a.sourceName(s.Path), s.Name)
	default:
		_, err = fmt.Fprintf(a.stdout, "%s skill %s%s\n", done, s.Name, skillAfter(done))
	}
	return err
}

func (a *app) skillProposeCmd() *cobra.Command {
	var (
		wing   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "propose NAME FILE",
		Short: "Propose a skill for a person's approval",
		Long: `Put FILE, a SKILL.md whose frontmatter names NAME and describes it, in
HIVE/skills/proposed/NAME, where it waits for "memminer skill approve NAME".
An improvement of a published skill is proposed under the same NAME. The
proposer is the agent's wing (--wing, MEMMINER_WING), else your login name.`,
		Args: exactArgs(2, "skill propose takes NAME and FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := a.configuredHive()
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("wing") {
				a.cfg.Wing = wing
			}
			data, err := hivefile.ReadLimited(args[1], skill.MaxBytes+1)
			if err != nil {
				return err
			}
			s, by, err := a.proposeSkill(h, args[0], data)
			if err != nil {
				return skillError(err)
			}
			return a.printSkillStep(asJSON, "proposed", by, s)
		},
	}
	cmd.Flags().StringVar(&wing, "wing", "", "the proposing agent's wing (env MEMMINER_WING)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the proposal as JSON")
	return cmd
}

// proposeSkill proposes SKILL.md content data as skill name in hive h,
// for the command and the MCP tool alike: the proposer is the agent's
// wing, else the person's login name, which it returns too.
func (a *app) proposeSkill(h, name string, data []byte) (skill.Skill, string, error) {
	by := a.cfg.Wing
	if by == "" {
		by = a.whoAmI()
	}
	s, err := skill.Propose(h, name, data, by)
	return s, by, err
}

func (a *app) skillDecideCmd(verb string) *cobra.Command {
	var (
		note   string
		asJSON bool
	)
	short := map[string]string{
		"approve":   "Publish a proposed skill to every connected client",
		"reject":    "Drop a proposed skill, saying why",
		"deprecate": "Withdraw a published skill; it stays in deprecated/ as history",
	}[verb]
	cmd := &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Args:  exactArgs(1, "skill "+verb+" takes the skill's NAME"),
		RunE: func(_ *cobra.Command, args []string) error {
			h, err := a.configuredHive()
			if err != nil {
				return err
			}
			name, by := args[0], a.whoAmI()
			s := skill.Skill{Name: name}
			switch verb {
			case "approve":
				s, err = skill.Approve(h, name, by)
			case "reject":
				if strings.TrimSpace(note) == "" {
					return usagef("skill reject needs --note WHY, for the proposer")
				}
				err = skill.Reject(h, name, by, note)
			case "deprecate":
				s, err = skill.Deprecate(h, name, by)
			}
			if err != nil {
				return skillError(err)
			}
			return a.printSkillStep(asJSON, strings.TrimSuffix(verb, "e")+"ed", by, s)
		},
	}
	if verb == "reject" {
		cmd.Flags().StringVar(&note, "note", "", "why, recorded in HIVE/skills/LOG.md")
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was done as JSON")
	return cmd
}

// skillAfter says what happens next to the clients, after done.
func skillAfter(done string) string {
	switch done {
	case "approved":
		return "; the daemon installs it into the connected clients (without one: memminer connect AGENT)"
	case "deprecated":
		return "; the daemon takes it out of the connected clients (without one: memminer connect AGENT)"
	}
	return ""
}

func (a *app) skillListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the hive's skills: proposed, published, deprecated",
		Args:  exactArgs(0, "skill list takes no arguments"),
		RunE:  func(*cobra.Command, []string) error { return a.skillList(asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the skills as JSON")
	return cmd
}

// skillListJSON is skill list --json.
type skillListJSON struct {
	Skills   []skill.Skill `json:"skills"`
	Problems []string      `json:"problems"`
}

func (a *app) skillList(asJSON bool) error {
	h, err := a.configuredHive()
	if err != nil {
		return err
	}
	skills, problems, err := skill.List(h)
	if err != nil {
		return err
	}
	out := skillListJSON{Skills: skills, Problems: []string{}}
	for _, p := range problems {
		out.Problems = append(out.Problems, p.Error())
	}
	if asJSON {
		return writeJSON(a.stdout, out)
	}
	printSkills(a.stdout, out)
	return nil
}

func printSkills(w io.Writer, out skillListJSON) {
	if len(out.Skills) == 0 {
		fmt.Fprintln(w, "no skills yet; an agent proposes one: memminer skill propose NAME FILE")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range out.Skills {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.State, quote.Line(s.Name), quote.Line(s.Description))
	}
	tw.Flush()
	for _, p := range out.Problems {
		fmt.Fprintf(w, "problem: %s\n", quote.Line(p))
	}
}

// skillError adds the CLI's advice to a skill's refusal.
func skillError(err error) error {
	switch {
	case errors.Is(err, skill.ErrBadSkill):
		return usagef("%v (the format: docs/skills.md)", err)
	case errors.Is(err, skill.ErrNoSkill), errors.Is(err, skill.ErrExists):
		return usagef("%v", err)
	case errors.Is(err, skill.ErrSecret):
		return secretError(err, "")
	}
	return err
}

// proposedSkills are the hive's skills waiting for approval, which the
// inbox lists beside its notes; none without a hive.
func (a *app) proposedSkills() []skill.Skill {
	out := []skill.Skill{}
	if a.cfg.Hive == "" {
		return out
	}
	all, _, err := skill.List(a.cfg.Hive)
	if err != nil {
		fmt.Fprintf(a.stderr, "memminer: warning: could not list the proposed skills: %v\n", err)
	}
	for _, s := range all {
		if s.State == skill.Proposed {
			out = append(out, s)
		}
	}
	return out
}

// printProposedSkills prints the skills waiting for approval.
func printProposedSkills(w io.Writer, skills []skill.Skill) {
	if len(skills) == 0 {
		return
	}
	fmt.Fprintf(w, "%d %s for approval (memminer skill approve|reject NAME):\n", len(skills), plural(len(skills), "skill waits", "skills wait"))
	for _, s := range skills {
		fmt.Fprintf(w, "  %s: %s\n", quote.Line(s.Name), quote.Line(s.Description))
	}
}
