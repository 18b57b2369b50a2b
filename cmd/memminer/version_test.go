package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "1a569bc0d1e2f3a4b5c6d7e8f90123456789abcd"},
		{Key: "vcs.time", Value: "2026-12-01T11:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	tests := []struct {
		name   string
		bi     *debug.BuildInfo
		ok     bool
		stamp  stamp
		golden string
	}{
		{"no build info", nil, false, stamp{}, "version-none.txt"},
		{"checkout", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs}, true, stamp{}, "version-checkout.txt"},
		{"go install", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.3.1"}}, true, stamp{}, "version-release.txt"},
		// GOFLAGS=-buildvcs=false: no VCS settings, the scripts' -ldflags stamp fills in.
		{"ldflags stamp", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}}, true,
			stamp{version: "v0.4.0-12-g1a569bc", revision: "1a569bc0d1e2f3a4b5c6d7e8f90123456789abcd", date: "2026-12-01T11:00:00Z"}, "version-ldflags.txt"},
		// The toolchain's own stamp wins over -ldflags.
		{"vcs beats ldflags", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs}, true,
			stamp{version: "v9", revision: "ffff"}, "version-checkout.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := buildVersion(tt.bi, tt.ok, tt.stamp)
			// The running toolchain and platform differ between machines.
			v.Platform = "linux/amd64"
			if !tt.ok {
				v.Go = "go1.26.0"
			}
			var text, js strings.Builder
			if err := v.writeText(&text); err != nil {
				t.Fatal(err)
			}
			if err := writeJSON(&js, v); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.golden, text.String()+js.String())
		})
	}
}

func TestCLIVersion(t *testing.T) {
	c := newCLI(t)
	want := c.ok("version")
	if got := c.ok("--version"); got != want {
		t.Fatalf("--version printed %q, version %q", got, want)
	}
	// A broken config file does not hide the version.
	if got := c.ok("--config", filepath.Join(c.hive, "none.yml"), "version"); got != want {
		t.Fatalf("version with a missing config: %q", got)
	}
	var v versionInfo
	if err := json.Unmarshal([]byte(c.ok("version", "--json")), &v); err != nil {
		t.Fatal(err)
	}
	if v.Version == "" || v.Go == "" || v.Model != "use-lite-0.2.0" {
		t.Fatalf("version --json: %+v", v)
	}
	if _, stderr, code := c.run("version", "extra"); code != exitUsage {
		t.Fatalf("version extra: exit %d %q", code, stderr)
	}
}

// TestVersionStampedBuild builds memminer the way scripts/install does,
// without the toolchain's VCS stamp, and checks that version still names
// the checkout's revision.
func TestVersionStampedBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds memminer")
	}
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a Git checkout: %v", err)
	}
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	flags, err := exec.Command("bash", filepath.Join(strings.TrimSpace(string(root)), "scripts", "build-flags")).Output()
	if err != nil {
		t.Fatalf("scripts/build-flags: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "memminer")
	build := exec.Command("go", "build", "-buildvcs=false", "-ldflags", strings.TrimSpace(string(flags)), "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v versionInfo
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	if v.Revision != strings.TrimSpace(string(rev)) || v.Source != "ldflags" || v.Version == "devel" {
		t.Fatalf("stamped build reports %+v, want revision %s from ldflags", v, rev)
	}
}
