package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/service/api"
	"github.com/memminer/memminer/service/daemonclient"
)

// serviceFlags are the flags every service command shares.
type serviceFlags struct {
	user bool
}

func (f *serviceFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.user, "user", false, "the per-user service (systemd --user, a launchd agent) instead of the system one")
}

func (f *serviceFlags) suffix() string {
	if f.user {
		return " --user"
	}
	return ""
}

func (a *app) installCmd() *cobra.Command {
	var (
		sf        serviceFlags
		runAs     string
		printOnly bool
	)
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Install a system (or --user) service running `memminer run`",
		Long: `Install memminer as a service that runs "memminer run" with this hive and
palace: a systemd unit on Linux, a launchd job on macOS. The service starts at
boot (or login, for --user) and is restarted when it fails.

The system unit is sandboxed (NoNewPrivileges, ProtectSystem=strict with only
the hive, the palace and the model cache writable, PrivateTmp). deploy/ in the
source tree holds the same files for installing by hand.

Where no service manager runs (a container, usually) install says so: run
"memminer run" in the foreground instead, e.g. as the container's command.

What the service does, and the units: docs/daemon.md ("Installing").`,
		Example: `  sudo memminer install --hive /srv/hive --palace /var/lib/memminer/palace
  memminer install --user --hive ~/hive
  memminer install --user --hive ~/hive --dry-run`,
		Args: exactArgs(0, "install takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := a.serviceSpec(sf.user, a.cfg.Hive, runAs, !printOnly)
			if err != nil {
				return err
			}
			if printOnly {
				if err := spec.validate(); err != nil {
					return err
				}
				if runtime.GOOS == "darwin" {
					fmt.Fprint(a.stdout, spec.launchdPlist())
				} else {
					fmt.Fprint(a.stdout, spec.systemdUnit())
				}
				return nil
			}
			path, err := installService(spec)
			if errors.Is(err, fs.ErrPermission) && !sf.user {
				return fmt.Errorf("%w\ninstalling the system service needs root (sudo); or install a per-user service with --user", err)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "installed %s\nit runs: %s", path, spec.Executable)
			for _, arg := range spec.args() {
				fmt.Fprintf(a.stdout, " %s", arg)
			}
			fmt.Fprintf(a.stdout, "\nstart it now: memminer start%s\n", sf.suffix())
			if sf.user && runtime.GOOS == "linux" {
				fmt.Fprintln(a.stdout, "to run it without an open login session: loginctl enable-linger $USER")
			}
			return nil
		},
	}
	sf.add(cmd)
	f := cmd.Flags()
	settingFlags(f, "hive")
	f.StringVar(&runAs, "run-as", "", "account the system service runs as (default root)")
	dryRunFlag(f, &printOnly, "print the unit (or plist) instead of installing it", "print")
	return cmd
}

// serviceSpec is what install writes, from flags and configuration. When
// prepare is set the palace directory is created, so the sandbox can make
// it writable.
func (a *app) serviceSpec(user bool, hive, runAs string, prepare bool) (unitSpec, error) {
	exe, err := os.Executable()
	if err != nil {
		return unitSpec{}, fmt.Errorf("find the memminer binary: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	if hive == "" {
		return unitSpec{}, errNoHive()
	}
	if hive, err = absPath("--hive", hive); err != nil {
		return unitSpec{}, err
	}
	if info, err := os.Stat(hive); err != nil {
		return unitSpec{}, fmt.Errorf("hive: %w", err)
	} else if !info.IsDir() {
		return unitSpec{}, fmt.Errorf("hive %s is not a directory", hive)
	}
	if user && runAs != "" {
		return unitSpec{}, usagef("--run-as is for the system service; a --user service runs as you")
	}
	spec := unitSpec{
		User:       user,
		Executable: exe,
		Hive:       hive,
		Palace:     a.cfg.Palace,
		ModelCache: a.cfg.ModelCache,
		RunAs:      runAs,
	}
	if a.cfg.Model != embed.Default {
		spec.Model = a.cfg.Model
	}
	if a.configFile != "" {
		if spec.ConfigFile, err = absPath("--config", a.configFile); err != nil {
			return unitSpec{}, err
		}
	}
	if prepare {
		if err := os.MkdirAll(spec.Palace, 0o700); err != nil {
			return unitSpec{}, fmt.Errorf("create the palace directory: %w", err)
		}
	}
	return spec, nil
}

// controlSpec is enough of a spec to name the service for a control action.
func (a *app) controlSpec(user bool) unitSpec {
	return unitSpec{User: user, Palace: a.cfg.Palace}
}

func (a *app) uninstallCmd() *cobra.Command {
	var sf serviceFlags
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Stop and remove the memminer service (the palace is kept)",
		Args:  exactArgs(0, "uninstall takes no arguments"),
		RunE: func(*cobra.Command, []string) error {
			if err := controlService(a.controlSpec(sf.user), "uninstall"); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, "uninstalled the memminer service; the palace is kept at "+a.cfg.Palace)
			return nil
		},
	}
	sf.add(cmd)
	return cmd
}

// controlCmd is start, stop or restart.
func (a *app) controlCmd(action, short, done string) *cobra.Command {
	var sf serviceFlags
	cmd := &cobra.Command{
		Use:   action,
		Short: short,
		Args:  exactArgs(0, action+" takes no arguments"),
		RunE: func(*cobra.Command, []string) error {
			if err := controlService(a.controlSpec(sf.user), action); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, done)
			return nil
		},
	}
	sf.add(cmd)
	return cmd
}

func (a *app) startCmd() *cobra.Command {
	return a.controlCmd("start", "Start the installed memminer service", "started the memminer service")
}

func (a *app) stopCmd() *cobra.Command {
	return a.controlCmd("stop", "Stop the memminer service", "stopped the memminer service")
}

func (a *app) restartCmd() *cobra.Command {
	return a.controlCmd("restart", "Restart the memminer service", "restarted the memminer service")
}

func (a *app) serviceStatusCmd() *cobra.Command {
	var (
		sf     serviceFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "service-status",
		Short: "Show whether the memminer service is installed and running",
		Long: `Show what the service manager says about the memminer service, and whether a
daemon answers on the palace's control socket (it may run without a service
manager, e.g. "memminer run" in a container).`,
		Args: exactArgs(0, "service-status takes no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			scope := "system"
			if sf.user {
				scope = "user"
			}
			state, err := serviceState(a.controlSpec(sf.user))
			if err != nil {
				state = err.Error()
			}
			out := serviceStatusJSON{Service: state, Scope: scope, Socket: daemon.SocketPath(a.cfg.Palace)}
			st, err := daemonclient.NewClient(a.cfg.Palace, daemonclient.WithAnswerTimeout(daemonAnswerTimeout)).Status(cmd.Context())
			switch {
			case err == nil:
				out.Daemon, out.PID, out.UptimeSeconds = "active", st.Daemon.PID, st.Daemon.UptimeSeconds
			case errors.Is(err, api.ErrNotRunning) && !errors.Is(err, api.ErrNoAnswer):
				out.Daemon = "not running"
			default:
				out.Daemon, out.Error = "not answering", err.Error()
			}
			if asJSON {
				return writeJSON(a.stdout, out)
			}
			fmt.Fprintf(a.stdout, "service:     %s (%s)\n", out.Service, out.Scope)
			switch out.Daemon {
			case "active":
				up := time.Duration(out.UptimeSeconds * float64(time.Second)).Round(time.Second)
				fmt.Fprintf(a.stdout, "daemon:      active, pid %d, up %s, socket %s\n", out.PID, up, out.Socket)
			case "not running":
				fmt.Fprintf(a.stdout, "daemon:      not running (nothing answers on %s)\n", out.Socket)
			default:
				fmt.Fprintf(a.stdout, "daemon:      not answering: %v\n", out.Error)
			}
			return nil
		},
	}
	sf.add(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the states as JSON")
	return cmd
}

// serviceStatusJSON is service-status --json.
type serviceStatusJSON struct {
	// Service is what the service manager says, Scope "system" or "user".
	Service string `json:"service"`
	Scope   string `json:"scope"`
	// Daemon is "active", "not running" or "not answering" (Error says why).
	Daemon        string  `json:"daemon"`
	PID           int     `json:"pid,omitempty"`
	UptimeSeconds float64 `json:"uptime_seconds,omitempty"`
	Socket        string  `json:"socket"`
	Error         string  `json:"error,omitempty"`
}
