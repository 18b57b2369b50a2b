package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/daemon"
	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/service/api"
)

// TestRememberDaemonDiesAnswering: a daemon that wrote the note and died
// before it answered is not a failure, and the note is not written twice
// (issue 23, item 6).
func TestRememberDaemonDiesAnswering(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	c.ok("mine", c.hive)
	path := filepath.Join(c.hive, "agents", "jim", "memory.laptop.md")
	ln, err := net.Listen("unix", daemon.SocketPath(c.palace))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req api.RememberRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Error(err)
		}
		// What the daemon writes, then it dies: no answer at all.
		note := "# jim's memory\n\n- " + req.Text + " (added " + time.Now().Format(time.DateOnly) + ")\n"
		if err := os.WriteFile(path, []byte(note), 0o644); err != nil {
			t.Error(err)
		}
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.Close()
		ln.Close()
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	out, errs, code := c.run("remember", "--wing", "jim", "The fire drill is on Friday")
	if code != 0 || !strings.HasPrefix(out, "remembered in agents/jim/memory.laptop.md:3 (note ") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want the note reported written", code, out, errs)
	}
	if got := testutil.ReadFile(t, path); strings.Count(got, "fire drill") != 1 {
		t.Fatalf("memory.laptop.md = %q, want the note once", got)
	}
	if out := c.ok("search", "fire drill", "--wing", "jim", "-n", "1"); !strings.Contains(out, "memory.laptop.md:3") {
		t.Errorf("search: %s", out)
	}
}

// TestRememberDifferentFactsWithTheModel: with the built-in model, pairs
// of different facts that read alike are all written (issue 23, item 1:
// 7 of 10 were dropped as "already remembered"); the same fact restated
// is not.
func TestRememberDifferentFactsWithTheModel(t *testing.T) {
	tmp := t.TempDir()
	c := newCLIAt(t, tmp, filepath.Join(tmp, "hive"))
	c.env["MEMMINER_MODEL_CACHE"] = realModelCache(t)
	c.env["MEMMINER_EMBEDDING_MODEL"] = "use-lite"
	c.env["MEMMINER_HIVE"] = c.hive
	if err := os.MkdirAll(filepath.Join(c.hive, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	pairs := [][2]string{
		{"Deploy to production with make deploy", "Do NOT deploy to production with make deploy"},
		{"db-2 is the primary", "db-3 is the primary since the failover"},
		{"The API listens on port 8080", "The API listens on port 9090"},
		{"Backups run nightly at 02:00", "Backups run nightly at 04:00"},
		{"Alice owns the billing service", "Bob owns the billing service"},
		{"Releases ship on Tuesdays", "Releases ship on Thursdays"},
		{"The staging cache is enabled", "The staging cache is disabled"},
		{"Use Node 18 for the web build", "Use Node 20 for the web build"},
		{"The VPN certificate expires in March", "The VPN certificate expires in June"},
		{"Tests run on every push", "Tests never run on every push"},
	}
	similar := 0
	for _, p := range pairs {
		if out, errs, code := c.run("remember", "--wing", "b", p[0]); code != 0 {
			t.Fatalf("remember %q: exit %d: %s%s", p[0], code, out, errs)
		}
		out := c.ok("remember", "--wing", "b", p[1])
		if !strings.HasPrefix(out, "remembered in agents/b/memory.laptop.md:") {
			t.Errorf("%q after %q: %q, want it written", p[1], p[0], out)
		}
		if strings.Contains(out, "\nsimilar to note ") {
			similar++
		}
	}
	if similar == 0 {
		t.Error("no new fact was said to be similar to its older one")
	}
	if out := c.ok("remember", "--wing", "b", "db-2 is the PRIMARY."); !strings.HasPrefix(out, "already remembered: agents/b/memory.laptop.md:") {
		t.Errorf("the same fact restated: %q", out)
	}
	t.Logf("%d of %d new facts written with a similar-to hint", similar, len(pairs))
}

// TestMachineFilesAreTheAgentsMemory: the files several machines wrote
// for one agent are one wing's memory to search, index, status and
// wake-up, beside an older memory.md.
func TestMachineFilesAreTheAgentsMemory(t *testing.T) {
	c := newCLI(t)
	c.env["MEMMINER_HIVE"] = c.hive
	c.env["MEMMINER_MACHINE"] = "server"
	c.ok("remember", "--wing", "pam", "The zeppelin hangar opens at dawn")
	c.env["MEMMINER_MACHINE"] = "laptop"
	c.ok("remember", "--wing", "pam", "Pinned: the yurt key is under the mat")
	out := c.ok("search", "zeppelin hangar", "--wing", "pam", "-n", "1")
	if !strings.Contains(out, "agents/pam/memory.server.md:7") { // under ## Notes, after the frontmatter
		t.Errorf("search: %s", out)
	}
	var idx struct {
		Wings []struct {
			Wing  string `json:"wing"`
			Files []struct {
				Source string `json:"source"`
			} `json:"files"`
		} `json:"wings"`
	}
	if err := json.Unmarshal([]byte(c.ok("index", "--json")), &idx); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, w := range idx.Wings {
		if w.Wing == "pam" {
			for _, f := range w.Files {
				files = append(files, f.Source)
			}
		}
	}
	for _, want := range []string{"agents/pam/memory.md", "agents/pam/memory.laptop.md", "agents/pam/memory.server.md"} {
		if !strings.Contains(strings.Join(files, " "), want) {
			t.Errorf("index lists %v for pam, want %s among them", files, want)
		}
	}
	if out := c.ok("wake-up", "--wing", "pam"); !strings.Contains(out, "yurt key") {
		t.Errorf("wake-up leaves out the pinned note of the laptop's file:\n%s", out)
	}
}
