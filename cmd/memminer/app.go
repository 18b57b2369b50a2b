package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/config"
	"github.com/memminer/memminer/daemon/registry"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/hive"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
	"github.com/memminer/memminer/service/inproc"
)

// app holds what every subcommand shares: streams, environment and the
// resolved configuration.
type app struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	log            *slog.Logger

	// hiveFromDaemon is set when no hive was configured and a.cfg.Hive is
	// the one the daemon serving the palace mines (daemonHive).
	hiveFromDaemon bool
	// args is the command line, as rootFor was given it.
	args []string

	// flags that are not settings (settingFlags makes those)
	configFile string
	noDaemon   bool
	// gitCommit is run's --git-commit.
	gitCommit bool
	// runUI is run's --ui-listen when --ui is given: where the daemon serves the page;
	// empty: none.
	runUI string

	cfg config.Config
	// modelFromFlag is set when --model chose the model: advice to run
	// another command then carries it too.
	modelFromFlag bool
	// modelWithoutFlag is the model the command would use without --model
	// (config file, environment or the default).
	modelWithoutFlag string
	// modelErr says why the configured model is unavailable (set by embedder).
	modelErr string

	warnOnce sync.Once
	// registryOnce says once that the daemon registry is ignored.
	registryOnce sync.Once
	// foundNothing is set by a command that succeeded but found nothing
	// in the palace (no wings): run then names the palaces other daemons
	// serve. Errors say it with nothingFound.
	foundNothing bool
	// mineProgress, when set, hears how far a mine in this process got.
	mineProgress func(done, total int)
	// daemonSilent is set when the daemon accepted a read and did not
	// answer: the command asks it nothing more.
	daemonSilent bool

	// namesHive is the configured hive that sourceName names files by,
	// opened once.
	namesOnce sync.Once
	namesHive *hive.Hive
}

func newApp(stdout, stderr io.Writer, getenv func(string) string) *app {
	return &app{
		stdout: stdout,
		stderr: stderr,
		getenv: getenv,
		log:    slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
}

func (a *app) rootCmd() *cobra.Command { return a.rootFor(nil) }

// namedCommand is a subcommand of the root and what makes it.
type namedCommand struct {
	name string
	make func() *cobra.Command
}

// subcommands are the root's commands, by name.
func (a *app) subcommands() []namedCommand {
	return []namedCommand{
		{"init", a.initCmd}, {"mine", a.mineCmd}, {"forget", a.forgetCmd}, {"search", a.searchCmd}, {"status", a.statusCmd},
		{"doctor", a.doctorCmd}, {"wake-up", a.wakeupCmd}, {"conflicts", a.conflictsCmd}, {"mcp", a.mcpCmd},
		{"run", a.runCmd}, {"install", a.installCmd}, {"uninstall", a.uninstallCmd}, {"start", a.startCmd},
		{"stop", a.stopCmd}, {"restart", a.restartCmd}, {"service-status", a.serviceStatusCmd},
		{"model", a.modelCmd}, {"version", a.versionCmd}, {"remember", a.rememberCmd},
		{"protocol", a.protocolCmd}, {"index", a.indexCmd}, {"git", a.gitCmd}, {"show", a.showCmd},
		{"connect", a.connectCmd}, {"disconnect", a.disconnectCmd}, {"recall", a.recallCmd},
		{"handoff", a.handoffCmd}, {"inbox", a.inboxCmd}, {"pack", a.packCmd}, {"capture", a.captureCmd},
		{"skill", a.skillCmd}, {"pre-action", a.preActionCmd}, {"ui", a.uiCmd},
	}
}

// rootFor returns the root for the command line args. When args start
// with a command's name the root holds that command alone, which is all
// cobra looks at then: making the other thirty, and their flags, would be
// a tenth of a millisecond or two of every command. Any other command line
// (help, completion, flags first, an alias, a typo) gets every command.
func (a *app) rootFor(args []string) *cobra.Command {
	a.args = args
	commands := a.subcommands()
	if len(args) > 0 {
		if i := slices.IndexFunc(commands, func(c namedCommand) bool { return c.name == args[0] }); i >= 0 {
			commands = commands[i : i+1]
		}
	}
	root := &cobra.Command{
		Use:   "memminer",
		Short: "Shared semantic memory for a hive of AI agents, mined from markdown",
		Long: `memminer mines agents' markdown memory (hive/agents/<id>/memory.md) into a
palace with one wing per agent, and answers searches from it.

Markdown is the source of truth; the palace is derived and can always be
rebuilt.`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return a.resolve(cmd) },
	}
	pf := root.PersistentFlags()
	settingFlags(pf, "palace", "model")
	pf.StringVar(&a.configFile, "config", "", "config file (default $XDG_CONFIG_HOME/memminer/config.yml, optional)")
	pf.BoolVar(&a.noDaemon, "no-daemon", false, "do not ask a running daemon; open the palace directly")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err.Error()} })
	for _, c := range commands {
		root.AddCommand(c.make())
	}
	a.setVersionFlag(root)
	// Flag descriptions wrap at helpWidth, like the rest of the help.
	root.SetUsageFunc(writeUsage)
	// cobra's completion command keeps the writer it is made with.
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	requireShell(root)
	requireHelpTopic(root)
	return root
}

// helpWidth is the width help text is written and wrapped to.
const helpWidth = 80

// resolve fills a.cfg: defaults < config file < environment < cmd's
// setting flags. It is the one place flags override the rest.
func (a *app) resolve(cmd *cobra.Command) error {
	var err error
	if a.cfg, err = loadConfig(a.getenv, a.configFile); err != nil {
		return err
	}
	a.modelWithoutFlag = a.cfg.Model
	if err := applySettingFlags(&a.cfg, cmd.Flags()); err != nil {
		return err
	}
	if f := cmd.Flags().Lookup("model"); f != nil {
		a.modelFromFlag = f.Changed
	}
	if a.modelFromFlag {
		// Checked before any command looks at the palace, which may be
		// empty and end the command before a model is opened.
		if err := embed.CheckSpec(a.cfg.Model); err != nil {
			return usagef("--model: %v", err)
		}
	}
	if abs, err := filepath.Abs(a.cfg.Palace); err == nil && a.cfg.Palace != "" {
		a.cfg.Palace = abs
	}
	if err := settingAdvice(cmd, a.cfg.Validate()); err != nil {
		return err
	}
	if a.cfg.Hive == "" && cmd.Flags().Lookup("hive") != nil {
		a.cfg.Hive = a.daemonHive(cmd.Context())
		a.hiveFromDaemon = a.cfg.Hive != ""
	}
	return nil
}

// loadConfig is the settings before a command's flags: defaults < the
// config file (file, else the default one, which may be missing) <
// environment.
func loadConfig(getenv func(string) string, file string) (config.Config, error) {
	cfg := config.Default(getenv, embed.Default)
	required := file != ""
	if !required {
		file = config.DefaultFile(getenv)
	}
	if err := cfg.LoadFile(file, required); err != nil {
		return cfg, err
	}
	return cfg, cfg.ApplyEnv(getenv)
}

// daemonHive is the hive the running daemon serving the configured palace
// mines, as the registry of running daemons records it: a command that
// takes a hive and is given none uses the daemon's, as status shows it.
// Empty when no daemon serves the palace.
func (a *app) daemonHive(ctx context.Context) string {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, otherPalacesTimeout)
	defer cancel()
	recs, _ := a.runningDaemons(ctx)
	for _, r := range recs {
		if r.Hive != "" && namesOneFile(r.Palace, a.cfg.Palace) {
			return r.Hive
		}
	}
	return ""
}

// errNoHive is the usage error of a command that needs a hive and has none.
func errNoHive() error {
	return usagef("no hive: pass --hive DIR, set MEMMINER_HIVE, or put hive: in the config file")
}

// client returns a client for the daemon serving the palace, or nil with
// --no-daemon; commands reach it through service.
func (a *app) client() *daemonclient.Client {
	if a.noDaemon {
		return nil
	}
	return daemonclient.NewClient(a.cfg.Palace, daemonclient.WithAnswerTimeout(daemonAnswerTimeout), daemonclient.WithNoAnswer(a.warnNoAnswer))
}

// quietClient asks the daemon serving the palace and warns of nothing, for
// the checks a command makes beside its own request (is a daemon there,
// how far its mine got), even under --no-daemon.
func (a *app) quietClient() *daemonclient.Client {
	return daemonclient.NewClient(a.cfg.Palace, daemonclient.WithAnswerTimeout(daemonAnswerTimeout))
}

// daemonServes reports whether a daemon answers on the palace's socket,
// asking its cheap progress endpoint.
func (a *app) daemonServes(ctx context.Context) bool {
	if a.daemonSilent {
		return false // it did not answer this command once: no second wait
	}
	_, err := a.quietClient().Progress(ctx)
	return err == nil
}

// daemonAnswerTimeout is how long read requests wait for the daemon to
// start answering; a variable only so tests need not wait as long.
var daemonAnswerTimeout = daemonclient.DefaultAnswerTimeout

// warnNoAnswer says on stderr, naming the daemon's pid when the registry
// knows it, that the daemon accepted a read and did not answer, so the
// command reads the palace itself.
func (a *app) warnNoAnswer(ctx context.Context, e *api.NoAnswerError) {
	a.daemonSilent = true
	rec, ok := a.daemonRecord(ctx, e.Socket)
	switch {
	case ok && rec.Stopped:
		fmt.Fprintf(a.stderr, "memminer: warning: the daemon (pid %d) serving this palace is stopped and did not answer within %s (kill -CONT %d resumes it); reading the palace directly\n", rec.PID, e.After, rec.PID)
	case ok:
		fmt.Fprintf(a.stderr, "memminer: warning: the daemon (pid %d) serving this palace did not answer within %s (stuck?); reading the palace directly\n", rec.PID, e.After)
	default:
		fmt.Fprintf(a.stderr, "memminer: warning: the daemon on %s did not answer within %s (stopped or stuck?); reading the palace directly\n", e.Socket, e.After)
	}
}

// daemonRecord is the registry's record of the daemon listening on
// socket, if it has one.
func (a *app) daemonRecord(ctx context.Context, socket string) (registry.Record, bool) {
	ctx, cancel := context.WithTimeout(ctx, otherPalacesTimeout)
	defer cancel()
	recs, _ := a.runningDaemons(ctx)
	for _, r := range recs {
		if r.Socket == socket || namesOneFile(r.Palace, a.cfg.Palace) {
			return r, true
		}
	}
	return registry.Record{}, false
}

// modelState says whether the configured embedding model is usable.
type modelState struct {
	Spec      string
	Model     string // id of the model in use, embed.Lexical when falling back
	Available bool
	Reason    string
}

// embedder opens the configured embedding backend. When it cannot be had
// the command goes on lexically and says so once; only a spec no backend
// understands is an error.
func (a *app) embedder(ctx context.Context) (embed.Embedder, modelState, error) {
	return a.openEmbedder(ctx, false)
}

// statusEmbedder is embedder for status: it never downloads the model and
// asks the backend to embed a probe, since "available" means usable now.
// Status reports the reason itself, so nothing is printed.
func (a *app) statusEmbedder(ctx context.Context) (embed.Embedder, modelState, error) {
	return a.openEmbedder(ctx, true)
}

func (a *app) openEmbedder(ctx context.Context, probe bool) (embed.Embedder, modelState, error) {
	st := modelState{Spec: a.cfg.Model, Model: embed.Lexical, Available: true}
	if !probe {
		a.announceDownload()
	}
	e, err := embed.Open(ctx, a.cfg.Model, embed.Options{CacheDir: a.cfg.ModelCache, Getenv: a.getenv, Probe: probe})
	if errors.Is(err, embed.ErrUnknownModel) {
		return nil, st, usagef("%v", err)
	}
	if err == nil && e != nil && probe {
		err = embed.Probe(ctx, e, embed.ProbeTimeout)
	}
	if err != nil {
		st.Available, st.Reason = false, modelReason(err)
		a.modelErr = st.Reason
		if !probe {
			a.warnOnce.Do(func() {
				fmt.Fprintln(a.stderr, modelUnavailableLine(a.cfg.Model, err))
			})
		}
		return nil, st, nil
	}
	if e != nil {
		st.Model = e.Model()
	}
	return e, st, nil
}

// openPalace opens the palace in this process, for a command that reads
// it directly with or without a daemon (doctor, packs, the page's
// handoffs), as package inproc opens it: cmd never opens
// it itself (TestCommandsReachThePalaceThroughTheService).
func (a *app) openPalace(ctx context.Context, e embed.Embedder, access inproc.Access, wings []string) (*palace.Palace, error) {
	return inproc.New(a.localOptions()).Open(ctx, e, access, wings)
}

func (a *app) reportRepairs(rs []mine.Repaired) {
	for _, r := range rs {
		switch {
		case r.Err != nil:
			fmt.Fprintf(a.stderr, "memminer: wing %s is damaged (%s) and could not be rebuilt: %s\n", r.Wing, r.Cause, *r.Err)
		case r.Saved:
			fmt.Fprintf(a.stderr, "memminer: wing %s was damaged (%s); rebuilt from markdown (%d notes)\n", r.Wing, r.Cause, r.Notes)
		default:
			fmt.Fprintf(a.stderr, "memminer: wing %s was damaged (%s); rebuilt from markdown in memory (%d notes); the next mine saves it\n", r.Wing, r.Cause, r.Notes)
		}
	}
}

func (a *app) mineOptions() mine.Options {
	return mine.Options{
		Agents:           a.cfg.Agents,
		Hive:             a.cfg.Hive,
		MaxFileBytes:     a.cfg.MaxFileBytes,
		OnReembed:        a.reportReembed,
		ModelUnavailable: a.modelErr,
	}
}

func (a *app) reportReembed(wing, from, to string, n int) {
	fmt.Fprintf(a.stderr, "memminer: wing %s was embedded with %s; re-embedding its %d notes with %s\n", wing, from, n, to)
}

// sourceName names a mined file in JSON by hive.SourceName, with the
// configured hive (none when it is unset or cannot be opened).
func (a *app) sourceName(path string) string {
	return hive.SourceName(a.hive(), path)
}

// hive is the configured hive, opened once; nil when unset or when it
// cannot be opened.
func (a *app) hive() *hive.Hive {
	a.namesOnce.Do(func() {
		if a.cfg.Hive != "" {
			a.namesHive, _ = hive.Open(a.cfg.Hive, a.cfg.Agents)
		}
	})
	return a.namesHive
}

// displayPath shows path relative to the working directory when it lies
// below it, so output stays short and copy-pasteable.
func displayPath(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// exactArgs is cobra.ExactArgs with a message that says what is missing.
func exactArgs(n int, msg string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s (got %d arguments)", msg, len(args))
		}
		return nil
	}
}

// maxArgs is cobra.MaximumNArgs with a message that says what is taken.
func maxArgs(n int, msg string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) > n {
			return usagef("%s (got %d arguments)", msg, len(args))
		}
		return nil
	}
}

// normalizeWing checks a --wing value and returns the wing id it names;
// empty stays empty (every wing).
func normalizeWing(id string) (string, error) {
	if id == "" {
		return "", nil
	}
	w, err := palace.NormalizeWingID(id)
	if err != nil {
		return "", usagef("--wing: %v", err)
	}
	return w, nil
}
