package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/daemon/registry"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/internal/listenaddr"
)

func (a *app) runCmd() *cobra.Command {
	var (
		noWatch            bool
		metricsAllowRemote bool
		ui                 bool
		uiListen           string
	)
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the memminer service in the foreground",
		Long: `Run the memminer service in the foreground: mine the hive's agents/<id>/
directories (and those the agents globs match) into one wing each, keep
mining them as they change, and serve search, status, mine and wake-up
requests on the control socket (<palace>/memminer.sock, mode 0600). Other
memminer commands use the socket when the service is up, so they load
neither the model nor the palace.

Changes are found by fsnotify (debounced, about a second) and by the mine
loop, which every mine_interval re-mines the files whose mtime or size
changed. A new agent directory becomes a wing without a restart; a removed
one's wing is kept and shown as orphaned in status. The agents setting
(config agents:, env MEMMINER_AGENTS) adds globs of more agent
directories, such as bots/*; which matched directories are agents is in
docs/mining.md ("Agent directories"). A directory that is no agent (its
name is no wing id, its wing id is taken, ...) is skipped, logged once
and listed under errors in status until it is fixed.

--hive is the directory that holds agents/, not agents/ itself: a hive
without agents/ that looks like an agents directory (its subdirectories
hold memory.md) or like an agent directory (it holds memory.md) is refused
with the directory you probably meant. An empty hive, or one holding
other files only, is watched: the service starts, warns, and lists the
missing agents/ under errors in status until it appears.

When the embedding model is unavailable the service runs lexically. Once
it starts with the model again, it re-embeds every wing embedded with
another model (one mined lexically meanwhile, say) before searches need
it; a lexical service re-embeds nothing, so wings keep their vectors.

Only one service serves a palace: when another already answers on the
palace's socket, run fails at once, naming its pid.

SIGINT or SIGTERM stops the service within seconds with exit status 0; the
palace on disk is always a complete state. SIGHUP reloads the configuration
(config file, hive, agents globs, model, ...; flags and the environment stay
as given): the service stops as for SIGTERM and starts again in the same
process with the new settings, or with the old ones when the new do not
load. Logs go to stderr. This is the command installed services run (see
memminer install); in a container, make it the container's command.

With --git-commit the hive must lie in a Git work tree: every change the
service writes to a memory file (remember, a conflict merge, and any other
write memminer makes) is committed at once, that file alone, with the wing
as the author and a one-line message ("remember: <first words>"). Files
memminer did not write are never committed, and memminer never pushes or
pulls: docs/several-machines.md.

With --ui the service also serves the page of memminer ui (docs/ui.md), on
--ui-listen: the log says at which address; open it with ?token= and the
token memminer mcp token prints.

Watching, the mine loop, metrics and logging: docs/daemon.md; every
setting: docs/configuration.md.`,
		Example: `  memminer run --hive ~/hive
  memminer run --hive /srv/hive --metrics-addr 127.0.0.1:9464 --log-format json`,
		Args: exactArgs(0, "run takes no arguments; give the hive with --hive DIR"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("ui-listen") && !ui {
				return usagef("--ui-listen goes with --ui")
			}
			if ui {
				a.runUI = uiListen
			}
			return a.runUntilStopped(cmd, noWatch, metricsAllowRemote)
		},
	}
	f := cmd.Flags()
	settingFlags(f, "hive", "mine_interval", "metrics_addr", "metrics_token", "log_format", "log_level",
		"syncthing", "syncthing_url", "syncthing_api_key", "on_conflict", "conflict_webhook", "auto_merge", "index")
	f.BoolVar(&noWatch, "no-watch", false, "do not use fsnotify; find changes with the mine loop only")
	f.BoolVar(&metricsAllowRemote, "metrics-allow-remote", false, "allow a --metrics-addr other machines can reach")
	f.BoolVar(&ui, "ui", false, "also serve the page of memminer ui (the log says where)")
	f.StringVar(&uiListen, "ui-listen", "127.0.0.1:0", "with --ui, the loopback address to serve the page on (port 0: any free port)")
	f.BoolVar(&a.gitCommit, "git-commit", false, "commit every change the service writes to a memory file (the hive must lie in a Git work tree)")
	return cmd
}

// newLogger makes the daemon's logger: slog to stderr, text or JSON, at
// the level given (config has checked both).
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log_level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	// journald and launchd keep the lines as written; text reads well on a
	// terminal and there.
	return slog.New(slog.NewTextHandler(w, opts)), nil
}

// absPath makes a flag's path absolute, for what another process reads.
func absPath(flag, p string) (string, error) {
	if p == "" {
		return "", nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", flag, p, err)
	}
	return abs, nil
}

// runUntilStopped runs the daemon until ctx ends. SIGHUP stops it, reloads
// the configuration (the file; flags and environment are as given) and
// runs it again in the same process: settings that shape the whole daemon
// (hive, agents globs, model, palace) take effect without a second
// restart path. A configuration that does not load keeps the old one.
func (a *app) runUntilStopped(cmd *cobra.Command, noWatch, metricsAllowRemote bool) error {
	// The daemon runs for days; its collector rests by itself (daemon/idlegc.go).
	processGC.restore()
	// A fixed GOMAXPROCS: otherwise the runtime re-reads the cgroup's CPU
	// limit every minute the idle daemon sleeps (Go's updatemaxprocs),
	// about a millisecond of CPU each time. A limit changed while the
	// daemon runs takes effect at its next start.
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	ctx := cmd.Context()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		log, err := newLogger(a.stderr, a.cfg.LogFormat, a.cfg.LogLevel)
		if err != nil {
			return err
		}
		rctx, stop := context.WithCancel(ctx)
		reload := make(chan bool, 1)
		go func() {
			select {
			case <-hup:
				log.Info("SIGHUP: stopping to reload the configuration")
				reload <- true
				stop()
			case <-rctx.Done():
				reload <- false
			}
		}()
		err = a.runDaemon(rctx, cmd, log, noWatch, metricsAllowRemote)
		stop()
		if !<-reload || ctx.Err() != nil || err != nil {
			return err
		}
		old := a.cfg
		if err := a.resolve(cmd); err != nil {
			log.Error("SIGHUP: the configuration does not load; running on with the one in use", "err", err)
			a.cfg = old
			continue
		}
		log.Info("SIGHUP: configuration reloaded; starting again", "hive", a.cfg.Hive, "agents", a.cfg.Agents, "model", a.cfg.Model)
	}
}

// runDaemon runs one daemon with a.cfg until ctx ends.
func (a *app) runDaemon(ctx context.Context, cmd *cobra.Command, log *slog.Logger, noWatch, metricsAllowRemote bool) error {
	if !a.cfg.Enabled {
		log.Info("memminer is disabled (enabled: false); idling until stopped")
		<-ctx.Done()
		return nil
	}
	if a.cfg.Hive == "" {
		return usagef("no hive: %s", howToSet(cmd, "hive"))
	}
	// Both checks come before the model loads: they fail in an instant.
	if err := checkHive(a.cfg.Hive, a.cfg.Agents); err != nil {
		return usagef("%v", err)
	}
	if a.gitCommit {
		remove, err := a.commitWrites(cmd, log)
		if err != nil {
			return err
		}
		defer remove()
	}
	if a.cfg.MetricsAddr != "" {
		if err := daemon.CheckMetricsAddr(a.cfg.MetricsAddr, metricsAllowRemote); err != nil {
			return usagef("%s: %v", a.settingFrom(cmd, "metrics_addr"), allowRemoteAdvice(err, "metrics-allow-remote"))
		}
	}
	var metricsToken string
	if a.cfg.MetricsAddr != "" && a.cfg.MetricsToken {
		token, err := a.token()
		if err != nil {
			return err
		}
		metricsToken = token
	}
	if err := daemon.CheckNotServed(ctx, a.cfg.Palace); err != nil {
		return err
	}
	if a.runUI != "" {
		stopUI, err := a.serveUIBeside(ctx, log)
		if err != nil {
			return err
		}
		defer stopUI()
	}
	stClient, stSettings, err := a.syncthingClient(cmd)
	if err != nil {
		return err
	}
	conflictsComp, err := a.conflictsComponent(cmd, log, stClient, stSettings)
	if err != nil {
		return err
	}
	e, ms, err := a.embedder(ctx)
	if err != nil {
		return err
	}
	var prober embed.Embedder
	if e != nil && embed.Remote(a.cfg.Model) {
		if prober, err = embed.Open(ctx, a.cfg.Model, embed.Options{CacheDir: a.cfg.ModelCache, Getenv: a.getenv, Probe: true}); err != nil {
			return err
		}
	}
	opts := daemon.Options{
		Palace:             a.cfg.Palace,
		Hive:               a.cfg.Hive,
		Agents:             a.cfg.Agents,
		Domains:            a.domainAssignments(),
		Embedder:           e,
		Prober:             prober,
		ModelSpec:          ms.Spec,
		ModelError:         ms.Reason,
		MineInterval:       a.cfg.MineInterval,
		NoWatch:            noWatch,
		LockTimeout:        a.cfg.LockTimeout,
		MaxFileBytes:       a.cfg.MaxFileBytes,
		MetricsAddr:        a.cfg.MetricsAddr,
		MetricsAllowRemote: metricsAllowRemote,
		MetricsToken:       metricsToken,
		Logger:             log,
		Components:         []daemon.Component{daemon.ConflictsComponent{Component: conflictsComp}, a.skillSyncComponent()},
		Index:              a.cfg.Index,
		Syncthing:          stClient,
		SyncthingOff:       stSettings.Off,
		Registry:           registry.Dir(a.getenv),
	}
	return daemon.NewProgram(ctx, opts).Run()
}

// allowRemoteAdvice adds to a refused remote listen address the flag that
// allows it.
func allowRemoteAdvice(err error, flag string) error {
	if errors.Is(err, listenaddr.ErrRemote) {
		return fmt.Errorf("%w, or pass --%s", err, flag)
	}
	return err
}
