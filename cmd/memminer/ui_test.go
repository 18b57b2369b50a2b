package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/bearer"
	"github.com/memminer/memminer/internal/testutil"
)

// uiTestToken is the token the handler tests serve with.
const uiTestToken = "ui-test-token-0123456789abcdefghij"

// uiTestHost is the address the handler tests' requests name.
const uiTestHost = "127.0.0.1:8766"

// newUIFor is the page's handler for c's settings, as memminer ui serves
// it on uiTestHost.
func newUIFor(t *testing.T, c *cli) http.Handler {
	t.Helper()
	a := newApp(io.Discard, &syncBuffer{}, func(k string) string { return c.env[k] })
	cmd, _, err := a.rootCmd().Find([]string{"ui"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.resolve(cmd); err != nil {
		t.Fatal(err)
	}
	u, err := a.newUI(uiTestToken, uiTestHost)
	if err != nil {
		t.Fatal(err)
	}
	return u.handler()
}

// uiGet is a browser's GET of path, logged in (the cookie set).
func uiGet(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "http://"+uiTestHost+path, nil)
	r.AddCookie(&http.Cookie{Name: uiCookie, Value: uiTestToken})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

// uiPost is the page's script sending form to path: the token in its
// header, the page's own Origin.
func uiPost(t *testing.T, h http.Handler, path string, form url.Values) (int, uiResult) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "http://"+uiTestHost+path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Origin", "http://"+uiTestHost)
	r.Header.Set(uiTokenHeader, uiTestToken)
	r.AddCookie(&http.Cookie{Name: uiCookie, Value: uiTestToken})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var res uiResult
	if w.Header().Get("Content-Type") == "application/json" {
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
			t.Fatalf("POST %s: %v: %s", path, err, w.Body)
		}
	}
	return w.Code, res
}

// TestUIGuard: every request needs the token; the URL's token is traded
// for an HttpOnly, SameSite=Strict cookie; a state change needs the token
// in a header (the cookie alone is what a forged request carries) and the
// page's own Origin; a Host other than the address served is refused.
func TestUIGuard(t *testing.T) {
	c := newPackCLI(t)
	h := newUIFor(t, c)
	cookie := &http.Cookie{Name: uiCookie, Value: uiTestToken}
	decide := "action=approve&ref=0123456789abcdef0123456789abcdef"
	tests := []struct {
		name, method, target, host, body string
		cookie                           *http.Cookie
		headers                          map[string]string
		want                             int
	}{
		{name: "no token", target: "/", want: http.StatusUnauthorized},
		{name: "no token, static file", target: "/static/ui.js", want: http.StatusUnauthorized},
		{name: "wrong cookie", target: "/", cookie: &http.Cookie{Name: uiCookie, Value: "guess"}, want: http.StatusUnauthorized},
		{name: "wrong token in URL", target: "/?token=guess", want: http.StatusUnauthorized},
		{name: "token in URL", target: "/inbox?token=" + uiTestToken, want: http.StatusSeeOther},
		{name: "cookie", target: "/", cookie: cookie, want: http.StatusOK},
		{name: "cookie, static file", target: "/static/ui.css", cookie: cookie, want: http.StatusOK},
		{name: "bearer header", target: "/inbox", headers: map[string]string{"Authorization": "Bearer " + uiTestToken}, want: http.StatusOK},
		{name: "another Host", target: "/", host: "evil.example:8766", cookie: cookie, want: http.StatusMisdirectedRequest},
		{name: "localhost", target: "/", host: "localhost:8766", cookie: cookie, want: http.StatusOK},
		{name: "POST with the cookie alone", method: http.MethodPost, target: "/inbox/decide", body: decide, cookie: cookie, want: http.StatusUnauthorized},
		{name: "POST from another origin", method: http.MethodPost, target: "/inbox/decide", body: decide, cookie: cookie,
			headers: map[string]string{uiTokenHeader: uiTestToken, "Origin": "http://evil.example"}, want: http.StatusForbidden},
		{name: "POST with a wrong header", method: http.MethodPost, target: "/inbox/decide", body: decide, cookie: cookie,
			headers: map[string]string{uiTokenHeader: "guess", "Origin": "http://" + uiTestHost}, want: http.StatusUnauthorized},
		{name: "POST without an action", method: http.MethodPost, target: "/inbox/decide", body: "ref=x",
			headers: map[string]string{uiTokenHeader: uiTestToken, "Origin": "http://" + uiTestHost}, want: http.StatusBadRequest},
		{name: "GET of a change", target: "/inbox/decide?" + decide, cookie: cookie, want: http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = http.MethodGet
			}
			r := httptest.NewRequest(method, "http://"+uiTestHost+tt.target, strings.NewReader(tt.body))
			if tt.host != "" {
				r.Host = tt.host
			}
			if tt.body != "" {
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			if tt.cookie != nil {
				r.AddCookie(tt.cookie)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.want {
				t.Fatalf("%s %s: %d, want %d: %s", method, tt.target, w.Code, tt.want, w.Body)
			}
			if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
				t.Errorf("Content-Security-Policy %q", csp)
			}
			if w.Code != http.StatusSeeOther {
				return
			}
			set := w.Header().Get("Set-Cookie")
			if !strings.Contains(set, uiCookie+"="+uiTestToken) || !strings.Contains(set, "HttpOnly") || !strings.Contains(set, "SameSite=Strict") {
				t.Errorf("Set-Cookie %q", set)
			}
			if loc := w.Header().Get("Location"); loc != "/inbox" {
				t.Errorf("Location %q: the token must leave the URL", loc)
			}
		})
	}
}

// hostile is note text a browser would run if the page did not escape it.
const hostile = `The proxy answers <script>alert("pwned")</script> & <img src=x onerror=alert(1)>`

// TestUIEscapesNotes: a note is data: markup in it is text on the page.
func TestUIEscapesNotes(t *testing.T) {
	c := newPackCLI(t)
	c.ok("remember", "--wing", "ops", "--confidence", "hypothesis", hostile)
	h := newUIFor(t, c)
	code, body := uiGet(t, h, "/inbox")
	if code != http.StatusOK {
		t.Fatalf("GET /inbox: %d %s", code, body)
	}
	if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
		t.Fatalf("the note's markup is in the page unescaped:\n%s", body)
	}
	if !strings.Contains(body, html.EscapeString(hostile)) {
		t.Fatalf("the note's text is not on the page, escaped:\n%s", body)
	}
}

// TestUIOverview: the overview shows what status --json says (wings,
// the inbox, the open conflicts, no daemon or the one running) and the
// open handoffs, each escaped; the same with and without the daemon.
func TestUIOverview(t *testing.T) {
	for _, withDaemon := range []bool{false, true} {
		t.Run(fmt.Sprintf("daemon=%v", withDaemon), func(t *testing.T) {
			c := newPackCLI(t)
			if withDaemon {
				startRun(t, c, c.hive).idle(t, c)
			}
			c.ok("remember", "--wing", "ops", "--confidence", "hypothesis", "The cache warms up in five minutes")
			c.ok("handoff", "--wing", "ops", "--to", "legacy", "Finish the <b>db-2</b> runbook")
			if err := os.WriteFile(filepath.Join(c.hive, "agents", "legacy", cleanCopy), []byte("- a copy\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			code, body := uiGet(t, newUIFor(t, c), "/")
			daemon := "not running: the page reads the palace itself"
			if withDaemon {
				daemon = "running, pid "
			}
			for _, want := range []string{
				"<td>legacy</td>", "<td>ops</td>",
				`<a href="/inbox">1 note waits in the inbox</a>`,
				`<a href="/conflicts">1 open conflict</a>`,
				daemon,
				"<td>ops</td><td>legacy</td>",
				"Finish the &lt;b&gt;db-2&lt;/b&gt; runbook",
			} {
				if !strings.Contains(body, want) {
					t.Errorf("the overview lacks %q", want)
				}
			}
			if code != http.StatusOK || t.Failed() {
				t.Fatalf("GET /: %d\n%s", code, body)
			}
		})
	}
}

// uiRefs are the refs of the inbox page's pending items, in order.
func uiRefs(t *testing.T, h http.Handler) []string {
	t.Helper()
	_, body := uiGet(t, h, "/inbox")
	var refs []string
	for _, m := range regexp.MustCompile(`<li class="item" data-ref="([0-9a-f]+)">`).FindAllStringSubmatch(body, -1) {
		refs = append(refs, m[1])
	}
	return refs
}

// TestUIInboxDecide: approving from the page writes the note into memory
// as inbox approve does, several items are rejected at once, and a
// rejection without a note is refused by the inbox's own rule. The same
// with and without the daemon.
func TestUIInboxDecide(t *testing.T) {
	for _, withDaemon := range []bool{false, true} {
		t.Run(fmt.Sprintf("daemon=%v", withDaemon), func(t *testing.T) {
			c := newPackCLI(t)
			if withDaemon {
				startRun(t, c, c.hive).idle(t, c)
			}
			c.ok("remember", "--wing", "ops", "--confidence", "hypothesis", "The load balancer drops idle connections after ten minutes")
			c.ok("remember", "--wing", "ops", "--risk", "high", "Drop the audit table before the migration")
			c.ok("remember", "--wing", "ops", "--risk", "high", "Rotate the TLS keys by hand")
			h := newUIFor(t, c)
			refs := uiRefs(t, h)
			if len(refs) != 3 {
				t.Fatalf("pending refs %v, want 3", refs)
			}
			code, res := uiPost(t, h, "/inbox/decide", url.Values{"action": {"reject"}, "ref": refs[1:]})
			if code != http.StatusUnprocessableEntity || len(res.Results) != 2 || res.Results[0].OK || !strings.Contains(res.Results[0].Message, "a rejection needs a note") {
				t.Fatalf("reject without a note: %d %+v", code, res)
			}
			code, res = uiPost(t, h, "/inbox/decide", url.Values{"action": {"approve"}, "ref": refs[:1], "note": {"seen in the proxy logs"}})
			if code != http.StatusOK || len(res.Results) != 1 || !strings.Contains(res.Results[0].Message, "approved agents/ops/inbox.md:3 into agents/ops/memory.laptop.md:") {
				t.Fatalf("approve: %d %+v", code, res)
			}
			code, res = uiPost(t, h, "/inbox/decide", url.Values{"action": {"reject"}, "ref": refs[1:], "note": {"kept (legal)"}})
			if code != http.StatusOK || len(res.Results) != 2 {
				t.Fatalf("reject two: %d %+v", code, res)
			}
			mem := testutil.ReadFile(t, filepath.Join(c.hive, "agents", "ops", "memory.laptop.md"))
			if !strings.Contains(mem, "- The load balancer drops idle connections after ten minutes (status: approved ") || !strings.Contains(mem, " by tester) — seen in the proxy logs") {
				t.Errorf("memory.laptop.md:\n%s", mem)
			}
			box := testutil.ReadFile(t, filepath.Join(c.hive, "agents", "ops", "inbox.md"))
			if n := strings.Count(box, " by tester: kept [legal])\n"); n != 2 {
				t.Errorf("inbox.md has %d rejections, want 2:\n%s", n, box)
			}
			if refs := uiRefs(t, h); len(refs) != 0 {
				t.Errorf("still pending: %v", refs)
			}
			if out := c.ok("search", "load balancer idle connections"); !strings.Contains(out, "approved") {
				t.Errorf("the approved note is not searchable as approved:\n%s", out)
			}
		})
	}
}

// reviewInPage finds the review of each removal the conflicts page
// proposes, with the note's text.
var reviewInPage = regexp.MustCompile(`name="reviewed" value="([0-9a-f]{16})"> remove this note \(review <code>[0-9a-f]{16}</code>\)(?:<span class="heading">[^<]*</span>)?<pre class="text">([^<]*)</pre>`)

// twoRemovals is a conflict copy of jim's memory.md that removed both of
// mergeSeed's notes.
const twoRemovals = "# Jim\n\n## Office\n"

// TestUIConflictsMerge: the conflicts page shows a copy's proposed
// removals apart, each with its own box, and applying its merge removes
// the ticked ones and no other, bound to the review the page showed with
// each: a copy changed since is not merged.
func TestUIConflictsMerge(t *testing.T) {
	const standUp, printer = "Stand-up is at 9:30.", "The printer is on the second floor."
	without := func(notes ...string) func(ours string) string {
		return func(ours string) string {
			for _, n := range notes {
				ours = strings.Replace(ours, "- "+n+"\n", "", 1)
			}
			return ours
		}
	}
	tests := []struct {
		name string
		tick []string
		// change replaces the copy after the page was read.
		change    bool
		wantOK    bool
		wantFile  func(ours string) string
		wantCopy  bool
		wantInMsg string
	}{
		{name: "none ticked", wantOK: true, wantFile: without(), wantInMsg: "merged into agents/jim/memory.md; the copy"},
		{name: "one ticked", tick: []string{standUp}, wantOK: true, wantFile: without(standUp), wantInMsg: "merged into agents/jim/memory.md, removing 1 note;"},
		{name: "both ticked", tick: []string{standUp, printer}, wantOK: true, wantFile: without(standUp, printer), wantInMsg: "merged into agents/jim/memory.md, removing 2 notes;"},
		{name: "one ticked, the copy changed since", tick: []string{standUp}, change: true, wantFile: without(), wantCopy: true, wantInMsg: "not reviewed as they are now"},
	}
	for _, tt := range tests {
		for _, withDaemon := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/daemon=%v", tt.name, withDaemon), func(t *testing.T) {
				c, memory, ours := removalsHistory(t)
				if withDaemon {
					startRun(t, c, c.hive).idle(t, c)
				}
				copyPath := filepath.Join(filepath.Dir(memory), cleanCopy)
				if err := os.WriteFile(copyPath, []byte(twoRemovals), 0o644); err != nil {
					t.Fatal(err)
				}
				h := newUIFor(t, c)
				code, body := uiGet(t, h, "/conflicts")
				reviews := map[string]string{}
				for _, m := range reviewInPage.FindAllStringSubmatch(body, -1) {
					reviews[html.UnescapeString(m[2])] = m[1]
				}
				if code != http.StatusOK || len(reviews) != 2 || reviews[standUp] == "" || reviews[printer] == "" {
					t.Fatalf("GET /conflicts: %d, reviews %v, want one for each removal:\n%s", code, reviews, body)
				}
				if tt.change {
					if err := os.WriteFile(copyPath, nil, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				form := url.Values{"copy": {copyPath}}
				for _, n := range tt.tick {
					form.Add("reviewed", reviews[n])
				}
				_, res := uiPost(t, h, "/conflicts/merge", form)
				if len(res.Results) != 1 || res.Results[0].OK != tt.wantOK || !strings.Contains(res.Results[0].Message, tt.wantInMsg) {
					t.Fatalf("apply: %+v", res)
				}
				if data := testutil.ReadFile(t, memory); data != tt.wantFile(ours) {
					t.Errorf("file:\n%s\nwant\n%s", data, tt.wantFile(ours))
				}
				if _, err := os.Stat(copyPath); (err == nil) != tt.wantCopy {
					t.Errorf("copy kept: %v, want %v", err == nil, tt.wantCopy)
				}
			})
		}
	}
}

// TestUIPacks: the packs page shows a pack flagged for review; marking
// it reviewed from the page writes the mark pack --mark writes, and the
// flag goes; a mark that is no mark is refused by pack's own rule.
func TestUIPacks(t *testing.T) {
	c := newPackCLI(t)
	for range 3 {
		c.ok("pack", "deploy", "--mark", "bad", "--note", "missed the <b>failover</b>")
	}
	h := newUIFor(t, c)
	code, body := uiGet(t, h, "/packs")
	if code != http.StatusOK || !strings.Contains(body, "review needed</span> 3 bad in a row: missed the &lt;b&gt;failover&lt;/b&gt;") || !strings.Contains(body, `data-pack="migrate"`) {
		t.Fatalf("GET /packs: %d\n%s", code, body)
	}
	code, res := uiPost(t, h, "/packs/mark", url.Values{"name": {"deploy"}, "kind": {"great"}})
	if code != http.StatusUnprocessableEntity || len(res.Results) != 1 || !strings.Contains(res.Results[0].Message, "want good, bad or reviewed") {
		t.Fatalf("mark great: %d %+v", code, res)
	}
	code, res = uiPost(t, h, "/packs/mark", url.Values{"name": {"deploy"}, "kind": {"reviewed"}, "note": {"rewrote the use list"}})
	if code != http.StatusOK || len(res.Results) != 1 || res.Results[0].Message != "marked pack deploy reviewed (0 good, 3 bad)" {
		t.Fatalf("mark reviewed: %d %+v", code, res)
	}
	if _, body := uiGet(t, h, "/packs"); strings.Contains(body, "review needed") {
		t.Errorf("deploy still needs review:\n%s", body)
	}
	if log := testutil.ReadFile(t, filepath.Join(c.hive, "packs", "deploy.marks")); !strings.Contains(log, " reviewed tester: rewrote the use list\n") {
		t.Errorf("deploy.marks:\n%s", log)
	}
	if out := c.ok("pack", "--list"); !strings.Contains(out, "deploy  never used, 0 good, 3 bad, ok\n") {
		t.Errorf("pack --list:\n%s", out)
	}
}

// TestUIMemory: the memory page answers as memminer search does (the
// same hits, in order), filtered by wing; the note's text is escaped; a
// query nothing answers says so.
func TestUIMemory(t *testing.T) {
	c := newPackCLI(t)
	c.ok("remember", "--wing", "ops", "The <em>staging</em> database is rebuilt every night")
	h := newUIFor(t, c)
	var want struct{ Results []struct{ ID string } }
	out, _ := c.runRaw("search", "staging database", "--json") // unscrubbed: the ids
	if err := json.Unmarshal([]byte(out), &want); err != nil || len(want.Results) == 0 {
		t.Fatalf("search --json: %v %+v", err, want)
	}
	code, body := uiGet(t, h, "/memory?q=staging+database")
	var got []string
	for _, m := range regexp.MustCompile(`note <code>([0-9a-f]{32})</code>`).FindAllStringSubmatch(body, -1) {
		got = append(got, m[1])
	}
	var ids []string
	for _, r := range want.Results {
		ids = append(ids, r.ID)
	}
	if code != http.StatusOK || strings.Join(got, " ") != strings.Join(ids, " ") {
		t.Fatalf("GET /memory: %d, hits %v, want search's %v\n%s", code, got, ids, body)
	}
	if !strings.Contains(body, "The &lt;em&gt;staging&lt;/em&gt; database is rebuilt every night") {
		t.Errorf("the note is not on the page, escaped:\n%s", body)
	}
	if _, body := uiGet(t, h, "/memory?q=staging+database&wing=legacy"); strings.Contains(body, "staging&lt;/em&gt; database") {
		t.Errorf("wing=legacy shows an ops note:\n%s", body)
	}
	if _, body := uiGet(t, h, "/memory?q=zebra+quantum+harmonica"); !strings.Contains(body, "Nothing answers this.") {
		t.Errorf("a query nothing answers:\n%s", body)
	}
	// --explain's view: each hit's evidence, the query's words.
	if _, body := uiGet(t, h, "/memory?q=staging+database&explain=1"); !strings.Contains(body, "<h2>Why: the query's words</h2>") ||
		!strings.Contains(body, "<li><strong>staging</strong>: in the palace") || !strings.Contains(body, `<div class="meta evidence">coverage `) {
		t.Errorf("explain:\n%s", body)
	}
	if _, body := uiGet(t, h, "/memory?q=staging&status=bogus"); !strings.Contains(body, `class="error"`) {
		t.Errorf("status=bogus is not refused:\n%s", body)
	}
}

// uiURLInLog finds the page's address in run --ui's log.
var uiURLInLog = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/)`)

// TestRunServesUI: memminer run --ui serves the page beside the daemon,
// guarded by the same token, and an approval from it goes through.
func TestRunServesUI(t *testing.T) {
	c := newPackCLI(t)
	c.ok("remember", "--wing", "ops", "--confidence", "hypothesis", "The load balancer drops idle connections after ten minutes")
	r := startRun(t, c, c.hive, "--ui")
	r.idle(t, c)
	m := uiURLInLog.FindStringSubmatch(r.stderr.String())
	if m == nil {
		t.Fatalf("run --ui logs no address:\n%s", r.stderr)
	}
	token, _, err := bearer.Load(filepath.Join(c.env["XDG_CONFIG_HOME"], "memminer", bearer.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.stderr.String(), token) {
		t.Errorf("the log holds the token:\n%s", r.stderr)
	}
	send := func(method, path, body string, auth bool) (int, string) {
		t.Helper()
		headers := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
		if auth {
			headers[uiTokenHeader] = token
		}
		return sendHTTP(t, method, m[1]+strings.TrimPrefix(path, "/"), body, headers)
	}
	if code, _ := send(http.MethodGet, "/inbox", "", false); code != http.StatusUnauthorized {
		t.Errorf("GET /inbox without the token: %d", code)
	}
	code, body := send(http.MethodGet, "/inbox", "", true)
	ref := regexp.MustCompile(`data-ref="([0-9a-f]+)"`).FindStringSubmatch(body)
	if code != http.StatusOK || ref == nil {
		t.Fatalf("GET /inbox: %d\n%s", code, body)
	}
	if code, body := send(http.MethodPost, "/inbox/decide", "action=approve&ref="+ref[1], true); code != http.StatusOK {
		t.Fatalf("approve: %d %s", code, body)
	}
	mem := testutil.ReadFile(t, filepath.Join(c.hive, "agents", "ops", "memory.laptop.md"))
	if !strings.Contains(mem, "- The load balancer drops idle connections after ten minutes (status: approved ") {
		t.Errorf("memory.laptop.md:\n%s", mem)
	}
}

// TestUIUsage: the page binds loopback only, and run's --ui-listen needs
// --ui; both are usage errors (exit 2) saying what to do.
func TestUIUsage(t *testing.T) {
	c := newPackCLI(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"ui", "--listen", "0.0.0.0:8766"}, `--listen address "0.0.0.0:8766" is reachable from other machines; use 127.0.0.1:8766 or ::1`},
		{[]string{"ui", "--listen", "8766"}, "want host:port, e.g. 127.0.0.1:0"},
		{[]string{"ui", "extra"}, "ui takes no arguments"},
		{[]string{"run", "--hive", c.hive, "--ui-listen", "127.0.0.1:0"}, "--ui-listen goes with --ui"},
		{[]string{"run", "--hive", c.hive, "--ui", "--ui-listen", "192.0.2.1:8766"}, "--ui-listen address \"192.0.2.1:8766\" is reachable from other machines"},
	}
	for _, tt := range tests {
		out, errs, code := c.run(tt.args...)
		if code != 2 || out != "" || !strings.Contains(errs, tt.want) {
			t.Errorf("memminer %s: exit %d, stdout %q, stderr %q; want 2 and %q", strings.Join(tt.args, " "), code, out, errs, tt.want)
		}
	}
}
