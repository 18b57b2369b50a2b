package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/govern"
	"github.com/memminer/memminer/palace"
)

// newGovernedCLI is a CLI whose hive is testdata/governed/hive: notes
// superseded in every marker form, approved, stale by date and by marker,
// due for review, and tagged. Dates in it are far in the past (or, for a
// review, the future), so its staleness does not change with the clock.
func newGovernedCLI(t *testing.T) *cli {
	t.Helper()
	c := newCLI(t)
	c.hive = filepath.Join(filepath.Dir(c.palace), "governed-hive")
	testutil.CopyDir(t, filepath.Join("testdata", "governed", "hive"), c.hive)
	return c
}

// governedSteps are the searches of TestGovernedSearch, each with its
// golden file under testdata/governed and exit code.
var governedSteps = []struct {
	golden string
	args   []string
	code   int
}{
	{"deploys.txt", []string{"search", "deploys release branch", "-n", "10"}, 0},
	{"deploys-superseded.json", []string{"search", "deploys", "--include-superseded", "-n", "20", "--json"}, 0},
	{"deploys-approved.txt", []string{"search", "deploys", "--status", "approved", "-n", "10"}, 0},
	{"database.txt", []string{"search", "database", "-n", "10"}, 0},
	{"database-fresh.txt", []string{"search", "database", "--fresh", "-n", "10"}, 0},
	{"tags.json", []string{"search", "database", "--tag", "postgres", "--tag", "#Runbook", "--json"}, 0},
	{"tag-one.txt", []string{"search", "database", "--tag", "postgres"}, 0},
	{"review.txt", []string{"search", "content security policy scripts"}, 0},
	{"since.txt", []string{"search", "cache", "--since", "2020-11-02"}, 0},
	{"until.txt", []string{"search", "cache", "--until", "2020-11-02"}, 0},
	{"since-until.txt", []string{"search", "cache", "--since", "2020-11-02", "--until", "2020-11-02"}, 0},
	{"nonsense.txt", []string{"search", "xyzzyplugh"}, exitError},
	{"nonsense.json", []string{"search", "xyzzyplugh", "--json"}, exitError},
	{"nonsense-words.txt", []string{"search", "flibbertigibbet", "quux", "zorblax"}, exitError},
	{"floor.json", []string{"search", "cache replica", "--min-relevance", "0.9", "--json"}, 0},
	{"nothing-fresh.txt", []string{"search", "redis", "--fresh"}, exitError},
	{"wake-up.json", []string{"wake-up", "--json", "--tokens", "600"}, 0},
	{"redis.txt", []string{"search", "redis"}, 0},
}

// TestGovernedSearch runs governedSteps directly and through a daemon: the
// output, stderr and exit code are the same, and the direct output is the
// golden file's.
func TestGovernedSearch(t *testing.T) {
	direct, served := newGovernedCLI(t), newGovernedCLI(t)
	direct.ok("mine", direct.hive)
	startRun(t, served, served.hive).idle(t, served)
	for _, s := range governedSteps {
		name := strings.Join(s.args, " ")
		dOut, dErr, dCode := runBoth(t, direct, served, s.args...)
		if dCode != s.code || dErr != "" {
			t.Errorf("memminer %s: exit %d, want %d; stderr %q", name, dCode, s.code, dErr)
		}
		testutil.Golden(t, filepath.Join("testdata", "governed", s.golden), dOut, *update)
	}
	// The caller's stale_after reaches the daemon: nothing is stale by age.
	for _, c := range []*cli{direct, served} {
		c.env["MEMMINER_STALE_AFTER"] = "never"
	}
	for _, args := range [][]string{{"wake-up", "--json", "--tokens", "600"}, {"search", "cache", "--fresh", "--json"}} {
		dOut, _, dCode := direct.run(args...)
		sOut, _, sCode := served.run(args...)
		if dOut != sOut || dCode != sCode || strings.Contains(dOut, "not updated since") {
			t.Errorf("memminer %v with stale_after never: direct (exit %d)\n%s\ndaemon (exit %d)\n%s", args, dCode, dOut, sCode, sOut)
		}
	}
}

// TestGovernedSearchUsage: bad filter values are usage errors naming the flag.
func TestGovernedSearchUsage(t *testing.T) {
	c := newGovernedCLI(t)
	c.ok("mine", c.hive)
	c.serve(t)
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--status", "draft"}, `--status: unknown status "draft"`},
		{[]string{"--since", "yesterday"}, "--since: "},
		{[]string{"--until", "2026-02-30"}, "--until: "},
		{[]string{"--since", "2020-11-03", "--until", "2020-11-01"}, "is before --since"},
		{[]string{"--min-relevance", "1.5"}, "--min-relevance 1.5 is not between 0 and 1"},
		{[]string{"--min-relevance", "NaN"}, "--min-relevance NaN is not between 0 and 1"},
		{[]string{"--tag", " "}, "--tag needs a tag"},
	} {
		_, stderr, code := c.run(append([]string{"search", "cache"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tt.msg) {
			t.Errorf("search cache %v: exit %d, %q; want %d and %q", tt.args, code, stderr, exitUsage, tt.msg)
		}
	}
}

// TestWakeupAndSearchAgreeOnSuperseded: the notes the palace holds as
// superseded (one classifier, at mine time) never reach the wake-up digest,
// and search shows them only when asked, marked.
func TestWakeupAndSearchAgreeOnSuperseded(t *testing.T) {
	c := newGovernedCLI(t)
	c.ok("mine", c.hive)
	c.serve(t)
	p, err := palace.Open(context.Background(), c.palace, palace.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var superseded, kept []palace.Note
	for _, w := range p.Wings() {
		for _, n := range p.Notes(w.ID) {
			if n.Governance.Status == govern.Superseded {
				superseded = append(superseded, n)
			} else {
				kept = append(kept, n)
			}
		}
	}
	p.Close()
	if len(superseded) != 9 {
		t.Fatalf("%d superseded notes, want the fixture's 9", len(superseded))
	}
	var digest struct {
		Story []struct {
			Text       string `json:"text"`
			Superseded bool   `json:"superseded"`
		} `json:"story"`
	}
	if err := json.Unmarshal([]byte(c.ok("wake-up", "--tokens", "100000", "--json")), &digest); err != nil {
		t.Fatal(err)
	}
	inStory := map[string]bool{}
	for _, it := range digest.Story {
		inStory[it.Text] = true
		if it.Superseded {
			t.Errorf("wake-up item marked superseded: %q", it.Text)
		}
	}
	for _, n := range superseded {
		if inStory[flatten(n.Text)] {
			t.Errorf("superseded note in the digest: %q", n.Text)
		}
		query := strings.Trim(n.Text, "~")
		if _, found := searchFor(t, c, n.Text, query, "-n", "1000", "--json"); found {
			t.Errorf("search %q returned the superseded note", query)
		}
		if marked, found := searchFor(t, c, n.Text, query, "--include-superseded", "-n", "1000", "--json"); !found || !marked {
			t.Errorf("search %q --include-superseded: found %v, marked superseded %v", query, found, marked)
		}
	}
	// The digest still tells the rest of the story.
	if len(digest.Story) < len(kept)/2 {
		t.Errorf("digest has %d items of %d notes that are not superseded", len(digest.Story), len(kept))
	}
}

// searchFor runs a JSON search and tells whether a hit has text, and
// whether that hit is marked superseded. No match (exit 1) finds nothing.
func searchFor(t *testing.T, c *cli, text string, args ...string) (superseded, found bool) {
	t.Helper()
	out, stderr, code := c.run(append([]string{"search"}, args...)...)
	if code != 0 && code != exitError || stderr != "" {
		t.Fatalf("search %v: exit %d, %s", args, code, stderr)
	}
	var res struct {
		Results []struct {
			Text       string `json:"text"`
			Superseded bool   `json:"superseded"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Results {
		if r.Text == text {
			return r.Superseded, true
		}
	}
	return false, false
}

// flatten is the digest's rendering of a note on one line.
func flatten(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestStaleAfterSetting: the config's stale_after is the hive's default,
// and a file's own stale_after wins over it.
func TestStaleAfterSetting(t *testing.T) {
	c := newGovernedCLI(t)
	c.ok("mine", c.hive)
	c.serve(t)
	stale := func(query string) bool {
		t.Helper()
		var res struct {
			Results []struct {
				Stale bool `json:"stale"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(c.ok("search", query, "-n", "1", "--json")), &res); err != nil || len(res.Results) != 1 {
			t.Fatalf("search %q: %v %+v", query, err, res)
		}
		return res.Results[0].Stale
	}
	if !stale("standby database failover") || stale("web bundle vite") {
		t.Fatal("default stale_after: the 2020 note is not stale, or the file's stale_after: never is ignored")
	}
	c.env["MEMMINER_STALE_AFTER"] = "never"
	if stale("standby database failover") {
		t.Fatal("stale_after never from the environment ignored")
	}
	c.env["MEMMINER_STALE_AFTER"] = "soon"
	if _, stderr, code := c.run("search", "database"); code == 0 || !strings.Contains(stderr, "stale_after") {
		t.Fatalf("bad stale_after accepted: exit %d, %s", code, stderr)
	}
}
