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
	golden(t, "doctor.txt", all.String())
}
