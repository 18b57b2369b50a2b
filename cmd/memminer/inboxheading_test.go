package main

import (
	"strings"
	"testing"
)

// TestAHeadingNeverHidesAnInboxItem: a high-risk note under a
// "superseded" heading waits in the inbox and can be approved; a note
// written straight to memory under such a heading is refused, not hidden
// the moment it is written.
func TestAHeadingNeverHidesAnInboxItem(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	c.ok("mine", c.hive)
	if out := c.ok("remember", "--wing", "dave", "--risk", "high", "--heading", "superseded", "drop the users table"); !strings.Contains(out, "inbox") {
		t.Fatalf("remember: %s", out)
	}
	for _, args := range [][]string{{"inbox"}, {"inbox", "--all"}} {
		if out := c.ok(args...); !strings.Contains(out, "drop the users table") {
			t.Errorf("%v does not list the pending item:\n%s", args, out)
		}
	}
	c.ok("inbox", "approve", inboxRef(t, c.ok("inbox", "--json")), "--by", "pam")
	if out := c.ok("search", "drop the users table", "--wing", "dave"); !strings.Contains(out, "drop the users table") {
		t.Errorf("the approved note is hidden in memory:\n%s", out)
	}
	for _, heading := range []string{"Superseded", "Archive"} {
		_, stderr, code := c.run("remember", "--wing", "dave", "--heading", heading, "The users table stays")
		if code != exitUsage || !strings.Contains(stderr, "hidden the moment it is written") {
			t.Errorf("--heading %s: exit %d, %s", heading, code, stderr)
		}
	}
}
