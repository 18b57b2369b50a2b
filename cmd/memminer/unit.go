package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kardianos/service"

	"github.com/memminer/memminer/daemon"
)

// Service managers memminer installs into, as kardianos/service names them.
const (
	platformSystemd = "linux-systemd"
	platformLaunchd = "darwin-launchd"
)

// errNoServiceManager means no service manager memminer supports runs here.
var errNoServiceManager = errors.New("no supported service manager")

// unitSpec is what `memminer install` writes: a unit (systemd) or a job
// (launchd) that runs `memminer run` with these settings.
type unitSpec struct {
	// User installs a per-user service (systemd --user, a launchd agent)
	// instead of a system one.
	User bool
	// Executable is the memminer binary, absolute.
	Executable string
	// Hive and Palace are passed to `memminer run`, absolute.
	Hive, Palace string
	// Model, when set, is passed as --model.
	Model string
	// ConfigFile, when set, is passed as --config.
	ConfigFile string
	// ModelCache, when set, is exported as MEMMINER_MODEL_CACHE and is
	// writable under the system unit's sandbox.
	ModelCache string
	// RunAs, for a system service, is the account it runs as (systemd
	// User=, launchd UserName); empty means root.
	RunAs string
	// LogFile is where launchd writes the daemon's stderr; empty means
	// ~/Library/Logs/memminer.log for an agent, /var/log/memminer.log for a
	// daemon. systemd sends it to the journal.
	LogFile string
}

// args is the command line the service runs, after the executable.
func (s unitSpec) args() []string {
	args := []string{"run", "--hive", s.Hive, "--palace", s.Palace}
	if s.Model != "" {
		args = append(args, "--model", s.Model)
	}
	if s.ConfigFile != "" {
		args = append(args, "--config", s.ConfigFile)
	}
	return args
}

// validate checks the spec can be written into a unit file.
func (s unitSpec) validate() error {
	for _, f := range []struct{ name, v string }{
		{"executable", s.Executable}, {"hive", s.Hive}, {"palace", s.Palace},
		{"model", s.Model}, {"config", s.ConfigFile}, {"model cache", s.ModelCache},
		{"user", s.RunAs}, {"log file", s.LogFile},
	} {
		// kardianos/service reads the unit as a template; braces would be
		// taken for template actions. Line breaks would end the setting.
		if strings.ContainsAny(f.v, "\n\r\x00") || strings.Contains(f.v, "{{") || strings.Contains(f.v, "}}") {
			return fmt.Errorf("%s %q cannot be written into a service file", f.name, f.v)
		}
	}
	for _, f := range []struct{ name, v string }{{"executable", s.Executable}, {"hive", s.Hive}, {"palace", s.Palace}} {
		if f.v == "" {
			return fmt.Errorf("service: no %s", f.name)
		}
		if !filepath.IsAbs(f.v) && !strings.HasPrefix(f.v, "%h/") {
			return fmt.Errorf("service: %s %q is not absolute", f.name, f.v)
		}
	}
	return nil
}

// systemdUnit renders the systemd unit. The system unit is sandboxed:
// read-only system, writable hive, palace and model cache only.
func (s unitSpec) systemdUnit() string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("[Unit]")
	line("Description=memminer: mines the hive's agent memory into a searchable palace")
	line("After=network.target")
	// Give up after 10 failed starts in 5 minutes instead of looping.
	line("StartLimitIntervalSec=300")
	line("StartLimitBurst=10")
	line("")
	line("[Service]")
	line("Type=simple")
	exec := []string{sdWord(s.Executable)}
	for _, a := range s.args() {
		exec = append(exec, sdWord(a))
	}
	line("ExecStart=%s", strings.Join(exec, " "))
	// memminer run reloads its configuration on SIGHUP.
	line("ExecReload=/bin/kill -HUP $MAINPID")
	if s.ModelCache != "" {
		line("Environment=%s", sdQuote("MEMMINER_MODEL_CACHE="+sdEscape(s.ModelCache)))
	}
	if !s.User && s.RunAs != "" {
		line("User=%s", s.RunAs)
	}
	line("Restart=on-failure")
	line("RestartSec=5s")
	// memminer exits 0 within 5 s of SIGTERM.
	line("TimeoutStopSec=10s")
	line("NoNewPrivileges=yes")
	if !s.User {
		line("ProtectSystem=strict")
		line("ReadWritePaths=%s", sdWord(s.Hive))
		line("ReadWritePaths=%s", sdWord(s.Palace))
		if s.ModelCache != "" {
			// "-": a cache that does not exist yet is not an error.
			line("ReadWritePaths=%s", sdQuote("-"+sdEscape(s.ModelCache)))
		}
		line("PrivateTmp=yes")
		line("PrivateDevices=yes")
		line("ProtectKernelTunables=yes")
		line("ProtectKernelModules=yes")
		line("ProtectControlGroups=yes")
		line("RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6")
		line("RestrictNamespaces=yes")
		line("RestrictSUIDSGID=yes")
		line("LockPersonality=yes")
		line("UMask=0077")
	}
	line("")
	line("[Install]")
	if s.User {
		// A user manager has no multi-user.target: units wanted by it
		// would never start.
		line("WantedBy=default.target")
	} else {
		line("WantedBy=multi-user.target")
	}
	return b.String()
}

// sdWord writes a path or argument as one word of a unit file setting
// (see sdEscape and sdQuote).
func sdWord(w string) string { return sdQuote(sdEscape(w)) }

// sdEscape doubles '%' so systemd does not take it for a specifier —
// except in a leading "%h/", the home directory specifier the user unit in
// deploy/ uses.
func sdEscape(w string) string {
	home := ""
	if rest, ok := strings.CutPrefix(w, "%h/"); ok {
		home, w = "%h/", rest
	}
	return home + strings.ReplaceAll(w, "%", "%%")
}

// sdQuote quotes an (escaped) word when it holds anything but plain path
// characters.
func sdQuote(w string) string {
	plain := w != ""
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r)) {
			plain = false
			break
		}
	}
	if plain {
		return w
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(w) + `"`
}

// launchdPlist renders the launchd job: started at load (login for an
// agent, boot for a daemon) and restarted when it fails.
func (s unitSpec) launchdPlist() string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	str := func(v string) string { return "<string>" + xmlEscape(v) + "</string>" }
	line(`<?xml version="1.0" encoding="UTF-8"?>`)
	line(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">`)
	line(`<plist version="1.0">`)
	line(`<dict>`)
	line("\t<key>Label</key>")
	line("\t%s", str(daemon.ServiceName))
	line("\t<key>ProgramArguments</key>")
	line("\t<array>")
	line("\t\t%s", str(s.Executable))
	for _, a := range s.args() {
		line("\t\t%s", str(a))
	}
	line("\t</array>")
	if s.ModelCache != "" {
		line("\t<key>EnvironmentVariables</key>")
		line("\t<dict>")
		line("\t\t<key>MEMMINER_MODEL_CACHE</key>")
		line("\t\t%s", str(s.ModelCache))
		line("\t</dict>")
	}
	if !s.User && s.RunAs != "" {
		line("\t<key>UserName</key>")
		line("\t%s", str(s.RunAs))
	}
	line("\t<key>RunAtLoad</key>")
	line("\t<true/>")
	line("\t<key>KeepAlive</key>")
	line("\t<dict>")
	line("\t\t<key>SuccessfulExit</key>")
	line("\t\t<false/>")
	line("\t</dict>")
	line("\t<key>ThrottleInterval</key>")
	line("\t<integer>5</integer>")
	line("\t<key>ProcessType</key>")
	line("\t%s", str("Background"))
	line("\t<key>StandardErrorPath</key>")
	line("\t%s", str(s.logFile()))
	line(`</dict>`)
	line(`</plist>`)
	return b.String()
}

func (s unitSpec) logFile() string {
	switch {
	case s.LogFile != "":
		return s.LogFile
	case s.User:
		home, _ := os.UserHomeDir()
		return filepath.Join(home, "Library", "Logs", "memminer.log")
	}
	return "/var/log/memminer.log"
}

var xmlEscaper = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;", `"`, "&quot;", `'`, "&apos;")

func xmlEscape(s string) string { return xmlEscaper.Replace(s) }

// serviceConfig is the kardianos/service configuration for spec. The unit
// and plist are rendered here in full and handed over as templates without
// template actions, so what kardianos writes is exactly systemdUnit or
// launchdPlist.
func (s unitSpec) serviceConfig() *service.Config {
	return &service.Config{
		Name:        daemon.ServiceName,
		DisplayName: "memminer",
		Description: "memminer: mines the hive's agent memory into a searchable palace",
		Executable:  s.Executable,
		Arguments:   s.args(),
		UserName:    s.RunAs,
		Option: service.KeyValue{
			"UserService":   s.User,
			"SystemdScript": s.systemdUnit(),
			"LaunchdConfig": s.launchdPlist(),
			"RunAtLoad":     true,
			"KeepAlive":     true,
		},
	}
}

// unitPath is where the service file of spec lives on platform.
func (s unitSpec) unitPath(platform string) (string, error) {
	switch platform {
	case platformSystemd:
		if !s.User {
			return "/etc/systemd/system/" + daemon.ServiceName + ".service", nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, ".config", "systemd", "user", daemon.ServiceName+".service"), nil
	case platformLaunchd:
		if !s.User {
			return "/Library/LaunchDaemons/" + daemon.ServiceName + ".plist", nil
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "Library", "LaunchAgents", daemon.ServiceName+".plist"), nil
	}
	return "", fmt.Errorf("%w: %s", errNoServiceManager, platform)
}

// servicePlatform is the service manager kardianos/service detected, and
// nil when memminer cannot install into it: only systemd and launchd are
// supported, and a container usually has neither running.
func servicePlatform() (string, error) {
	sys := service.ChosenSystem()
	if sys == nil {
		return "", fmt.Errorf("%w: none detected (in a container? run `memminer run` in the foreground as the container's command instead)", errNoServiceManager)
	}
	switch p := sys.String(); p {
	case platformSystemd, platformLaunchd:
		return p, nil
	default:
		return p, fmt.Errorf("%w: found %s, but memminer installs only into systemd and launchd. systemd is not running here (in a container?); run `memminer run` in the foreground instead, e.g. as the container's command", errNoServiceManager, p)
	}
}

// installService writes and enables the service. When enabling fails the written
// file is removed again, so a failed install leaves nothing behind.
func installService(spec unitSpec) (string, error) {
	if err := spec.validate(); err != nil {
		return "", err
	}
	platform, err := servicePlatform()
	if err != nil {
		return "", err
	}
	path, err := spec.unitPath(platform)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err == nil {
		return path, fmt.Errorf("%s already exists; run `memminer uninstall` first", path)
	}
	svc, err := service.New(&daemon.Program{}, spec.serviceConfig())
	if err != nil {
		return path, fmt.Errorf("install: %w", err)
	}
	if err := svc.Install(); err != nil {
		if rmErr := os.Remove(path); rmErr == nil {
			return path, fmt.Errorf("install: %w (removed the half-installed %s)", err, path)
		}
		return path, fmt.Errorf("install: %w", err)
	}
	return path, nil
}

// controlService runs a service action: "start", "stop", "restart" or "uninstall".
func controlService(spec unitSpec, action string) error {
	if _, err := servicePlatform(); err != nil {
		return err
	}
	svc, err := service.New(&daemon.Program{}, spec.serviceConfig())
	if err != nil {
		return fmt.Errorf("%s: %w", action, err)
	}
	switch action {
	case "start":
		err = svc.Start()
	case "stop":
		err = svc.Stop()
	case "restart":
		err = svc.Restart()
	case "uninstall":
		err = svc.Uninstall()
	default:
		return fmt.Errorf("unknown service action %q", action)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", action, err)
	}
	return nil
}

// serviceState asks the service manager about the service: "running",
// "stopped" or "not installed".
func serviceState(spec unitSpec) (string, error) {
	if _, err := servicePlatform(); err != nil {
		return "", err
	}
	svc, err := service.New(&daemon.Program{}, spec.serviceConfig())
	if err != nil {
		return "", fmt.Errorf("service-status: %w", err)
	}
	st, err := svc.Status()
	switch {
	case errors.Is(err, service.ErrNotInstalled):
		return "not installed", nil
	case err != nil:
		return "", fmt.Errorf("service-status: %w", err)
	case st == service.StatusRunning:
		return "running", nil
	case st == service.StatusStopped:
		return "stopped", nil
	}
	return "unknown", nil
}
