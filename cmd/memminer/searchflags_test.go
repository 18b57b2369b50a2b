package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
)

// searchFlagCases are search's wing and output flags: each one's golden
// stdout (when it has one), exit code and a part of its stderr.
var searchFlagCases = []struct {
	golden string
	args   []string
	code   int
	stderr string
}{
	{"search-wings.txt", []string{"search", "release", "--wing", "pam", "--wing", "Angela", "-n", "3"}, exitOK, ""},
	{"search-exclude-wing.json", []string{"search", "release", "--exclude-wing", "angela", "-n", "2", "--json"}, exitOK, ""},
	{"search-files.txt", []string{"search", "release", "-l"}, exitOK, ""},
	{"search-files-wing.txt", []string{"search", "release", "--files-with-matches", "--exclude-wing", "dwight", "-n", "2"}, exitOK, ""},
	{"search-count.txt", []string{"search", "release", "-c"}, exitOK, ""},
	{"search-count-wings.txt", []string{"search", "database", "--count", "--wing", "dwight", "--wing", "angela", "--wing", "dwight"}, exitOK, ""},
	{"search-jsonl.txt", []string{"search", "release", "--jsonl", "-n", "3"}, exitOK, ""},
	{"search-near-misses.txt", []string{"search", "release tooling quirks", "-n", "1", "--explain"}, exitOK, ""},
	{"", []string{"search", "JIRA-1234", "-c"}, exitError, ""},
	{"", []string{"search", "JIRA-1234", "-l"}, exitError, ""},
	{"", []string{"search", "JIRA-1234", "--jsonl"}, exitError, ""},
	{"search-exclude-all.txt", []string{"search", "release", "--exclude-wing", "angela", "--exclude-wing", "dwight", "--exclude-wing", "jim", "--exclude-wing", "pam"}, exitError, ""},
	{"", []string{"search", "release", "-c", "--wing", "pam", "--exclude-wing", "pam"}, exitError, ""},
	{"", []string{"search", "release", "--exclude-wing", "zed"}, exitUsage, `--exclude-wing: unknown wing "zed" (known wings: angela, dwight, jim, pam)`},
	{"", []string{"search", "release", "--wing", "pam", "--wing", "zed", "--exclude-wing", "nobody"}, exitUsage, `--wing: unknown wing "zed" (known wings: angela, dwight, jim, pam)`},
	{"", []string{"search", "release", "--exclude-wing", "../x"}, exitUsage, `--exclude-wing: wing id "../x" is not valid`},
	{"", []string{"search", "release", "--wing", "pam,angela"}, exitUsage, "give one wing to each --wing, repeated"},
	{"", []string{"search", "release", "-l", "-c"}, exitUsage, "-l/--files-with-matches and -c/--count cannot be combined"},
	{"", []string{"search", "release", "--json", "--jsonl"}, exitUsage, "--json and --jsonl cannot be combined"},
	{"", []string{"search", "release", "--jsonl", "--count"}, exitUsage, "--jsonl and -c/--count cannot be combined"},
	{"", []string{"search", "release", "-l", "--explain"}, exitUsage, "--explain cannot be combined with -l/--files-with-matches"},
}

// TestSearchFlagsSameWithDaemon runs searchFlagCases directly and through
// a daemon: the same stdout, stderr and exit code, and the golden output.
func TestSearchFlagsSameWithDaemon(t *testing.T) {
	direct, served := newCLI(t), newCLI(t)
	// The daemon watches an empty hive; mine fills both palaces alike.
	emptyHive := filepath.Join(filepath.Dir(served.palace), "empty-hive")
	if err := os.MkdirAll(filepath.Join(emptyHive, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	startRun(t, served, emptyHive).idle(t, served)
	// Files are named from the hive each searches, not the daemon's.
	direct.env["MEMMINER_HIVE"], served.env["MEMMINER_HIVE"] = direct.hive, served.hive
	direct.ok("mine", direct.hive)
	served.ok("mine", served.hive)
	for _, tc := range searchFlagCases {
		name := strings.Join(tc.args, " ")
		dOut, dErr, dCode := runBoth(t, direct, served, tc.args...)
		if dCode != tc.code || !strings.Contains(dErr, tc.stderr) || (tc.stderr == "" && dErr != "") {
			t.Errorf("memminer %s: exit %d, stderr %q; want exit %d and %q", name, dCode, dErr, tc.code, tc.stderr)
		}
		if tc.golden != "" {
			golden(t, tc.golden, dOut)
		} else if tc.code != exitOK && dOut != "" {
			t.Errorf("memminer %s printed %q, want nothing", name, dOut)
		}
	}
}

// runBoth runs memminer with args on direct and on served (whose palace a
// daemon serves), fails the test when the two differ in stdout, stderr or
// exit code, and returns direct's.
func runBoth(t *testing.T, direct, served *cli, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	dOut, dErr, dCode := direct.run(args...)
	sOut, sErr, sCode := served.run(args...)
	if dOut != sOut || dErr != sErr || dCode != sCode {
		t.Errorf("memminer %s differs with a daemon:\n--- direct (exit %d)\n%s%s\n--- daemon (exit %d)\n%s%s",
			strings.Join(args, " "), dCode, dOut, dErr, sCode, sOut, sErr)
	}
	return dOut, dErr, dCode
}

// TestSearchOutputsAgree checks that the other outputs are views of the
// same hits --json prints: -l their files, -c their wings, --jsonl the
// hits themselves.
func TestSearchOutputsAgree(t *testing.T) {
	c := newCLI(t)
	c.ok("mine", c.hive)
	c.serve(t)
	search := func(output string) string {
		return c.stdout("search", "release", "-n", "1000", "--exclude-wing", "pam", output)
	}
	var res struct {
		Results []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal([]byte(search("--json")), &res); err != nil {
		t.Fatal(err)
	}
	var files, counts, lines []string
	perWing := map[string]int{}
	seen := map[string]bool{}
	for _, raw := range res.Results {
		var h struct{ Wing, Source string }
		if err := json.Unmarshal(raw, &h); err != nil {
			t.Fatal(err)
		}
		if h.Wing == "pam" {
			t.Fatalf("an excluded wing's hit: %s", raw)
		}
		if !seen[h.Source] {
			seen[h.Source] = true
			files = append(files, h.Source+"\n")
		}
		perWing[h.Wing]++
		lines = append(lines, canonicalJSON(t, raw))
	}
	for _, w := range []string{"angela", "dwight", "jim"} {
		if n := perWing[w]; n > 0 {
			counts = append(counts, w+":"+strconv.Itoa(n)+"\n")
		}
	}
	if len(files) < 2 || len(counts) < 2 {
		t.Fatalf("want hits in two wings at least: %v", perWing)
	}
	if got := search("-l"); got != strings.Join(files, "") {
		t.Errorf("-l printed\n%s\nwant the files of --json's hits\n%s", got, strings.Join(files, ""))
	}
	if got := search("-c"); got != strings.Join(counts, "") {
		t.Errorf("-c printed\n%s\nwant the wings of --json's hits\n%s", got, strings.Join(counts, ""))
	}
	got := strings.Split(strings.TrimSuffix(search("--jsonl"), "\n"), "\n")
	if len(got) != len(lines) {
		t.Fatalf("--jsonl printed %d lines for %d hits", len(got), len(lines))
	}
	for i, l := range got {
		if canonicalJSON(t, json.RawMessage(l)) != lines[i] {
			t.Errorf("--jsonl line %d is not --json's hit %d:\n%s\n%s", i+1, i+1, l, lines[i])
		}
	}
}

// TestMCPSearchWings: the MCP search tool takes one wing or a list, and
// wings to leave out, answering as the CLI's flags do.
func TestMCPSearchWings(t *testing.T) {
	c := newCLI(t)
	c.ok("mine", c.hive)
	cs := connectInMemory(t, newMCPServerFor(t, c, "jim"))
	for _, tc := range []struct {
		args map[string]any
		cli  []string
	}{
		{map[string]any{"query": "release", "wing": "pam"}, []string{"search", "release", "--wing", "pam"}},
		{map[string]any{"query": "release", "wing": []string{"pam", "Angela"}, "results": 3}, []string{"search", "release", "--wing", "pam", "--wing", "angela", "-n", "3"}},
		{map[string]any{"query": "release", "exclude_wings": []string{"angela"}}, []string{"search", "release", "--exclude-wing", "angela"}},
		{map[string]any{"query": "release", "wing": []string{}, "exclude_wings": []string{"angela", "dwight", "jim", "pam"}}, []string{"search", "release", "--exclude-wing", "angela", "--exclude-wing", "dwight", "--exclude-wing", "jim", "--exclude-wing", "pam"}},
	} {
		name := strings.Join(tc.cli[1:], " ")
		res := callTool(t, cs, "search", tc.args)
		if res.IsError {
			t.Fatalf("%s: tool error: %s", name, resultText(t, res))
		}
		got, want := canonicalJSON(t, res.StructuredContent), canonicalJSON(t, mcpForm(t, "search", c.stdout(append(tc.cli, "--json")...)))
		if got != want {
			t.Errorf("%s: structured output is not the CLI's --json:\n--- mcp\n%s\n--- cli\n%s", name, got, want)
		}
		if text, want := resultText(t, res), c.stdout(tc.cli...); text != want {
			t.Errorf("%s: text is not the CLI's output:\n--- mcp\n%s\n--- cli\n%s", name, text, want)
		}
	}
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"query": "x", "exclude_wings": []string{"zed"}}, `--exclude-wing: unknown wing "zed" (known wings: angela, dwight, jim, pam)`},
		{map[string]any{"query": "x", "wing": []string{"pam", "zed"}}, `--wing: unknown wing "zed"`},
		{map[string]any{"query": "x", "wing": 7}, "wing"},
		{map[string]any{"query": "x", "wing": []int{7}}, "wing"},
	} {
		res := callTool(t, cs, "search", tc.args)
		if text := resultText(t, res); !res.IsError || !strings.Contains(text, tc.want) {
			t.Errorf("search %v: error %t %q, want an error with %q", tc.args, res.IsError, text, tc.want)
		}
	}
}

// TestSearchFilesEscaped: -l prints a file name holding control
// characters escaped, as every text output does, so it stays one line.
func TestSearchFilesEscaped(t *testing.T) {
	c := newCLI(t)
	testutil.WriteFile(t, filepath.Join(c.hive, "agents", "pam", "odd\x1b[2J\nname.md"), "- The zebracorn stable is behind the barn.\n")
	c.ok("mine", c.hive)
	c.serve(t)
	out := c.ok("search", "zebracorn", "-l")
	if out != "agents/pam/odd\\x1b[2J\\nname.md\n" {
		t.Errorf("-l printed %q, want the name escaped on one line", out)
	}
}

// TestSearchSummaryKeepsLastHits: -l and -c number no hits, so show N
// still reads the hits of the last search that listed them.
func TestSearchSummaryKeepsLastHits(t *testing.T) {
	c := newCLI(t)
	c.ok("mine", c.hive)
	c.serve(t)
	c.ok("search", "release")
	first := c.ok("show", "1")
	c.ok("search", "database", "-c")
	c.ok("search", "database", "-l")
	if got := c.ok("show", "1"); got != first {
		t.Errorf("show 1 after -c and -l:\n%s\nwant the first hit of the listing search:\n%s", got, first)
	}
	c.ok("search", "database", "--jsonl")
	if got := c.ok("show", "1"); got == first {
		t.Errorf("show 1 after search --jsonl still shows the earlier search's hit:\n%s", got)
	}
}
