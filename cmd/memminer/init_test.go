package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInit: init makes the hive and writes the config once, so that later
// commands, given no --hive, find it; a second run changes nothing; a
// config naming another hive is refused before anything is made.
func TestInit(t *testing.T) {
	tmp := t.TempDir()
	c := newCLIAt(t, tmp, filepath.Join(tmp, "team", "hive"))
	configFile := filepath.Join(tmp, "config", "memminer", "config.yml")

	out := c.ok("init", c.hive)
	for _, want := range []string{"agents", "PROTOCOL.md", ".stignore"} {
		if _, err := os.Stat(filepath.Join(c.hive, want)); err != nil {
			t.Errorf("init made no %s: %v", want, err)
		}
		if !strings.Contains(out, "created  $HIVE/"+want) {
			t.Errorf("output does not say it created %s:\n%s", want, out)
		}
	}
	for _, want := range []string{"memminer install --user", "memminer connect claude-code --wing ID"} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not say to run %q next:\n%s", want, out)
		}
	}
	protocol, err := os.ReadFile(filepath.Join(c.hive, "PROTOCOL.md"))
	if err != nil || !strings.Contains(string(protocol), "Hive: `"+c.hive+"`") {
		t.Errorf("PROTOCOL.md does not name the hive: %v\n%s", err, protocol)
	}
	// The palace came from MEMMINER_PALACE_PATH: it is written too, so the
	// service and agents started without that variable find it.
	want := "hive: " + c.hive + "\npalace: " + c.palace + "\n"
	if got, err := os.ReadFile(configFile); err != nil || string(got) != want {
		t.Fatalf("config file = %q, %v; want %q", got, err, want)
	}

	// Later commands find the hive without --hive or MEMMINER_HIVE.
	delete(c.env, "MEMMINER_PALACE_PATH")
	c.ok("remember", "--wing", "dwight", "The primary database is db-3")
	if _, err := os.Stat(filepath.Join(c.hive, "agents", "dwight", "memory.laptop.md")); err != nil {
		t.Errorf("remember after init did not write to the hive: %v", err)
	}

	// Again: nothing changes, and --json says so.
	if err := os.WriteFile(filepath.Join(c.hive, ".stignore"), []byte("// mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var res initResult
	if err := json.Unmarshal([]byte(c.ok("init", "--json")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Hive != "$HIVE" || len(res.Created) != 0 || len(res.Existing) != 3 || len(res.Settings) != 0 || len(res.Next) == 0 {
		t.Errorf("second init: %+v", res)
	}
	if got, _ := os.ReadFile(filepath.Join(c.hive, ".stignore")); string(got) != "// mine\n" {
		t.Errorf("init overwrote .stignore: %q", got)
	}
	if got, _ := os.ReadFile(configFile); string(got) != want {
		t.Errorf("second init changed the config: %q", got)
	}

	// Another hive: refused, naming the line; nothing made.
	other := filepath.Join(tmp, "other")
	_, errs, code := c.run("init", other)
	if code == 0 || !strings.Contains(errs, "another value") || !strings.Contains(errs, "--config FILE") {
		t.Errorf("init of another hive: exit %d, %s", code, errs)
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("refused init made %s: %v", other, err)
	}
}

// TestInitRefusesAnAgentsDirectory: init in what looks like an agents
// directory names the hive meant instead of nesting agents/ in it.
func TestInitRefusesAnAgentsDirectory(t *testing.T) {
	c := newCLI(t)
	_, errs, code := c.run("init", filepath.Join(c.hive, "agents"))
	if code == 0 || !strings.Contains(errs, "did you mean --hive") {
		t.Errorf("exit %d, %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(c.hive, "agents", "agents")); !os.IsNotExist(err) {
		t.Errorf("init made agents/agents: %v", err)
	}
}
