package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kardianos/service"

	"github.com/memminer/memminer/internal/testutil"
)

// deploySpecs are the settings the files under deploy/ are rendered with:
// the usual install locations, so the files work as they are after a
// `make install`-style copy, or need one path edited.
var deploySpecs = []struct {
	file string
	spec unitSpec
	kind string
}{
	{
		file: "systemd/memminer.service",
		kind: platformSystemd,
		spec: unitSpec{
			Executable: "/usr/local/bin/memminer",
			Hive:       "/srv/memminer/hive",
			Palace:     "/var/lib/memminer/palace",
			ModelCache: "/var/cache/memminer/models",
		},
	},
	{
		file: "systemd/memminer-user.service",
		kind: platformSystemd,
		spec: unitSpec{
			User:       true,
			Executable: "/usr/local/bin/memminer",
			Hive:       "%h/hive",
			Palace:     "%h/.local/share/memminer/palace",
			ModelCache: "%h/.cache/memminer/models",
		},
	},
	{
		file: "launchd/memminer.plist",
		kind: platformLaunchd,
		spec: unitSpec{
			User:       true,
			Executable: "/usr/local/bin/memminer",
			Hive:       "/Users/you/hive",
			Palace:     "/Users/you/.local/share/memminer/palace",
			ModelCache: "/Users/you/.cache/memminer/models",
			LogFile:    "/Users/you/Library/Logs/memminer.log",
		},
	},
}

// TestDeployFilesMatchInstall checks that deploy/ holds exactly what
// install writes for the settings above (run with -update to regenerate).
func TestDeployFilesMatchInstall(t *testing.T) {
	for _, d := range deploySpecs {
		t.Run(d.file, func(t *testing.T) {
			if err := d.spec.validate(); err != nil {
				t.Fatal(err)
			}
			got := d.spec.systemdUnit()
			if d.kind == platformLaunchd {
				got = d.spec.launchdPlist()
			}
			testutil.Golden(t, filepath.Join("..", "..", "deploy", filepath.FromSlash(d.file)), got, *update)
		})
	}
}

func TestSystemdUnit(t *testing.T) {
	sys := unitSpec{Executable: "/opt/mm/memminer", Hive: "/srv/my hive", Palace: "/var/lib/mm/100%", ModelCache: "/var/cache/mm", Model: "ollama:nomic-embed-text", RunAs: "memminer"}
	user := sys
	user.User, user.RunAs = true, ""
	tests := []struct {
		name    string
		spec    unitSpec
		want    []string
		wantNot []string
	}{
		{"system", sys, []string{
			`ExecStart=/opt/mm/memminer run --hive "/srv/my hive" --palace /var/lib/mm/100%% --model ollama:nomic-embed-text`,
			`Environment=MEMMINER_MODEL_CACHE=/var/cache/mm`,
			"User=memminer", "NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes",
			`ReadWritePaths="/srv/my hive"`, "ReadWritePaths=/var/lib/mm/100%%", "ReadWritePaths=-/var/cache/mm",
			"Restart=on-failure", "RestartSec=5s", "WantedBy=multi-user.target",
		}, []string{"default.target", "RestartSec=120"}},
		{"user", user, []string{
			"WantedBy=default.target", "RestartSec=5s", "NoNewPrivileges=yes",
		}, []string{"multi-user.target", "ProtectSystem", "User=", "RestartSec=120"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			unit := tt.spec.systemdUnit()
			for _, w := range tt.want {
				if !strings.Contains(unit, w+"\n") {
					t.Errorf("unit lacks line %q:\n%s", w, unit)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(unit, w) {
					t.Errorf("unit has %q:\n%s", w, unit)
				}
			}
		})
	}
}

func TestLaunchdPlist(t *testing.T) {
	spec := unitSpec{User: true, Executable: "/usr/local/bin/memminer", Hive: "/Users/a&b/hive", Palace: "/Users/a&b/palace", LogFile: "/tmp/mm.log"}
	plist := spec.launchdPlist()
	for _, w := range []string{
		"<string>/Users/a&amp;b/hive</string>", "<key>RunAtLoad</key>\n\t<true/>",
		"<key>SuccessfulExit</key>\n\t\t<false/>", "<string>/tmp/mm.log</string>", "<string>run</string>",
	} {
		if !strings.Contains(plist, w) {
			t.Errorf("plist lacks %q:\n%s", w, plist)
		}
	}
	if strings.Contains(plist, "UserName") || strings.Contains(plist, "{{") {
		t.Errorf("unexpected content:\n%s", plist)
	}
}

func TestServiceSpecValidate(t *testing.T) {
	ok := unitSpec{Executable: "/bin/mm", Hive: "/h", Palace: "/p"}
	tests := []struct {
		name string
		edit func(*unitSpec)
		msg  string
	}{
		{"relative hive", func(s *unitSpec) { s.Hive = "hive" }, "not absolute"},
		{"no palace", func(s *unitSpec) { s.Palace = "" }, "no palace"},
		{"template braces", func(s *unitSpec) { s.Hive = "/h/{{Name}}" }, "cannot be written"},
		{"newline", func(s *unitSpec) { s.Model = "x\nExecStartPre=/bin/evil" }, "cannot be written"},
	}
	if err := ok.validate(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := ok
			tt.edit(&s)
			if err := s.validate(); err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Validate: %v; want %q", err, tt.msg)
			}
		})
	}
}

// forced makes kardianos/service use a system it did not detect.
type forced struct{ service.System }

func (forced) Detect() bool { return true }

// fakeSystem is a service manager memminer does not support.
type fakeSystem struct{ name string }

func (f fakeSystem) String() string  { return f.name }
func (fakeSystem) Detect() bool      { return true }
func (fakeSystem) Interactive() bool { return true }
func (fakeSystem) New(service.Interface, *service.Config) (service.Service, error) {
	return nil, errors.New("fake system")
}

func TestNoServiceManager(t *testing.T) {
	useSystem(t, fakeSystem{"unix-systemv"})
	spec := unitSpec{User: true, Executable: "/bin/mm", Hive: t.TempDir(), Palace: t.TempDir()}
	_, err := installService(spec)
	if !errors.Is(err, errNoServiceManager) || !strings.Contains(err.Error(), "memminer run") || !strings.Contains(err.Error(), "unix-systemv") {
		t.Fatalf("Install without systemd: %v", err)
	}
	useSystem(t)
	if err := controlService(spec, "start"); !errors.Is(err, errNoServiceManager) || !strings.Contains(err.Error(), "none detected") {
		t.Fatalf("start without any service manager: %v", err)
	}
}

// fakeSystemctl puts a systemctl on PATH that logs its arguments and fails
// the actions listed in $FAKE_SYSTEMCTL_FAIL.
func fakeSystemctl(t *testing.T) (logFile string) {
	t.Helper()
	bin := t.TempDir()
	logFile = filepath.Join(bin, "calls")
	script := `#!/bin/sh
echo "$*" >> "` + logFile + `"
case " $FAKE_SYSTEMCTL_FAIL " in *" $1 "*) echo "systemctl $1 failed" >&2; exit 1;; esac
if [ "$1" = is-active ]; then echo active; fi
exit 0
`
	if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return logFile
}

func systemdSystem(t *testing.T) service.System {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("kardianos/service has its systemd support on Linux only")
	}
	for _, s := range service.AvailableSystems() {
		if s.String() == platformSystemd {
			return s
		}
	}
	t.Fatal("kardianos/service offers no systemd support")
	return nil
}

// TestInstallUserUnit installs through kardianos/service with a fake
// systemctl: the unit written must be exactly SystemdUnit, and a failed
// enable must leave nothing behind.
func TestInstallUserUnit(t *testing.T) {
	useSystem(t, forced{systemdSystem(t)})
	home := t.TempDir()
	t.Setenv("HOME", home)
	calls := fakeSystemctl(t)
	t.Setenv("FAKE_SYSTEMCTL_FAIL", "")
	spec := unitSpec{User: true, Executable: "/usr/local/bin/memminer", Hive: filepath.Join(home, "hive"), Palace: filepath.Join(home, "palace"), ModelCache: filepath.Join(home, "cache")}
	unitPath := filepath.Join(home, ".config", "systemd", "user", "memminer.service")

	path, err := installService(spec)
	if err != nil {
		t.Fatal(err)
	}
	if path != unitPath {
		t.Fatalf("installed %s, want %s", path, unitPath)
	}
	written, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(written) != spec.systemdUnit() {
		t.Fatalf("kardianos wrote another unit than rendered:\n--- written\n%s\n--- rendered\n%s", written, spec.systemdUnit())
	}
	if _, err := installService(spec); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second install: %v", err)
	}
	if err := controlService(spec, "start"); err != nil {
		t.Fatal(err)
	}
	if st, err := serviceState(spec); err != nil || st != "running" {
		t.Fatalf("status %q, %v", st, err)
	}
	if err := controlService(spec, "uninstall"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(unitPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("unit left after uninstall: %v", err)
	}
	log, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"enable --user memminer.service", "daemon-reload --user", "start --user memminer.service", "disable --user memminer.service"} {
		if !strings.Contains(string(log), want+"\n") {
			t.Errorf("systemctl was not called with %q; calls:\n%s", want, log)
		}
	}

	// A failed enable: the half-installed unit is removed.
	t.Setenv("FAKE_SYSTEMCTL_FAIL", "enable")
	_, err = installService(spec)
	if err == nil || !strings.Contains(err.Error(), "removed the half-installed") {
		t.Fatalf("install with a failing enable: %v", err)
	}
	if _, err := os.Stat(unitPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("unit left after a failed install: %v", err)
	}
}

// TestUnitsPassSystemdVerify runs systemd's own parser over the units: any
// warning (unknown key, bad quoting, bad specifier) fails the test.
func TestUnitsPassSystemdVerify(t *testing.T) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("systemd-analyze not installed (Debian package systemd)")
		}
		t.Fatal("systemd-analyze not installed; CI must install the Debian package systemd")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range deploySpecs {
		if d.kind != platformSystemd {
			continue
		}
		t.Run(d.file, func(t *testing.T) {
			spec := d.spec
			spec.Executable = exe // verify wants an executable that exists
			unit := filepath.Join(t.TempDir(), "memminer.service")
			if err := os.WriteFile(unit, []byte(spec.systemdUnit()), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(tool, "verify", unit).CombinedOutput()
			if err != nil || len(bytes.TrimSpace(out)) > 0 {
				t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
			}
		})
	}
}
