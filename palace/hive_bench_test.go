package palace

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memminer/memminer/bench/hivegen"
)

// hivePalace fills a palace, without vectors, with a generated hive of
// notes notes in wings wings (bench/hivegen's text: one bullet a note,
// sections of 25), read by a plain split of its lines rather than a mine.
func hivePalace(tb testing.TB, notes, wings int) *Palace {
	tb.Helper()
	ctx := context.Background()
	hive := filepath.Join(tb.TempDir(), "hive")
	ids, err := hivegen.Write(hive, hivegen.Options{Notes: notes, Agents: wings})
	if err != nil {
		tb.Fatal(err)
	}
	p, err := Open(ctx, filepath.Join(tb.TempDir(), "p"), Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	for _, id := range ids {
		path := filepath.Join(hive, "agents", id, "memory.md")
		f, err := os.Open(path)
		if err != nil {
			tb.Fatal(err)
		}
		var ns []Note
		heading := ""
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			switch text := sc.Text(); {
			case strings.HasPrefix(text, "## "):
				heading = text[3:]
			case strings.HasPrefix(text, "- "):
				ns = append(ns, Note{ID: fmt.Sprintf("%s-%d", id, line), Heading: heading, Text: text[2:], Line: line, Agent: id})
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			tb.Fatal(err)
		}
		if _, err := p.ApplySource(ctx, id, Source{Path: path}, ns); err != nil {
			tb.Fatal(err)
		}
	}
	return p
}

// BenchmarkSearchHive times a lexical search of a generated hive of 50,000
// notes in 50 wings, whose query terms are each in thousands of notes.
func BenchmarkSearchHive(b *testing.B) {
	p := hivePalace(b, 50000, 50)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Search(ctx, "pgbouncer depends on vault after the incident review", SearchOptions{Results: 10, Mode: LexicalOnly}); err != nil {
			b.Fatal(err)
		}
	}
}
