package wakeup

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memminer/memminer/embed"
	"github.com/memminer/memminer/mine"
	"github.com/memminer/memminer/palace"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixtureTimes are the mtimes given to the fixture hive's files, so that
// digests do not depend on when the test runs.
var fixtureTimes = map[string]string{
	"agents/dwight/memory.md":       "2026-11-20T10:00:00Z",
	"agents/dwight/runbook-2025.md": "2025-02-01T09:00:00Z",
	"agents/pam/identity.md":        "2026-03-01T09:00:00Z",
	"agents/pam/memory.md":          "2026-11-15T16:30:00Z",
	"agents/angela/memory.md":       "2026-11-10T08:00:00Z",
	"agents/jim/memory.md":          "2026-09-01T12:00:00Z",
	"agents/kevin/memory.md":        "2026-11-01T12:00:00Z",
}

// hiveFile is one file of a test hive: its path below the hive, content
// and mtime.
type hiveFile struct {
	path    string
	content string
	mtime   string // RFC 3339; empty means 2026-11-01T00:00:00Z
}

// fixtureHive copies testdata/hive into a temp dir with fixed mtimes.
func fixtureHive(t testing.TB) string {
	t.Helper()
	var files []hiveFile
	root := filepath.Join("testdata", "hive")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		mt, ok := fixtureTimes[rel]
		if !ok {
			return fmt.Errorf("fixture %s has no mtime in fixtureTimes", rel)
		}
		files = append(files, hiveFile{rel, string(data), mt})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return writeHive(t, files)
}

// writeHive writes files into a new temp dir and returns it.
func writeHive(t testing.TB, files []hiveFile) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		path := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := f.mtime
		if mt == "" {
			mt = "2026-11-01T00:00:00Z"
		}
		tm, err := time.Parse(time.RFC3339, mt)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, tm, tm); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// minePalace mines path into a new palace (lexical when e is nil).
func minePalace(t testing.TB, path string, e embed.Embedder, opts mine.Options) *palace.Palace {
	t.Helper()
	ctx := context.Background()
	p, err := palace.Open(ctx, filepath.Join(t.TempDir(), "palace"), palace.Options{Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	s, err := mine.Mine(ctx, p, path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Problems) > 0 {
		t.Fatalf("mine %s: %v", path, s.Problems)
	}
	return p
}

// build runs Build and checks what must hold of every digest: the budget,
// the token count, and that the JSON fields render the Markdown.
func build(t testing.TB, p *palace.Palace, opts Options) Digest {
	t.Helper()
	d, err := Build(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	budget := opts.Tokens
	if budget == 0 {
		budget = DefaultTokens
	}
	md := d.Markdown()
	if got := EstimateTokens(md); got != d.Tokens {
		t.Errorf("Tokens = %d, EstimateTokens(Markdown()) = %d", d.Tokens, got)
	}
	sum := 0
	for _, l := range strings.SplitAfter(md, "\n") {
		if l != "" {
			sum += LineTokens(strings.TrimSuffix(l, "\n"))
		}
	}
	if d.Tokens > budget || sum > budget {
		t.Errorf("digest costs %d tokens (%d by lines), budget %d:\n%s", d.Tokens, sum, budget, md)
	}
	return d
}

// storyHas reports whether any story line contains s.
func storyHas(d Digest, s string) bool {
	for _, it := range d.Story {
		if strings.Contains(it.Text, s) {
			return true
		}
	}
	return false
}

// topics give generated notes something to be about, so that some notes
// are near each other and most are not.
var topics = [][]string{
	{"postgres", "replica", "vacuum", "wal", "index", "migration"},
	{"pgbouncer", "pool", "connection", "transaction", "timeout", "client"},
	{"deploy", "release", "branch", "rollback", "canary", "pipeline"},
	{"electron", "bundle", "vite", "notarisation", "installer", "update"},
	{"test", "flaky", "quarantine", "e2e", "fixture", "coverage"},
	{"gateway", "rate", "limit", "token", "latency", "retry"},
	{"cron", "email", "queue", "worker", "backoff", "dry-run"},
	{"design", "tokens", "colour", "dark", "mode", "locale"},
}

var filler = strings.Fields("the we keep use when after before always never only every new old run check set move add fix send read write log alert page note team agent service job host")

// genMemory returns a deterministic memory.md of n notes for agent number
// a: list items about a few topics, some marked, some dated, a few
// superseded, under a handful of headings.
func genMemory(a, n int) string {
	r := rand.New(rand.NewPCG(uint64(a)+1, 7))
	var b strings.Builder
	fmt.Fprintf(&b, "---\nrole: generated agent %d\n---\n# Agent %d\n", a, a)
	for i := 0; i < n; i++ {
		if i%25 == 0 {
			fmt.Fprintf(&b, "\n## Section %d\n", i/25)
		}
		topic := topics[r.IntN(len(topics))]
		var words []string
		for k := 0; k < 8+r.IntN(24); k++ {
			if r.IntN(3) == 0 {
				words = append(words, topic[r.IntN(len(topic))])
			} else {
				words = append(words, filler[r.IntN(len(filler))])
			}
		}
		line := strings.Join(words, " ")
		switch r.IntN(40) {
		case 0:
			line = "Decision: " + line
		case 1:
			line = "Rule: " + line
		case 2:
			line += " (pinned)"
		case 3:
			line = "status: superseded — " + line
		case 4, 5, 6:
			line += fmt.Sprintf(" (added 2026-%02d-%02d)", 1+r.IntN(11), 1+r.IntN(28))
		}
		fmt.Fprintf(&b, "- %s note %d-%d.\n", line, a, i)
	}
	return b.String()
}

// genHive writes a hive of agents × notes generated notes.
func genHive(t testing.TB, agents, notes int) string {
	t.Helper()
	files := make([]hiveFile, agents)
	for a := range files {
		files[a] = hiveFile{
			path:    fmt.Sprintf("agents/agent%02d/memory.md", a),
			content: genMemory(a, notes),
			mtime:   time.Date(2026, 11, 1+a%28, 12, 0, 0, 0, time.UTC).Format(time.RFC3339),
		}
	}
	return writeHive(t, files)
}
