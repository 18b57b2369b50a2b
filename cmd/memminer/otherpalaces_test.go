package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/daemon/registry"
	"github.com/memminer/memminer/internal/testutil"
)

// notePrefix starts the line that names another daemon's palace.
const notePrefix = "memminer: note: "

// otherDaemonSteps are commands on an empty palace that find nothing.
var otherDaemonSteps = [][]string{
	{"search", "how is the web bundle built"},
	{"search", "how is the web bundle built", "--json"},
	{"wake-up"},
	{"wake-up", "--json"},
	{"index", "--json"},
	{"status"},
	{"conflicts"},
}

// transcript runs args with c and returns what it printed and its exit
// status, and its stderr alone.
func transcript(c *cli, args ...string) (string, string) {
	out, errs, code := c.run(args...)
	return fmt.Sprintf("$ memminer %s\nexit %d\n--- stdout\n%s--- stderr\n%s\n", strings.Join(args, " "), code, out, errs), errs
}

// TestNoteNamesOtherDaemonsPalace runs commands on an empty palace P
// while a daemon serves palace Q: each says, once and last on stderr,
// which palace the daemon serves, the same with and without a daemon
// serving P, and no longer once Q's daemon stopped.
func TestNoteNamesOtherDaemonsPalace(t *testing.T) {
	q := newCLI(t)
	qRun := startRun(t, q, q.hive)
	qRun.idle(t, q)

	tmp := t.TempDir()
	p := newCLIAt(t, tmp, filepath.Join(tmp, "hive"))
	p.env["XDG_RUNTIME_DIR"] = q.env["XDG_RUNTIME_DIR"]
	scrub := func(s string) string {
		s = strings.ReplaceAll(s, q.palace, "$OTHER_PALACE")
		return pidRe.ReplaceAllString(s, "${1}$$PID")
	}
	wantNote := fmt.Sprintf("%sa running daemon (pid $PID) serves palace $OTHER_PALACE, not $PALACE; pass --palace $OTHER_PALACE to use it", notePrefix)
	endsWithNote := func(args []string, errs string) {
		t.Helper()
		lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
		if last := scrub(lines[len(lines)-1]); last != wantNote || strings.Count(errs, notePrefix) != 1 {
			t.Errorf("memminer %s: stderr %q, want it to end with %q", strings.Join(args, " "), errs, wantNote)
		}
	}

	var all strings.Builder
	direct := map[string]string{}
	for _, args := range otherDaemonSteps {
		tr, errs := transcript(p, args...)
		endsWithNote(args, errs)
		direct[strings.Join(args, " ")] = tr
		all.WriteString(tr)
	}
	golden(t, "other-daemon.txt", scrub(all.String()))

	// The same with a daemon serving P: status says so (active), and
	// conflicts scans the daemon's hive, so those two only keep the note.
	pHive := filepath.Join(tmp, "daemon-hive")
	if err := os.MkdirAll(filepath.Join(pHive, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	pRun := startRun(t, p, pHive)
	pRun.idle(t, p) // past its first mine, which commands report instead
	for _, args := range otherDaemonSteps {
		tr, errs := transcript(p, args...)
		switch args[0] {
		case "status":
			endsWithNote(args, errs)
		case "conflicts":
		default:
			if want := direct[strings.Join(args, " ")]; tr != want {
				t.Errorf("with a daemon serving the palace:\n%s\nwithout:\n%s", tr, want)
			}
		}
	}
	pRun.stop(t)

	// A palace with notes: the note comes with "no matching notes" only.
	p.ok("mine", filepath.Join(q.hive, "agents", "dwight"))
	args := []string{"search", "xylophone quartz zeppelin"}
	out, errs, code := p.run(args...)
	if out != "no matching notes\n" || code != exitError {
		t.Fatalf("memminer %s: exit %d, stdout %q", strings.Join(args, " "), code, out)
	}
	endsWithNote(args, errs)
	if _, errs, code := p.run("search", "db-2 failover"); code != 0 || strings.Contains(errs, notePrefix) {
		t.Errorf("a search that finds notes: exit %d, stderr %q", code, errs)
	}

	// Q's own palace, also by another path, is no other palace.
	link := filepath.Join(tmp, "q-link")
	if err := os.Symlink(q.palace, link); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"search", "zzzz no such thing"}, {"--palace", link, "search", "zzzz no such thing"}} {
		if _, errs, code := q.run(args...); code != exitError || strings.Contains(errs, notePrefix) {
			t.Errorf("memminer %s on the daemon's own palace: exit %d, stderr %q", strings.Join(args, " "), code, errs)
		}
	}
	// Nothing to point to once Q's daemon stopped.
	qRun.stop(t)
	if _, errs, code := p.run("search", "web bundle"); code != exitError || strings.Contains(errs, notePrefix) {
		t.Errorf("search after the daemon stopped: exit %d, stderr %q", code, errs)
	}
}

// TestNoteIgnoresKilledDaemon kills a daemon process with SIGKILL: its
// record stays behind, and the next command that finds nothing says
// nothing of it and removes the record.
func TestNoteIgnoresKilledDaemon(t *testing.T) {
	p, q := newCLI(t), newCLI(t)
	q.env["XDG_RUNTIME_DIR"] = p.env["XDG_RUNTIME_DIR"]
	dir := registry.Dir(func(k string) string { return p.env[k] })
	cmd, exited, stderr := startProcess(t, q, "run", "--hive", q.hive)
	testutil.WaitFor(t, "the daemon's record", func() bool {
		select {
		case err := <-exited:
			t.Fatalf("memminer run exited: %v\n%s", err, stderr)
		default:
		}
		recs, err := registry.List(context.Background(), dir)
		return err == nil && len(recs) == 1
	})
	if _, errs, _ := p.run("search", "web bundle"); !strings.Contains(errs, notePrefix+"a running daemon (pid "+fmt.Sprint(cmd.Process.Pid)+") serves palace "+q.palace) {
		t.Fatalf("search while the daemon runs: stderr %q", errs)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 1 {
		t.Fatalf("the killed daemon's record: %v, %v", entries, err)
	}
	for _, args := range otherDaemonSteps {
		if _, errs, _ := p.run(args...); strings.Contains(errs, notePrefix) {
			t.Errorf("memminer %s after the daemon was killed: stderr %q", strings.Join(args, " "), errs)
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Fatalf("the stale record was not removed: %v, %v", entries, err)
	}
}

// TestOtherPalacesNote checks the note's wording for the records the
// registry holds: none, the command's own palace, one other, several.
func TestOtherPalacesNote(t *testing.T) {
	c := newCLI(t)
	dir := registry.Dir(func(k string) string { return c.env[k] })
	tmp := t.TempDir()
	sockets := 0
	record := func(palace string) {
		t.Helper()
		sockets++
		socket := filepath.Join(tmp, fmt.Sprintf("%d.sock", sockets))
		testutil.HangUpServer(t, socket, "")
		if _, err := registry.Register(dir, registry.Record{PID: os.Getpid(), Palace: palace, Hive: "/srv/hive", Socket: socket}); err != nil {
			t.Fatal(err)
		}
	}
	a := newApp(&strings.Builder{}, &strings.Builder{}, func(k string) string { return c.env[k] })
	a.cfg.Palace = c.palace
	steps := []struct {
		add  string // a record of a daemon serving this palace
		want string
	}{
		{"", ""},
		{c.palace, ""},
		{"/srv/q", "memminer: note: a running daemon (pid $PID) serves palace /srv/q, not $PALACE; pass --palace /srv/q to use it"},
		// a second record of that palace names it once
		{"/srv/q", "memminer: note: a running daemon (pid $PID) serves palace /srv/q, not $PALACE; pass --palace /srv/q to use it"},
		{"/srv/my palace", "memminer: note: running daemons serve other palaces than $PALACE: /srv/my palace (pid $PID), /srv/q (pid $PID); pass --palace DIR to use one"},
	}
	for _, s := range steps {
		if s.add != "" {
			record(s.add)
		}
		got := pidRe.ReplaceAllString(c.scrub(a.otherPalacesNote(context.Background())), "${1}$$PID")
		if got != s.want {
			t.Errorf("after a record of %q:\n got %q\nwant %q", s.add, got, s.want)
		}
	}
	// Daemons of another hive than the command's serve no palace it meant.
	a.cfg.Hive = "/srv/other-hive"
	if got := a.otherPalacesNote(context.Background()); got != "" {
		t.Errorf("with another hive configured: %q, want no note", got)
	}
	a.cfg.Hive = "/srv/hive"
	if got := a.otherPalacesNote(context.Background()); !strings.Contains(got, "running daemons serve other palaces") {
		t.Errorf("with the daemons' hive configured: %q, want the note", got)
	}
}
