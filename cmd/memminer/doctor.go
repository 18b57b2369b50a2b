package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/inproc"
)

// The states of a doctor check; the JSON keys and values are stable.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "fail"
)

// check is one thing doctor looked at.
type check struct {
	Name  string `json:"name"`
	State string `json:"state"`
	// Detail says what was found.
	Detail string `json:"detail"`
	// Fix is the command (or step) that mends it; "" when nothing needs mending.
	Fix string `json:"fix,omitempty"`
}

// doctorReport is what memminer doctor prints.
type doctorReport struct {
	OK     bool    `json:"ok"`
	Checks []check `json:"checks"`
}

func (a *app) doctorCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the palace against the markdown, the model and the daemon",
		Long: `Check that everything memminer relies on is in order, and say what to run
for each problem: the hive and its agents, the palace against the markdown
(every file mined and current, no wing without its agent, every wing file's
checksum), the model, the daemon, Syncthing, the agents memminer connect
wired in (their files are there, and their hooks and MCP server, run with
the flags connect wrote and none of your MEMMINER_ variables, find the hive
and this palace), and the permissions of the palace and the memory files.

doctor changes nothing (a damaged wing is reported, not rebuilt). It exits 1
when a check failed; warnings alone exit 0.`,
		Example: `  memminer doctor
  memminer doctor --json`,
		Args: exactArgs(0, "doctor takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			r := a.doctor(cmd)
			if asJSON {
				if err := writeJSON(a.stdout, r); err != nil {
					return err
				}
			} else {
				printDoctor(a.stdout, r)
			}
			if !r.OK {
				return &codeError{code: exitError}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the checks as JSON")
	settingFlags(cmd.Flags(), "hive")
	return cmd
}

// doctor runs every check.
func (a *app) doctor(cmd *cobra.Command) doctorReport {
	ctx := cmd.Context()
	var checks []check
	add := func(c ...check) { checks = append(checks, c...) }

	agents, hc := a.checkHive()
	add(hc)
	add(a.checkPalace(ctx, agents)...)
	add(a.checkModel(cmd))
	add(a.checkDaemon(ctx))
	add(a.checkSyncthing(ctx))
	add(a.checkConnected(agents))
	add(a.checkPermissions(agents)...)

	r := doctorReport{OK: true, Checks: checks}
	for _, c := range checks {
		if c.State == checkFail {
			r.OK = false
		}
	}
	return r
}

func (a *app) checkHive() ([]hive.Agent, check) {
	c := check{Name: "hive"}
	if a.cfg.Hive == "" {
		c.State, c.Detail = checkWarn, "no hive configured: the palace is checked without its markdown"
		c.Fix = "pass --hive DIR, set MEMMINER_HIVE, put hive: in the config file (memminer init DIR does), or start the daemon with memminer run --hive DIR"
		return nil, c
	}
	h, err := hive.Open(a.cfg.Hive, a.cfg.Agents)
	if err != nil {
		c.State, c.Detail, c.Fix = checkFail, err.Error(), "check --hive (memminer settings shows where it comes from)"
		return nil, c
	}
	agents, skipped, err := h.Agents()
	if err != nil {
		c.State, c.Detail, c.Fix = checkFail, err.Error(), "check that the hive is readable"
		return nil, c
	}
	c.State, c.Detail = checkOK, fmt.Sprintf("%s: %d %s", displayPath(h.Dir()), len(agents), plural(len(agents), "agent", "agents"))
	if len(agents) == 0 {
		c.State, c.Fix = checkWarn, "create agents/<id>/memory.md for each agent"
	}
	if len(skipped) > 0 {
		c.State = checkWarn
		c.Detail += fmt.Sprintf("; %d %s skipped (memminer status lists why)", len(skipped), plural(len(skipped), "directory", "directories"))
	}
	return agents, c
}

// checkPalace opens the palace as it is, without repairing it, and
// compares it with the hive's markdown by mine's own rule (mine.Changed).
func (a *app) checkPalace(ctx context.Context, agents []hive.Agent) []check {
	c := check{Name: "palace"}
	if !palace.HasWings(a.cfg.Palace) {
		c.State, c.Detail = checkWarn, fmt.Sprintf("%s has no wings yet", a.cfg.Palace)
		c.Fix = "memminer mine " + a.hiveArg()
		return []check{c}
	}
	p, err := a.openPalace(ctx, nil, inproc.AsIs, nil)
	if err != nil {
		c.State, c.Detail, c.Fix = checkFail, err.Error(), "memminer mine "+a.hiveArg()+" rebuilds it from the markdown"
		return []check{c}
	}
	defer p.Close()
	notes := 0
	for _, w := range p.Wings() {
		notes += w.Notes
	}
	c.State, c.Detail = checkOK, fmt.Sprintf("%s: %d wings, %d notes, every wing file's checksum good", a.cfg.Palace, len(p.Wings()), notes)
	if d := p.Damaged(); len(d) > 0 {
		var names []string
		for _, w := range d {
			names = append(names, fmt.Sprintf("%s (%v)", w.Wing, w.Err))
		}
		c.State, c.Detail = checkFail, "damaged wings: "+strings.Join(names, ", ")
		c.Fix = "memminer mine " + a.hiveArg() + " rebuilds them from the markdown"
	}
	out := []check{c}
	if agents == nil {
		return out
	}

	m := check{Name: "markdown", State: checkOK}
	var behind []string
	mined := map[string]bool{}
	damaged := map[string]bool{}
	for _, d := range p.Damaged() {
		damaged[d.Wing] = true
	}
	for _, ag := range agents {
		mined[ag.Wing] = true
		if damaged[ag.Wing] {
			continue // reported above; its sources are not read
		}
		ch := mine.Changed(p, ag.Wing, ag.Root())
		for _, f := range ch.Changed {
			behind = append(behind, a.sourceName(f.Path))
		}
		for _, g := range ch.Gone {
			behind = append(behind, a.sourceName(g)+" (gone)")
		}
	}
	if len(behind) > 0 {
		m.State = checkFail
		m.Detail = fmt.Sprintf("%d %s changed since mined: %s", len(behind), plural(len(behind), "file", "files"), strings.Join(behind, ", "))
		m.Fix = "memminer mine " + a.hiveArg() + " (a running daemon does it within seconds)"
	} else {
		m.Detail = "every memory file is mined and current"
	}
	out = append(out, m)

	out = append(out, checkSecrets(p, a.sourceName))

	var stray []string
	for _, w := range p.Wings() {
		if !mined[w.ID] {
			stray = append(stray, w.ID)
		}
	}
	if len(stray) > 0 {
		out = append(out, check{Name: "wings", State: checkWarn,
			Detail: fmt.Sprintf("%d %s mined from no agent directory of the hive: %s", len(stray), plural(len(stray), "wing", "wings"), strings.Join(stray, ", ")),
			Fix:    "keep them, or memminer forget --wing ID"})
	}
	return out
}

// checkSecrets names each memory file and line holding a secret, which
// the palace holds hidden (inproc.HiddenSecrets), and its kind.
func checkSecrets(p *palace.Palace, name func(string) string) check {
	c := check{Name: "secrets", State: checkOK, Detail: "no memory file holds a secret"}
	found := inproc.HiddenSecrets(p)
	if len(found) == 0 {
		return c
	}
	where := make([]string, len(found))
	for i, s := range found {
		where[i] = fmt.Sprintf("%s:%d (%s)", name(s.Path), s.Line, s.Kind)
	}
	c.State = checkWarn
	c.Detail = fmt.Sprintf("%d %s in memory files, hidden from every output but copied to every machine of the hive: %s",
		len(found), plural(len(found), "secret", "secrets"), strings.Join(where, ", "))
	c.Fix = "remove each from its file (store where it lives, not what it is), and rotate it: it has been replicated"
	return c
}

func (a *app) checkModel(cmd *cobra.Command) check {
	c := check{Name: "model"}
	r, err := a.modelCheck(cmd, false)
	switch {
	case err != nil:
		c.State, c.Detail, c.Fix = checkFail, err.Error(), "check --model"
	case r.Model == embed.Lexical:
		c.State, c.Detail = checkOK, "lexical: no vectors, search is BM25 alone"
	case r.OK:
		c.State, c.Detail = checkOK, r.Model
		if r.BuiltIn {
			c.Detail += fmt.Sprintf(" (built-in, checksum %s)", r.Checksum)
		}
	default:
		c.State, c.Detail = checkFail, r.Model
		if r.Error != nil {
			c.Detail += ": " + *r.Error
		}
		c.Fix = "memminer model fetch"
		if !r.BuiltIn {
			c.Fix = "start the model's server, or pass --model"
		}
	}
	return c
}

func (a *app) checkDaemon(ctx context.Context) check {
	c := check{Name: "daemon", State: checkOK}
	_, err := a.quietClient().Progress(ctx)
	switch {
	case err == nil:
		c.Detail = "a daemon serves this palace"
	case errors.Is(err, api.ErrNotRunning):
		c.Detail = "no daemon serves this palace: commands read it directly, and nothing re-mines on its own"
		c.Fix = "memminer run --hive " + a.hiveArg() + " (or memminer install)"
		c.State = checkWarn
	default:
		c.State, c.Detail = checkFail, "the daemon does not answer: "+err.Error()
		c.Fix = "memminer stop, then start it again"
	}
	return c
}

func (a *app) checkSyncthing(ctx context.Context) check {
	c := check{Name: "syncthing", State: checkOK}
	client, s, err := a.syncthingClient(nil)
	if err != nil {
		c.State, c.Detail, c.Fix = checkFail, err.Error(), "check the syncthing settings (memminer settings)"
		return c
	}
	if client == nil {
		c.Detail = "not used: " + s.Off
		return c
	}
	r := daemon.HiveReplication(ctx, client, a.cfg.Hive)
	if r.Error != nil {
		c.State, c.Detail, c.Fix = checkWarn, *r.Error, "start Syncthing, or set syncthing: off"
		return c
	}
	c.Detail = fmt.Sprintf("folder %s %s", r.Folder, r.State)
	return c
}

// checkConnected checks the agents memminer connect wired in: each one's
// wing has an agent directory in the hive and its files are still there.
func (a *app) checkConnected(agents []hive.Agent) check {
	c := check{Name: "agents", State: checkOK}
	conns := a.connectedAgents()
	if len(conns) == 0 {
		c.Detail = "none connected " + connectHint()
		return c
	}
	wings := map[string]bool{}
	for _, ag := range agents {
		wings[ag.Wing] = true
	}
	var problems, names []string
	for _, conn := range conns {
		names = append(names, conn.Agent+" ("+conn.Wing+")")
		if agents != nil && !wings[conn.Wing] {
			problems = append(problems, fmt.Sprintf("%s's wing %s has no agent directory in the hive", conn.Agent, conn.Wing))
		}
		for _, f := range conn.Files {
			if _, err := os.Stat(f); err != nil {
				problems = append(problems, fmt.Sprintf("%s's %s: %v", conn.Agent, f, err))
			}
		}
		problems = append(problems, a.installedProblems(conn)...)
	}
	c.Detail = fmt.Sprintf("%d connected: %s", len(conns), strings.Join(names, ", "))
	if len(problems) > 0 {
		c.State, c.Detail = checkWarn, c.Detail+"; "+strings.Join(problems, "; ")
		c.Fix = "memminer connect AGENT --wing ID again (with --hive DIR when none is configured), or memminer disconnect AGENT"
	}
	return c
}

// checkPermissions checks that the palace is not writable by others, and
// that the memory files can be written by the agents' user.
func (a *app) checkPermissions(agents []hive.Agent) []check {
	c := check{Name: "permissions", State: checkOK}
	var problems []string
	if fi, err := os.Stat(a.cfg.Palace); err == nil {
		if fi.Mode().Perm()&0o022 != 0 {
			problems = append(problems, fmt.Sprintf("the palace %s is writable by others (%v)", a.cfg.Palace, fi.Mode().Perm()))
		}
	}
	for _, ag := range agents {
		files, _ := mine.ListFiles(ag.Root())
		for _, f := range files {
			if !hive.IsMainMemoryFile(f.Path) {
				continue
			}
			if err := writable(f.Path); err != nil {
				problems = append(problems, fmt.Sprintf("%s cannot be written: %v", a.sourceName(f.Path), err))
			}
		}
	}
	if len(problems) > 0 {
		c.State, c.Detail = checkFail, strings.Join(problems, "; ")
		c.Fix = "chmod go-w the palace, and give the agents' user write access to their memory files"
		return []check{c}
	}
	c.Detail = "the palace is not writable by others; every memory.md is writable"
	return []check{c}
}

// writable reports whether this process may open path for writing,
// without writing anything.
func writable(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fs.ErrPermission
		}
		return err
	}
	return f.Close()
}

// hiveArg is the hive as a command argument.
func (a *app) hiveArg() string {
	if a.cfg.Hive == "" {
		return "HIVE"
	}
	return shellQuote(displayPath(a.cfg.Hive))
}

func printDoctor(w io.Writer, r doctorReport) {
	for _, c := range r.Checks {
		fmt.Fprintf(w, "%-5s %-12s %s\n", c.State, c.Name, c.Detail)
		if c.Fix != "" {
			fmt.Fprintf(w, "      %-12s → %s\n", "", c.Fix)
		}
	}
	warnings := 0
	for _, c := range r.Checks {
		if c.State == checkWarn {
			warnings++
		}
	}
	switch {
	case r.OK && warnings > 0:
		fmt.Fprintf(w, "no problems found; %d %s\n", warnings, plural(warnings, "warning", "warnings"))
	case r.OK:
		fmt.Fprintln(w, "no problems found")
	default:
		fmt.Fprintln(w, "problems found: run the commands after → above")
	}
}
