package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctor walks a palace through what doctor reports: not mined yet,
// mined, a memory file edited since, a damaged wing file, a wing whose
// agent is gone, and a daemon serving it.
func TestDoctor(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	var all strings.Builder
	step := func(wantCode int, args ...string) string {
		t.Helper()
		args = append([]string{"doctor"}, args...)
		out, errs, code := c.run(args...)
		tr := fmt.Sprintf("$ memminer %s\nexit %d\n--- stdout\n%s--- stderr\n%s\n", strings.Join(args, " "), code, out, errs)
		if code != wantCode {
			t.Errorf("memminer %s: exit %d, want %d\n%s", strings.Join(args, " "), code, wantCode, tr)
		}
		all.WriteString(tr)
		return tr
	}
	step(0)
	c.ok("mine", c.hive)
	step(0)
	f, err := os.OpenFile(filepath.Join(c.hive, "agents", "pam", "memory.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("- The favicon lives in `public/`.\n")
	f.Close()
	step(exitError)
	c.ok("mine", c.hive)

	// One byte flipped: the checksum says so; doctor rebuilds nothing.
	wing := filepath.Join(c.palace, "wings", "jim.wing")
	data, err := os.ReadFile(wing)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(wing, data, 0o644); err != nil {
		t.Fatal(err)
	}
	step(exitError)
	if after, _ := os.ReadFile(wing); string(after) != string(data) {
		t.Error("doctor changed the damaged wing file")
	}
	c.ok("mine", c.hive)

	// An agent gone: its wing is kept, and doctor says so.
	if err := os.RemoveAll(filepath.Join(c.hive, "agents", "angela")); err != nil {
		t.Fatal(err)
	}
	out := step(0, "--json")
	var r doctorReport
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):strings.LastIndex(out, "}")+1]), &r); err != nil || !r.OK {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}

	startRun(t, c, c.hive).idle(t, c)
	step(0)

	// Connected agents: one whose wing is there, one whose agent is gone.
	c.ok("connect", "claude-code", "--wing", "dwight")
	c.ok("connect", "codex", "--wing", "angela")
	step(0)
	golden(t, "doctor.txt", all.String())
}

// TestDoctorChecksWhatConnectedAgentsReach: doctor checks that each
// connected agent's hooks and MCP server, run with the flags connect wrote
// and without this shell's MEMMINER_ variables, find the hive and this
// palace.
func TestDoctorChecksWhatConnectedAgentsReach(t *testing.T) {
	useConnectExe(t, "/usr/local/bin/memminer")
	tests := []struct {
		name    string
		connect []string // after connect claude-code --wing dwight
		hiveEnv bool     // MEMMINER_HIVE set while connecting
		want    string   // in doctor's output; empty: no such problem
	}{
		{name: "hive from the environment", hiveEnv: true},
		{name: "no hive", want: "claude-code's MCP server and hooks find no hive"},
		{name: "another palace", hiveEnv: true, connect: []string{"--palace", "PALACE2"}, want: "claude-code's MCP server and hooks use the palace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCLI(t)
			if tt.hiveEnv {
				c.env["MEMMINER_HIVE"] = c.hive
			}
			args := []string{"connect", "claude-code", "--wing", "dwight"}
			for _, a := range tt.connect {
				args = append(args, strings.ReplaceAll(a, "PALACE2", filepath.Join(t.TempDir(), "palace")))
			}
			c.ok(args...)
			c.env["MEMMINER_HIVE"] = c.hive // doctor itself knows the hive
			out, errs, _ := c.run("doctor")
			got := out + errs
			if tt.want == "" && strings.Contains(got, "MCP server and hooks") {
				t.Errorf("doctor reports a problem:\n%s", got)
			}
			if tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("doctor does not say %q:\n%s", tt.want, got)
			}
		})
	}
}
