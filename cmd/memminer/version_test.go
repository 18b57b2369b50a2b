package main

import (
	"encoding/json"
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
		golden string
	}{
		{"no build info", nil, false, "version-none.txt"},
		{"checkout", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs}, true, "version-checkout.txt"},
		{"go install", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.3.1"}}, true, "version-release.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := buildVersion(tt.bi, tt.ok)
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
