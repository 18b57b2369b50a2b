package main

import (
	"io"
	"path"
	"strings"
	"sync"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/remember"
)

func (a *app) protocolCmd() *cobra.Command {
	var (
		wing   string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "protocol",
		Short: "Print the memory protocol for an agent's CLAUDE.md or AGENTS.md",
		Long: `Print PROTOCOL.md: how an agent starts a session (wake-up), recalls
(search), writes (remember, only into its own wing), what to do on a
conflict copy, what the markers mean, and how to read memory when memminer
is not installed. Paste it into CLAUDE.md or AGENTS.md, or have the harness
inject it.

--wing fills in the agent's own wing and memory file (the hive's agent
directory for that wing); the hive and palace come from the configuration.
The output depends on nothing else, so it can be checked in. The write
protocol it describes: docs/remember.md.`,
		Example: `  memminer protocol --wing dwight >> CLAUDE.md
  MEMMINER_WING=pam memminer protocol > PROTOCOL.md`,
		Args: exactArgs(0, "protocol takes no arguments; name the agent with --wing ID"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("wing") {
				a.cfg.Wing = wing
			}
			p, err := a.protocolParams()
			if err != nil {
				return err
			}
			if asJSON {
				var b strings.Builder
				if err := writeProtocol(&b, p); err != nil {
					return err
				}
				return writeJSON(a.stdout, protocolJSON{Wing: p.Wing, Hive: p.Hive, Palace: p.Palace, File: p.File, Text: b.String()})
			}
			return writeProtocol(a.stdout, p)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the protocol and what it filled in as JSON")
	cmd.Flags().StringVar(&wing, "wing", "", "the agent's own wing, filled in (env MEMMINER_WING, config wing:)")
	settingFlags(cmd.Flags(), "hive")
	return cmd
}

// protocolParams fills in the protocol for the configured wing, hive and
// palace; an unset wing or hive stays a placeholder.
func (a *app) protocolParams() (protocolParams, error) {
	p := protocolParams{Wing: "<wing>", Hive: "<hive>", Palace: a.cfg.Palace}
	if a.cfg.Hive != "" {
		p.Hive = a.cfg.Hive
	}
	machine := a.cfg.Machine
	if machine == "" {
		machine = "<machine>"
	}
	p.File = p.Hive + "/agents/" + p.Wing + "/" + hive.MachineFileName(machine)
	if a.cfg.Wing != "" {
		w, err := normalizeWing(a.cfg.Wing)
		if err != nil {
			return p, err
		}
		p.Wing, p.WingFlag = w, " --wing "+w
		if a.cfg.Hive != "" {
			rel, err := remember.FileOf(a.cfg.Hive, a.cfg.Agents, w, a.cfg.Machine)
			if err != nil {
				return p, err
			}
			if a.cfg.Machine == "" {
				// The host name would make the text differ by
				// machine; it is checked in and shared.
				rel = path.Dir(rel) + "/" + hive.MachineFileName(machine)
			}
			p.File = strings.TrimSuffix(a.cfg.Hive, "/") + "/" + rel
		} else {
			p.File = "<hive>/agents/" + w + "/" + hive.MachineFileName(machine)
		}
	}
	return p, nil
}

// protocolJSON is protocol --json: the text and what it filled in
// (placeholders such as <wing> where nothing was configured).
type protocolJSON struct {
	Wing   string `json:"wing"`
	Hive   string `json:"hive"`
	Palace string `json:"palace"`
	File   string `json:"file"`
	Text   string `json:"text"`
}

// protocolParams are what the protocol text fills in.
type protocolParams struct {
	Wing     string // the wing, or <wing>
	WingFlag string // " --wing ID", or "" when MEMMINER_WING is to be set
	Hive     string
	Palace   string
	File     string // the agent's memory file
}

func writeProtocol(w io.Writer, p protocolParams) error {
	return protocolTemplate().Execute(w, p)
}

// protocolTemplate is parsed on first use, not by every command at start-up.
var protocolTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("protocol").Parse(protocolText))
})

// protocolText is PROTOCOL.md. Keep it under 400 words (TestProtocol).
const protocolText = `# Memory protocol

You share one memory with the other agents of this hive, kept by memminer.
Markdown files are the source of truth; memminer mines them into a searchable
palace. Your wing: ` + "`{{.Wing}}`" + `. Your memory file: ` + "`{{.File}}`" + `.
Hive: ` + "`{{.Hive}}`" + `. Palace: ` + "`{{.Palace}}`" + `.{{if not .WingFlag}}
Set MEMMINER_WING to your wing, or pass --wing.{{end}}

## Start every session
Run ` + "`memminer wake-up{{.WingFlag}}`" + `: who is who, and the notes that matter now.
"Memory may be behind" there: tell the user.

## Recall
- ` + "`memminer search \"QUERY\"`" + ` searches every wing; ` + "`--wing ID`" + ` one; ` + "`--json`" + ` gives ids, files and lines.
- ` + "`no matching notes`" + ` (exit 1) means memory holds nothing relevant: say so, do not guess.
- A result marked stale may be out of date: check it first.

## Write
- ` + "`memminer remember{{.WingFlag}} \"FACT\"`" + ` appends one dated note to your own file; it is searchable at once. ` + "`--heading SECTION`" + ` files it under a section, ` + "`--tag T`" + ` adds #T.
- Write only into your own wing. Your file is memminer's (it appends anytime): no editor.
- One small, durable fact per note: decisions, preferences, how things work. No transcripts, no secrets.
- A fact changed? ` + "`memminer remember{{.WingFlag}} --supersedes REF \"NEW FACT\"`" + ` (REF: a note id from ` + "`search --json`" + `, or ` + "`FILE:LINE`" + `). Do not edit or delete old notes: they stay as history.
- ` + "`already remembered`" + `: it is there. ` + "`similar to note ID`" + `: written; to replace that, repeat with ` + "`--supersedes ID`" + `.
- Read, think, then write: pass ` + "`--expect-hash HASH`" + ` (from ` + "`remember --json`" + ` or ` + "`index --json`" + `); exit 4 means the file changed, so read it again.

## Conflicts
Exit 3 from remember means a Syncthing conflict copy (` + "`*.sync-conflict-*`" + `) of your files exists. Stop writing and tell the user: ` + "`memminer conflicts{{.WingFlag}}`" + ` lists it, ` + "`memminer conflicts merge`" + ` merges it. Use ` + "`--force`" + ` only when the user says so.

## Markers
- ` + "`pinned`" + `, ` + "`important`" + `, ` + "`Decision:`" + ` or a Decisions heading: weigh these first.
- ` + "`status: approved`" + `: confirmed; it wins over unmarked notes.
- ` + "`(superseded DATE)`" + `, ` + "`status: superseded`" + `: history; do not act on it.
- ` + "`review: YYYY-MM-DD`" + ` past, or stale: check the fact before you rely on it.

## Without memminer
If the ` + "`memminer`" + ` command is missing, read ` + "`{{.Hive}}/INDEX.md`" + ` (only there once ` + "`memminer index --write`" + ` or ` + "`memminer run --index`" + ` wrote it; otherwise list ` + "`{{.Hive}}/agents/`" + `), then your memory files. Append ` + "`- FACT (added YYYY-MM-DD)`" + ` by hand at the end of yours, never rewrite a line, and write nothing while a ` + "`.sync-conflict-`" + ` copy of it exists.
`
