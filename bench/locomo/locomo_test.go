package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/embed/embedtest"
	"github.com/memminer/memminer/palace"
)

var update = flag.Bool("update", false, "rewrite golden files")

func loadSample(t *testing.T) []Conversation {
	t.Helper()
	convs, err := LoadFile(filepath.Join("testdata", "sample.json"))
	if err != nil {
		t.Fatal(err)
	}
	return convs
}

func TestParseEvidence(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"D1:3", []string{"D1:3"}},
		{"D8:6; D9:17", []string{"D8:6", "D9:17"}},
		{"D9:1 D4:4 D4:6", []string{"D9:1", "D4:4", "D4:6"}},
		{"D:11:26", []string{"D11:26"}},
		{"D30:05", []string{"D30:5"}},
		{"D", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := parseEvidence(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("parseEvidence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if s := sessionOf("D12:4"); s != 12 {
		t.Errorf("sessionOf(D12:4) = %d", s)
	}
	if s := sessionOf("x"); s != -1 {
		t.Errorf("sessionOf(x) = %d", s)
	}
}

func TestLoad(t *testing.T) {
	convs := loadSample(t)
	if len(convs) != 1 {
		t.Fatalf("%d conversations", len(convs))
	}
	c := convs[0]
	if c.ID != "conv-test" || c.SpeakerA != "Ada" || c.SpeakerB != "Bo" {
		t.Errorf("conversation header = %q %q %q", c.ID, c.SpeakerA, c.SpeakerB)
	}
	// The empty third session is left out.
	if len(c.Sessions) != 2 || c.Sessions[0].Num != 1 || c.Sessions[1].Num != 2 || len(c.Sessions[0].Turns) != 3 {
		t.Fatalf("sessions = %+v", c.Sessions)
	}
	if c.Sessions[0].Turns[2].Caption != "a photo of a sunset over a lake" {
		t.Errorf("caption = %q", c.Sessions[0].Turns[2].Caption)
	}
	wantEv := [][]string{{"D1:1"}, {"D1:1"}, {"D2:1", "D2:2"}, {"D1:3"}, {"D2:1"}, nil}
	if len(c.Questions) != len(wantEv) {
		t.Fatalf("%d questions", len(c.Questions))
	}
	for i, q := range c.Questions {
		if !slices.Equal(q.Evidence, wantEv[i]) {
			t.Errorf("question %d evidence %q, want %q", i, q.Evidence, wantEv[i])
		}
	}
	for _, bad := range []string{`{`, `[{"qa": []}]`, `[{"sample_id": "x", "conversation": {"session_1": "no"}}]`} {
		if _, err := Load(strings.NewReader(bad)); err == nil {
			t.Errorf("Load(%s) did not fail", bad)
		}
	}
}

func TestMarkdownGolden(t *testing.T) {
	convs := loadSample(t)
	tests := []struct {
		name string
		opts HiveOptions
	}{
		{"default", HiveOptions{Captions: true, InlineIDs: true}},
		{"bare", HiveOptions{}},
	}
	for _, tt := range tests {
		md, lines := Markdown(&convs[0], tt.opts)
		golden := filepath.Join("testdata", "sample-"+tt.name+".md")
		if *update {
			if err := os.WriteFile(golden, []byte(md), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
		}
		if md != string(want) {
			t.Errorf("%s: markdown differs from %s:\n%s", tt.name, golden, md)
		}
		// Every turn's line holds its bullet.
		all := strings.Split(md, "\n")
		if len(lines) != 5 {
			t.Errorf("%s: %d turn lines, want 5", tt.name, len(lines))
		}
		for line, id := range lines {
			text := all[line-1]
			if !strings.HasPrefix(text, "- ") {
				t.Errorf("%s: line %d (%s) is %q, not a bullet", tt.name, line, id, text)
			}
			if tt.opts.InlineIDs && !strings.Contains(text, "["+id+"]") {
				t.Errorf("%s: line %d does not carry %s: %q", tt.name, line, id, text)
			}
		}
	}
}

func TestFirstHit(t *testing.T) {
	tests := []struct {
		name           string
		hits, evidence []string
		turnAt, sessAt int
	}{
		{"turn first", []string{"D1:3", "D2:1"}, []string{"D1:3"}, 0, 0},
		{"session before turn", []string{"D1:4", "D1:3"}, []string{"D1:3"}, 1, 0},
		{"session only", []string{"D5:1", "D1:9"}, []string{"D1:3"}, -1, 1},
		{"nothing", []string{"D5:1", ""}, []string{"D1:3"}, -1, -1},
		{"any of several", []string{"D7:1", "D4:2"}, []string{"D1:1", "D4:2"}, 1, 1},
		{"unknown note ignored", []string{"", "D1:1"}, []string{"D1:1"}, 1, 1},
	}
	for _, tt := range tests {
		ta, sa := firstHit(tt.hits, tt.evidence)
		if ta != tt.turnAt || sa != tt.sessAt {
			t.Errorf("%s: firstHit = %d, %d; want %d, %d", tt.name, ta, sa, tt.turnAt, tt.sessAt)
		}
	}
}

func TestCountsAndLatency(t *testing.T) {
	var c counts
	for _, at := range [][2]int{{0, 0}, {6, 2}, {-1, 7}, {-1, -1}} {
		c.add(at[0], at[1])
	}
	r := c.recall()
	want := Recall{Questions: 4, SessionR5: 0.5, SessionR10: 0.75, TurnR5: 0.25, TurnR10: 0.5}
	if r != want {
		t.Errorf("recall = %+v, want %+v", r, want)
	}
	var empty counts
	if empty.recall() != (Recall{}) {
		t.Error("empty group has recall")
	}
	var times []time.Duration
	for i := 1; i <= 20; i++ {
		times = append(times, time.Duration(i)*time.Millisecond)
	}
	if l := latency(times); l.P50 != 10 || l.P95 != 19 || l.Max != 20 {
		t.Errorf("latency = %+v, want p50 10 p95 19 max 20", l)
	}
	if latency(nil) != (Latency{}) {
		t.Error("latency of nothing")
	}
}

func checkResult(t *testing.T, r Result, convs []Conversation) {
	t.Helper()
	asked, unscored, scored14, scored5 := 0, 0, 0, 0
	for _, c := range convs {
		for _, q := range c.Questions {
			asked++
			switch {
			case len(q.Evidence) == 0:
				unscored++
			case q.Category == 5:
				scored5++
			case q.Category >= 1 && q.Category <= 4:
				scored14++
			}
		}
	}
	if r.Asked != asked || r.Unscored != unscored || r.Questions != scored14 || r.Adversarial.Questions != scored5 {
		t.Errorf("%s: asked %d unscored %d scored %d+%d, want %d %d %d+%d", r.Mode,
			r.Asked, r.Unscored, r.Questions, r.Adversarial.Questions, asked, unscored, scored14, scored5)
	}
	groups := map[string]Recall{"1-4": r.Recall, "5": r.Adversarial}
	for k, v := range r.ByCategory {
		groups["cat "+k] = v
	}
	for name, g := range groups {
		for _, x := range []float64{g.SessionR5, g.SessionR10, g.TurnR5, g.TurnR10} {
			if x < 0 || x > 1 {
				t.Errorf("%s %s: recall %v outside [0, 1]", r.Mode, name, x)
			}
		}
		if g.SessionR5 > g.SessionR10 || g.TurnR5 > g.TurnR10 || g.TurnR10 > g.SessionR10 {
			t.Errorf("%s %s: recalls out of order: %+v", r.Mode, name, g)
		}
	}
	if r.Mine.Notes < r.Mine.Turns || r.Mine.Turns == 0 {
		t.Errorf("%s: %d notes for %d turns", r.Mode, r.Mine.Notes, r.Mine.Turns)
	}
}

func TestRunSample(t *testing.T) {
	convs := loadSample(t)
	results, err := Run(context.Background(), Config{
		Conversations: convs,
		Modes:         []palace.Mode{palace.Hybrid, palace.VectorOnly, palace.LexicalOnly},
		Embedder:      &embedtest.Hashing{Dim: 128},
		Hive:          HiveOptions{Captions: true, InlineIDs: true},
		Dir:           t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("%d results", len(results))
	}
	for _, r := range results {
		checkResult(t, r, convs)
	}
	// The sample's questions repeat the words of their evidence turn.
	lex := results[2]
	if lex.Mode != "lexical" || lex.Model != "lexical" || lex.TurnR5 != 1 {
		t.Errorf("lexical result = %+v, want every turn found", lex)
	}
}

func TestRunRefusesVectorsWithoutModel(t *testing.T) {
	_, err := Run(context.Background(), Config{Conversations: loadSample(t), Modes: []palace.Mode{palace.VectorOnly}, Dir: t.TempDir()})
	if err == nil {
		t.Fatal("vector mode without a model ran")
	}
}

func TestCommandJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"--data", filepath.Join("testdata", "sample.json"), "--mode", "lexical", "--json"}
	if err := run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	var obj map[string]any
	if err := json.Unmarshal(out.Bytes(), &obj); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out.String())
	}
	for _, k := range []string{"mode", "questions", "session_recall@5", "session_recall@10", "turn_recall@5", "turn_recall@10", "by_category", "adversarial", "mine", "query_latency"} {
		if _, ok := obj[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, out.String())
		}
	}
	out.Reset()
	if err := run(context.Background(), []string{"--data", filepath.Join("testdata", "sample.json"), "--mode", "lexical"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "session R@10") || !strings.Contains(out.String(), "cat 1-4") {
		t.Errorf("table output:\n%s", out.String())
	}
	for _, bad := range [][]string{{}, {"--data", "x.json", "--mode", "bm25"}, {"--data", filepath.Join(t.TempDir(), "missing.json"), "--mode", "lexical"}} {
		if err := run(context.Background(), bad, &out, &errOut); err == nil {
			t.Errorf("run(%q) did not fail", bad)
		}
	}
}

// locomoData finds LoCoMo beside the repository: ../shared/bench/locomo/
// locomo10.json from the repository root.
func locomoData(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
	path, err := findData(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && os.Getenv("CI") == "" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return path
}

// dataSource is where LoCoMo comes from; it is never copied into this
// repository (CC BY-NC 4.0).
const dataSource = "https://github.com/snap-research/locomo (data/locomo10.json)"

// findData is the path of locomo10.json beside the repository whose root
// is root, or an error that names the file and where to get it.
func findData(root string) (string, error) {
	path := filepath.Join(root, "..", "shared", "bench", "locomo", "locomo10.json")
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("LoCoMo data: %w; download locomo10.json from %s to %s", err, dataSource, filepath.Clean(path))
	}
	return path, nil
}

// TestFindDataSaysWhereToGetIt: without the data, the error names the
// file it looked for and where to download it.
func TestFindDataSaysWhereToGetIt(t *testing.T) {
	root := filepath.Join(t.TempDir(), "repo")
	_, err := findData(root)
	want := filepath.Join(filepath.Dir(root), "shared", "bench", "locomo", "locomo10.json")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), dataSource) || !strings.Contains(err.Error(), "to "+want) {
		t.Errorf("err = %v", err)
	}
}

// TestSmokeLoCoMo runs the harness on the first LoCoMo conversation in
// lexical mode: it must ask every question and give sane numbers.
func TestSmokeLoCoMo(t *testing.T) {
	convs, err := LoadFile(locomoData(t))
	if err != nil {
		t.Fatal(err)
	}
	convs = convs[:1]
	results, err := Run(context.Background(), Config{
		Conversations: convs,
		Modes:         []palace.Mode{palace.LexicalOnly},
		Hive:          HiveOptions{Captions: true, InlineIDs: true},
		Dir:           t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	checkResult(t, r, convs)
	if r.Asked != len(convs[0].Questions) {
		t.Errorf("asked %d of %d questions", r.Asked, len(convs[0].Questions))
	}
	t.Logf("conversation %s: %d questions, session R@10 %.3f, turn R@10 %.3f", convs[0].ID, r.Questions, r.SessionR10, r.TurnR10)
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in   string
		want palace.Mode
		ok   bool
	}{
		{"hybrid", palace.Hybrid, true}, {" Lexical ", palace.LexicalOnly, true}, {"vector", palace.VectorOnly, true}, {"bm25", 0, false},
	}
	for _, tt := range tests {
		got, err := parseMode(tt.in)
		if (err == nil) != tt.ok || (tt.ok && got != tt.want) {
			t.Errorf("parseMode(%q) = %v, %v", tt.in, got, err)
		}
		if tt.ok && got.String() != strings.ToLower(strings.TrimSpace(tt.in)) {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
}
