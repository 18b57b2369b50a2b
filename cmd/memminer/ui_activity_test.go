package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestUIActivity: the activity page draws each wing's notes over time,
// its line reaching the wing's notes at the end, and, with a daemon, what
// its metrics counted (the searches and remembers served, their latency);
// without one it says the daemon's metrics are its own.
func TestUIActivity(t *testing.T) {
	for _, withDaemon := range []bool{false, true} {
		t.Run(fmt.Sprintf("daemon=%v", withDaemon), func(t *testing.T) {
			c := newPackCLI(t)
			if withDaemon {
				startRun(t, c, c.hive).idle(t, c)
			}
			c.ok("remember", "--wing", "ops", "The <b>staging</b> database is rebuilt every night")
			c.ok("search", "staging database")
			var st struct {
				Wings []struct {
					ID    string
					Notes int
				}
			}
			if err := json.Unmarshal([]byte(statusJSON(c)), &st); err != nil || len(st.Wings) == 0 {
				t.Fatalf("status --json: %v %+v", err, st)
			}
			code, body := uiGet(t, newUIFor(t, c), "/activity")
			if code != http.StatusOK {
				t.Fatalf("GET /activity: %d\n%s", code, body)
			}
			most := 0
			for _, w := range st.Wings {
				most = max(most, w.Notes)
				if want := fmt.Sprintf("%s: %d %s", w.ID, w.Notes, plural(w.Notes, "note", "notes")); !strings.Contains(body, "</svg> "+want+"</li>") {
					t.Errorf("the legend lacks %q:\n%s", want, body)
				}
			}
			// The first line is the largest wing's: it ends at the top.
			line := regexp.MustCompile(`<polyline class="s0" points="([^"]*) "><title>[^:]*: (\d+) `).FindStringSubmatch(body)
			if line == nil || line[2] != fmt.Sprint(most) || !strings.HasSuffix(line[1], ",8") {
				t.Errorf("the largest wing's line %q, want %d notes ending at the top (y 8)", line, most)
			}
			if strings.Contains(body, "<b>staging") {
				t.Errorf("a note's markup is on the page")
			}
			noDaemon := strings.Contains(body, "No daemon serves this palace")
			if noDaemon == withDaemon {
				t.Errorf("daemon %v, the page says no daemon: %v\n%s", withDaemon, noDaemon, body)
			}
			if !withDaemon {
				return
			}
			for _, want := range []string{
				` 1 search and 1 remember served over its socket`,
				`<figcaption>searches per minute, the last hour</figcaption>`,
				`remember latency \(count per bucket\)</figcaption>\s*</figure><p class="muted">1 in all, mean [0-9.]+[µm]?s</p>`,
				`search latency \(count per bucket\)</figcaption>\s*</figure><p class="muted">1 in all, mean [0-9.]+[µm]?s</p>`,
				`<title>request, ok: 1</title>`,
				`<title>[0-9]{2}:[0-9]{2}: 1 search</title>`,
				`<title>[0-9]{2}:[0-9]{2}: 1 remember</title>`,
			} {
				if !regexp.MustCompile(want).MatchString(body) {
					t.Errorf("the page lacks %q:\n%s", want, body)
				}
			}
		})
	}
}

// statusJSON is status --json as printed, unscrubbed.
func statusJSON(c *cli) string {
	out, _ := c.runRaw("status", "--json")
	return out
}
