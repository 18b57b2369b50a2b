package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/clients/connect"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/memory/remember"
)

// connectExe is the memminer program the installed hooks and MCP server
// run; a variable so in-process tests can name a built binary.
var connectExe = func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe)
}

// connectFlags are the flags connect and disconnect share.
type connectFlags struct {
	wing    string
	project string
	dryRun  bool
	asJSON  bool
}

func (f *connectFlags) add(cmd *cobra.Command, withWing bool) {
	fs := cmd.Flags()
	if withWing {
		fs.StringVar(&f.wing, "wing", "", "the agent's own wing (env MEMMINER_WING, config wing:)")
		settingFlags(fs, "hive")
	}
	fs.StringVar(&f.project, "project", "", "edit this project directory's files instead of the user's")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the diff of every file it would change; write nothing")
	fs.BoolVar(&f.asJSON, "json", false, "print what was done as JSON")
}

func (a *app) connectCmd() *cobra.Command {
	var f connectFlags
	cmd := &cobra.Command{
		Use:   "connect AGENT",
		Short: "Give an agent client its memory: hooks, MCP server, protocol",
		Long: `Wire memminer into an agent client's own files, so that every session of the
agent starts with its wake-up digest and every prompt brings the notes
relevant to it. AGENT is one of ` + strings.Join(connect.AgentIDs(), ", ") + `.
It installs, as far as the client offers each (docs/connect.md):

  - a session-start hook: memminer wake-up --hook AGENT for the wing;
  - a prompt hook: memminer recall --hook AGENT, the notes relevant to the
    prompt (nothing when nothing is);
  - a pre-tool hook: memminer pre-action --hook AGENT, which logs a
    high-risk shell command before it runs (docs/pre-action.md);
  - capture hooks: memminer capture --hook AGENT, at compaction and the
    session's end, and the ask to record at a turn's end (docs/capture.md);
  - the MCP server: memminer mcp --wing ID;
  - the memory protocol (memminer protocol) in CLAUDE.md or AGENTS.md,
    between begin and end markers;
  - the hive's published skills, in the client's skills folder.

With a hive, connect claude-code (user files) also points Claude Code's own
auto memory into the hive (autoMemoryDirectory: the wing's
claude-code-memory.<machine>/), after copying what it remembered before
there (its .md files, secrets hidden as remember hides them; links out of
~/.claude and other files are listed as skipped); the originals stay, and
disconnect takes the setting out again.

OpenCode has no hooks: a plugin (plugins/memminer.js) runs the same
commands, and the protocol goes in a file its config's instructions name.

The user's files are edited unless --project DIR names a project's. --wing,
and --hive, --palace and --model when given, are written into the installed
commands. Running connect again changes nothing, or updates what it added.

Everything else in each file stays as it was: other settings, hooks and MCP
servers, their order, and comments. A file it cannot parse is refused (exit
1) and nothing is written. A backup of each changed file is kept until
memminer disconnect AGENT, which restores the files byte for byte apart from
what connect added, and deletes the files connect created.

Which files, and how each is edited: docs/connect.md.`,
		Example: `  memminer connect claude-code --wing dwight
  memminer connect codex --wing pam --dry-run
  memminer connect claude-code --wing dwight --project . --json`,
		Args: exactArgs(1, "connect needs the AGENT: "+strings.Join(connect.AgentIDs(), " or ")),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("wing") {
				a.cfg.Wing = f.wing
			}
			if a.cfg.Wing == "" {
				return usagef("connect needs the agent's wing: pass --wing ID or set MEMMINER_WING")
			}
			w, err := normalizeWing(a.cfg.Wing)
			if err != nil {
				return err
			}
			a.cfg.Wing = w
			opts, err := a.connectOptions(cmd, args[0], f)
			if err != nil {
				return err
			}
			res, err := connect.Connect(args[0], opts)
			if err != nil {
				return connectError(err)
			}
			return a.printConnect(res, f, "connected")
		},
	}
	f.add(cmd, true)
	return cmd
}

func (a *app) disconnectCmd() *cobra.Command {
	var f connectFlags
	cmd := &cobra.Command{
		Use:   "disconnect AGENT",
		Short: "Undo memminer connect: restore the agent client's files",
		Long: `Remove what memminer connect installed for AGENT (one of
` + strings.Join(connect.AgentIDs(), ", ") + `) in the user's files, or a
project's with --project DIR. A file nobody changed since connect is
restored from its backup byte for byte, or deleted when connect created it;
a file changed since (clients rewrite their own state) keeps the changes and
loses only memminer's entries. The backups go last.

Details: docs/connect.md.`,
		Example: `  memminer disconnect claude-code
  memminer disconnect codex --project . --dry-run`,
		Args: exactArgs(1, "disconnect needs the AGENT: "+strings.Join(connect.AgentIDs(), " or ")),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := a.connectOptions(cmd, args[0], f)
			if err != nil {
				return err
			}
			res, err := connect.Disconnect(args[0], opts)
			if err != nil {
				return connectError(err)
			}
			return a.printConnect(res, f, "disconnected")
		},
	}
	f.add(cmd, false)
	return cmd
}

// connectOptions are the options of connect and disconnect: the scope from
// the environment and --project, what the installed commands run.
func (a *app) connectOptions(cmd *cobra.Command, agent string, f connectFlags) (connect.Options, error) {
	if _, ok := connect.Lookup(agent); !ok {
		return connect.Options{}, usagef("unknown agent %q (want: %s)", agent, strings.Join(connect.AgentIDs(), ", "))
	}
	home := a.home()
	if home == "" {
		return connect.Options{}, errors.New("no home directory: set HOME")
	}
	scope := connect.Scope{Home: home, ClaudeConfigDir: a.getenv("CLAUDE_CONFIG_DIR"), CodexHome: a.getenv("CODEX_HOME"),
		ConfigHome: a.getenv("XDG_CONFIG_HOME"), GeminiCLIHome: a.getenv("GEMINI_CLI_HOME")}
	if f.project != "" {
		dir, err := filepath.Abs(f.project)
		if err != nil {
			return connect.Options{}, err
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return connect.Options{}, usagef("--project %s: not a directory", f.project)
		}
		scope.Project = dir
	}
	opts := connect.Options{Scope: scope, Wing: a.cfg.Wing, StateDir: connect.StateDir(a.getenv, home), DryRun: f.dryRun}
	if a.cfg.Hive != "" {
		hive, err := filepath.Abs(a.cfg.Hive)
		if err != nil {
			return opts, err
		}
		opts.Hive = hive
	}
	if cmd.Name() != "connect" {
		// Disconnect recognises memminer's memory folder by it; without
		// it (no wing), by the hive alone.
		opts.Install.MemoryDir, _ = a.clientMemoryDir(agent, scope)
		return opts, nil
	}
	exe, err := connectExe()
	if err != nil {
		return opts, fmt.Errorf("find the memminer program: %w", err)
	}
	flags, err := a.installedFlags(cmd)
	if err != nil {
		return opts, err
	}
	p, err := a.protocolParams()
	if err != nil {
		return opts, err
	}
	var b strings.Builder
	if err := writeProtocol(&b, p); err != nil {
		return opts, err
	}
	opts.Install = connect.Install{Exe: exe, Flags: flags, Protocol: b.String()}
	opts.Install.MemoryDir, err = a.clientMemoryDir(agent, scope)
	return opts, err
}

// clientMemoryDir is the folder of the hive where agent keeps its own
// memory on this machine once connected: its wing's agent directory's
// hive.ClientMemoryDirName, beside the memory file remember writes
// there. "" without a hive, or for a client that keeps none in scope.
func (a *app) clientMemoryDir(agent string, scope connect.Scope) (string, error) {
	ag, _ := connect.Lookup(agent)
	if a.cfg.Hive == "" || !ag.OwnMemory(scope) {
		return "", nil
	}
	abs, err := filepath.Abs(a.cfg.Hive)
	if err != nil {
		return "", err
	}
	rel, err := remember.FileOf(abs, a.cfg.Agents, a.cfg.Wing, a.cfg.Machine)
	if err != nil {
		return "", fmt.Errorf("the hive's folder for %s's own memory: %w", ag.Name, err)
	}
	machine, _ := hive.MachineOf(rel)
	return filepath.Join(abs, filepath.FromSlash(path.Dir(rel)), hive.ClientMemoryDirName(ag.ID, machine)), nil
}

// secretsHidden is how a copy of the client's memory says it had its
// secrets hidden: "; secrets hidden: N", or nothing.
func secretsHidden(c connect.Copy) string {
	if c.SecretsHidden == 0 {
		return ""
	}
	return fmt.Sprintf("; secrets hidden: %d", c.SecretsHidden)
}

// home is the user's home directory, from HOME as the clients read it.
func (a *app) home() string {
	if h := a.getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// connectError adds what to do to connect's refusals.
func connectError(err error) error {
	switch {
	case errors.Is(err, connect.ErrUnknownAgent):
		return usagef("%v", err)
	case errors.Is(err, connect.ErrUnparsable), errors.Is(err, connect.ErrTaken):
		return fmt.Errorf("%v; nothing written", err)
	case errors.Is(err, connect.ErrNotConnected):
		return fmt.Errorf("%v: no connection recorded (memminer status lists them)", err)
	}
	return err
}

func (a *app) printConnect(res connect.Result, f connectFlags, done string) error {
	if f.asJSON {
		if res.Files == nil {
			res.Files = []connect.FileResult{}
		}
		return writeJSON(a.stdout, res)
	}
	if f.dryRun {
		for _, fr := range res.Files {
			io.WriteString(a.stdout, fr.Diff)
		}
		if m := res.Memory; m != nil {
			for _, c := range m.Imported {
				fmt.Fprintf(a.stdout, "would copy %s to %s%s\n", c.From, c.To, secretsHidden(c))
			}
			for _, sk := range m.Skipped {
				fmt.Fprintf(a.stdout, "would skip %s: %s\n", sk.From, sk.Reason)
			}
			if m.Index != "" {
				fmt.Fprintf(a.stdout, "would create %s, linking the imported projects' MEMORY.md\n", m.Index)
			}
		}
		fmt.Fprintf(a.stdout, "dry run: nothing written (%s %s, wing %s, %s files)\n", strings.TrimSuffix(done, "ed"), res.Agent, res.Wing, res.Scope)
		return nil
	}
	fmt.Fprintf(a.stdout, "%s %s (wing %s, %s files)\n", done, res.Agent, res.Wing, res.Scope)
	for _, fr := range res.Files {
		fmt.Fprintf(a.stdout, "  %-9s  %-12s  %s\n", fr.Action, fr.Role, fr.Path)
	}
	if skills := res.Skills; skills != nil {
		for _, n := range skills.Installed {
			fmt.Fprintf(a.stdout, "  %-9s  %-12s  %s\n", "installed", "skill", filepath.Join(skills.Dir, n))
		}
		for _, n := range skills.Removed {
			fmt.Fprintf(a.stdout, "  %-9s  %-12s  %s\n", "removed", "skill", filepath.Join(skills.Dir, n))
		}
		for _, n := range skills.Kept {
			fmt.Fprintf(a.stdout, "  %-9s  %-12s  %s (not memminer's: the hive's skill %s is not installed)\n", "kept", "skill", filepath.Join(skills.Dir, n), n)
		}
		for _, n := range skills.Edited {
			fmt.Fprintf(a.stdout, "  %-9s  %-12s  %s (edited here: left as it is and now yours; delete it to take the hive's %s again)\n", "kept", "skill", filepath.Join(skills.Dir, n), n)
		}
	}
	if m := res.Memory; m != nil {
		for _, c := range m.Imported {
			fmt.Fprintf(a.stdout, "  %-9s  %-12s  %s (from %s%s)\n", "imported", "memory", c.To, c.From, secretsHidden(c))
		}
		for _, sk := range m.Skipped {
			fmt.Fprintf(a.stdout, "  %-9s  %-12s  %s (%s)\n", "skipped", "memory", sk.From, sk.Reason)
		}
		if m.Index != "" {
			fmt.Fprintf(a.stdout, "  %-9s  %-12s  %s\n", "created", "memory index", m.Index)
		}
		fmt.Fprintf(a.stdout, "%s keeps its own memory in the hive: %s (%s in %s)\n", res.Agent, m.Dir, m.Setting, m.Settings)
	}
	if done == "connected" {
		fmt.Fprintf(a.stdout, "backups are kept until: memminer disconnect %s%s\n", res.Agent, projectFlag(res.Scope))
	}
	if res.Note != "" {
		fmt.Fprintf(a.stdout, "note: %s\n", res.Note)
	}
	return nil
}

func projectFlag(scope string) string {
	if scope == "user" {
		return ""
	}
	return " --project " + scope
}
