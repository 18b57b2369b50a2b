package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/clients/connect"
	"github.com/memminer/memminer/clients/preaction"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/internal/atomicfile"
	"github.com/memminer/memminer/internal/hivefile"
	"github.com/memminer/memminer/internal/quote"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/recall/pack"
)

func (a *app) preActionCmd() *cobra.Command {
	var (
		hook, wing, since string
		asJSON            bool
		preErr            error
	)
	cmd := &cobra.Command{
		Use:   "pre-action",
		Short: "List the high-risk commands agents ran, logged before they ran",
		Long: `List the pre-action log: the high-risk shell commands (rm -rf, git push
--force, DROP TABLE, terraform apply, … the pre_action setting) agents were
about to run, with when, the wing, the session and the working directory,
newest last. Each agent's log is HIVE/agents/<wing>/pre-action-log.<machine>.md,
mined as its history (searchable, never in wake-up's story).

With --hook AGENT it is that client's PreToolUse hook, as memminer connect
installs it: it logs a matching command and never blocks it, unless
pre_action_block is true, when it asks the client to have the user confirm.
Harmless commands are not logged. Any error prints nothing and exits 0.

It is traceability, not rollback: docs/pre-action.md.`,
		Example: `  memminer pre-action
  memminer pre-action --wing dwight --since 7d --json`,
		Args: exactArgs(0, "pre-action takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if hook != "" {
				if wing != "" {
					a.cfg.Wing = wing
				}
				return a.runHook(cmd, "pre-action", hook, preErr, func(_ context.Context, in hookInput) (string, error) {
					return a.preActionHook(hook, in)
				})
			}
			if preErr != nil {
				return preErr
			}
			return a.preActionList(wing, since, asJSON)
		},
	}
	f := cmd.Flags()
	a.hookable(cmd, &hook, &preErr)
	f.StringVar(&wing, "wing", "", "only this wing's log (with --hook: the agent's wing)")
	f.StringVar(&since, "since", "", "only entries on or after this: 7d, 2w, 36h or YYYY-MM-DD")
	f.BoolVar(&asJSON, "json", false, "print the entries as JSON")
	settingFlags(f, "hive")
	return cmd
}

// preActionHook logs in.ToolInput's command when it is high-risk, and with
// pre_action_block asks the client to confirm it.
func (a *app) preActionHook(agent string, in hookInput) (string, error) {
	command := strings.TrimSpace(string(in.ToolInput.Command))
	if command == "" {
		return "", nil
	}
	patterns, err := preaction.Compile(a.cfg.PreAction)
	if err != nil {
		return "", err
	}
	matched, ok := preaction.Match(command, patterns)
	if !ok {
		return "", nil
	}
	path, err := a.preActionFile()
	if err != nil {
		return "", err
	}
	e := preaction.Entry{Time: time.Now(), Wing: a.cfg.Wing, Session: in.SessionID, Cwd: in.Cwd, Command: command, Matched: matched,
		Pack: a.lastPack(a.cfg.Wing), Notes: a.recalled(agent, in.SessionID)}
	if err := preaction.Append(path, e); err != nil {
		return "", err
	}
	if !a.cfg.PreActionBlock {
		return "", nil
	}
	ag, _ := connect.Lookup(agent)
	out, err := json.Marshal(ag.AskJSON("memminer: a high-risk command (" + matched + "), logged in " + filepath.Base(path) + "; confirm to run it"))
	return string(out) + "\n", err
}

// preActionFile is the agent's own pre-action log on this machine.
func (a *app) preActionFile() (string, error) {
	if a.cfg.Hive == "" || a.cfg.Wing == "" {
		return "", fmt.Errorf("the pre-action hook needs the hive and the agent's wing (--hive, --wing, as connect installs it)")
	}
	w, err := normalizeWing(a.cfg.Wing)
	if err != nil {
		return "", err
	}
	a.cfg.Wing = w
	h, err := hive.Open(a.cfg.Hive, a.cfg.Agents)
	if err != nil {
		return "", err
	}
	ag, err := h.WingDir(w)
	if err != nil {
		return "", err
	}
	machine := a.cfg.Machine
	if machine == "" {
		machine = hive.DefaultMachine()
	}
	return filepath.Join(ag.Root(), preaction.FileName(machine)), nil
}

// preActionJSON is pre-action --json.
type preActionJSON struct {
	Entries []preaction.Entry `json:"entries"`
}

func (a *app) preActionList(wing, since string, asJSON bool) error {
	entries, problems, err := a.preActionEntries(wing, since)
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintf(a.stderr, "memminer: warning: %s\n", p)
	}
	out := preActionJSON{Entries: entries}
	if asJSON {
		return writeJSON(a.stdout, out)
	}
	printPreAction(a.stdout, out.Entries)
	return nil
}

// preActionEntries are the pre-action log's entries of wing (every wing's
// when empty) on or after since (ParseSince's; any time when empty),
// oldest first, each file named as output names it; problems are the logs
// that could not be read.
func (a *app) preActionEntries(wing, since string) (entries []preaction.Entry, problems []string, err error) {
	if _, err := a.configuredHive(); err != nil {
		return nil, nil, err
	}
	var from time.Time
	if since != "" {
		t, err := govern.ParseSince(since, time.Now())
		if err != nil {
			return nil, nil, usagef("--since: %v", err)
		}
		from = t
	}
	w, err := normalizeWing(wing)
	if err != nil {
		return nil, nil, err
	}
	h, err := hive.Open(a.cfg.Hive, a.cfg.Agents)
	if err != nil {
		return nil, nil, err
	}
	agents, _, err := h.Agents()
	if err != nil {
		return nil, nil, err
	}
	entries = []preaction.Entry{}
	for _, ag := range agents {
		if w != "" && ag.Wing != w {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(ag.Root(), preaction.FilePrefix+"*.md"))
		for _, f := range files {
			data, err := hivefile.ReadLimited(f, 16<<20)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", f, err))
				continue
			}
			for _, e := range preaction.Parse(data) {
				if !from.IsZero() && e.Time.Before(from) {
					continue
				}
				e = e.Masked()
				e.File = a.sourceName(f)
				entries = append(entries, e)
			}
		}
	}
	slices.SortStableFunc(entries, func(x, y preaction.Entry) int { return x.Time.Compare(y.Time) })
	return entries, problems, nil
}

func printPreAction(w io.Writer, entries []preaction.Entry) {
	if len(entries) == 0 {
		fmt.Fprintln(w, "no high-risk commands logged")
	}
	for _, e := range entries {
		fmt.Fprintf(w, "%s [%s] %s\n  in %s, session %s (%s)\n", e.Time.UTC().Format(time.RFC3339), quote.Line(e.Wing), quote.Line(e.Command),
			quote.Line(e.Cwd), quote.Line(e.Session), quote.Line(e.File))
	}
}

// recalledFile is where the prompt hook records the notes it gave agent's
// session, for the pre-action log: one small file per session in the
// state directory, named by a hash (a session id is the client's text).
func (a *app) recalledFile(agent, session string) string {
	sum := sha256.Sum256([]byte(agent + "\x00" + session))
	return filepath.Join(filepath.Dir(connect.StateDir(a.getenv, a.home())), "pre-action", "recalled", hex.EncodeToString(sum[:16])+".json")
}

// recalledMaxAge is how long the notes given to a session are kept.
const recalledMaxAge = 30 * 24 * time.Hour

// recordRecalled records the notes the prompt hook gave the session,
// replacing the previous prompt's; a failure costs only the log's notes.
func (a *app) recordRecalled(agent, session string, notes []string) {
	if session == "" {
		return
	}
	path := a.recalledFile(agent, session)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	// A session's record outlives it by recalledMaxAge at most.
	if entries, err := os.ReadDir(dir); err == nil {
		for _, e := range entries {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > recalledMaxAge {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
	data, _ := json.Marshal(notes)
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		fmt.Fprintf(a.stderr, "memminer: warning: could not record the notes given for the pre-action log: %v\n", err)
	}
}

// recalled are the notes the prompt hook last gave the session.
func (a *app) recalled(agent, session string) []string {
	if session == "" {
		return nil
	}
	data, err := os.ReadFile(a.recalledFile(agent, session))
	if err != nil {
		return nil
	}
	var notes []string
	json.Unmarshal(data, &notes)
	return notes
}

// lastPack is the Context Pack wing rendered last (its marks log), "" when
// none.
func (a *app) lastPack(wing string) string {
	names, err := pack.Names(a.cfg.Hive)
	if err != nil {
		return ""
	}
	var last string
	var at time.Time
	for _, n := range names {
		marks, err := pack.Marks(a.cfg.Hive, n)
		if err != nil {
			continue
		}
		for _, m := range marks {
			if m.Kind == pack.Used && m.By == wing && m.Time.After(at) {
				last, at = n, m.Time
			}
		}
	}
	return last
}
