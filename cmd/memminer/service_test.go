package main

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kardianos/service"

	"github.com/memminer/memminer/embed"
)

// forcedSystem makes kardianos/service use a system it did not detect.
type forcedSystem struct{ service.System }

func (forcedSystem) Detect() bool { return true }

// otherSystem is a service manager memminer does not install into.
type otherSystem struct{}

func (otherSystem) String() string    { return "unix-systemv" }
func (otherSystem) Detect() bool      { return true }
func (otherSystem) Interactive() bool { return true }
func (otherSystem) New(service.Interface, *service.Config) (service.Service, error) {
	return nil, errors.New("not used")
}

func useSystem(t *testing.T, sys ...service.System) {
	orig := service.AvailableSystems()
	t.Cleanup(func() { service.ChooseSystem(orig...) })
	service.ChooseSystem(sys...)
}

func TestServiceCommandsWithoutServiceManager(t *testing.T) {
	useSystem(t, otherSystem{})
	c := newCLI(t)
	for _, args := range [][]string{
		{"install", "--user", "--hive", c.hive},
		{"start"},
		{"uninstall", "--user"},
	} {
		_, stderr, code := c.run(args...)
		if code != exitError || !strings.Contains(stderr, "no supported service manager") || !strings.Contains(stderr, "memminer run") {
			t.Errorf("memminer %s: exit %d, %q", strings.Join(args, " "), code, stderr)
		}
	}
	out := c.ok("service-status")
	if !strings.Contains(out, "no supported service manager") || !strings.Contains(out, "daemon:      not running") {
		t.Fatalf("service-status: %s", out)
	}
	if _, stderr, code := c.run("install", "--user"); code != exitUsage || !strings.Contains(stderr, "no hive") {
		t.Fatalf("install without a hive: exit %d, %q", code, stderr)
	}
}

func TestInstallPrint(t *testing.T) {
	c := newCLI(t)
	out := c.ok("install", "--user", "--hive", c.hive, "--print")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	want := "run --hive $HIVE --palace $PALACE"
	if runtime.GOOS == "darwin" {
		want = "<string>run</string>"
	}
	if !strings.Contains(out, want) || !strings.Contains(out, exe) {
		t.Fatalf("install --print:\n%s", out)
	}
	if _, err := os.Stat(c.palace); err == nil {
		t.Fatal("install --print created the palace")
	}
}

// TestInstallUserService installs through kardianos/service's systemd
// support with a fake systemctl, and checks the unit on disk is the
// rendering of what the flags and config say.
func TestInstallUserService(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("systemd is Linux only")
	}
	var sd service.System
	for _, s := range service.AvailableSystems() {
		if s.String() == platformSystemd {
			sd = s
		}
	}
	if sd == nil {
		t.Fatal("kardianos/service offers no systemd support")
	}
	useSystem(t, forcedSystem{sd})
	c := newCLI(t)
	home := c.env["HOME"]
	t.Setenv("HOME", home) // kardianos finds the user unit directory through $HOME
	bin := t.TempDir()
	script := "#!/bin/sh\nif [ \"$1\" = is-active ]; then echo inactive; fi\nif [ \"$1\" = list-unit-files ]; then echo memminer.service enabled; fi\nexit 0\n"
	if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	out := c.ok("install", "--user", "--hive", c.hive)
	unit := filepath.Join(home, ".config", "systemd", "user", "memminer.service")
	if !strings.Contains(out, "installed "+unit) || !strings.Contains(out, "memminer start --user") {
		t.Fatalf("install output:\n%s", out)
	}
	exe, _ := os.Executable()
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	spec := unitSpec{User: true, Executable: exe, Hive: c.hive, Palace: c.palace, ModelCache: filepath.Join(c.env["XDG_CACHE_HOME"], "memminer", "models")}
	if m := c.env["MEMMINER_EMBEDDING_MODEL"]; m != embed.Default {
		spec.Model = m // the unit pins a model other than the default
	}
	written, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	if string(written) != spec.systemdUnit() {
		t.Fatalf("unit on disk:\n%s\n--- want\n%s", written, spec.systemdUnit())
	}
	if info, err := os.Stat(c.palace); err != nil || !info.IsDir() {
		t.Fatalf("install did not create the palace directory: %v", err)
	}
	if out := c.ok("service-status", "--user"); !strings.Contains(out, "service:     stopped (user)") {
		t.Fatalf("service-status: %s", out)
	}
	c.ok("start", "--user")
	c.ok("uninstall", "--user")
	if _, err := os.Stat(unit); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("unit left after uninstall: %v", err)
	}
}
