package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandsLearnTheHiveFromTheDaemon: with `run --hive H` serving the
// palace and no hive configured, the commands that take a hive use H, as
// status shows it, instead of failing with "no hive".
func TestCommandsLearnTheHiveFromTheDaemon(t *testing.T) {
	c := newCLI(t)
	startRun(t, c, c.hive)
	c.env["MEMMINER_WING"] = "dwight"
	tests := []struct {
		name   string
		args   []string
		reject string // what the output must not say
		check  func(t *testing.T, out string)
	}{
		{name: "remember", args: []string{"remember", "The standby is db-4"}, check: func(t *testing.T, _ string) {
			data, err := os.ReadFile(filepath.Join(c.hive, "agents", "dwight", "memory.laptop.md"))
			if err != nil || !strings.Contains(string(data), "The standby is db-4") {
				t.Errorf("the note is not in the daemon's hive: %v %q", err, data)
			}
		}},
		{name: "doctor", args: []string{"doctor"}, reject: "no hive configured"},
		{name: "protocol", args: []string{"protocol"}, reject: "<hive>"},
		{name: "mine", args: []string{"mine", "--dry-run"}, reject: "mine needs a PATH"},
		// Last: it writes the hive into the config file.
		{name: "init", args: []string{"init"}, check: func(t *testing.T, _ string) {
			data, err := os.ReadFile(filepath.Join(c.env["XDG_CONFIG_HOME"], "memminer", "config.yml"))
			if err != nil || !strings.Contains(string(data), "hive: "+c.hive) {
				t.Errorf("init did not make the daemon's hive the user's: %v %q", err, data)
			}
		}},
	}
	t.Chdir(t.TempDir()) // init of no hive would take the working directory
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := c.run(tt.args...)
			if strings.Contains(errs, "no hive") || (tt.name != "doctor" && code != 0) {
				t.Fatalf("memminer %s: exit %d\n%s%s", strings.Join(tt.args, " "), code, out, errs)
			}
			if tt.reject != "" && strings.Contains(out+errs, tt.reject) {
				t.Errorf("memminer %s says %q:\n%s%s", strings.Join(tt.args, " "), tt.reject, out, errs)
			}
			if tt.check != nil {
				tt.check(t, out)
			}
		})
	}
}

// TestStatusOnAnEmptyHive: status on an empty palace says what to do:
// start the daemon, or, with one serving it, write memory (the daemon
// mines by itself), never to mine by hand.
func TestStatusOnAnEmptyHive(t *testing.T) {
	tmp := t.TempDir()
	c := newCLIAt(t, tmp, filepath.Join(tmp, "hive"))
	if err := os.MkdirAll(filepath.Join(c.hive, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out := c.ok("status"); !strings.Contains(out, "wings:       none yet; start the daemon") {
		t.Errorf("status without a daemon:\n%s", out)
	}
	startRun(t, c, c.hive).idle(t, c)
	out := c.ok("status")
	if !strings.Contains(out, "wings:       none yet; the daemon mines each agents/<id>/ of the hive $HIVE as it appears") || strings.Contains(out, "memminer mine") {
		t.Errorf("status with a daemon:\n%s", out)
	}
}
