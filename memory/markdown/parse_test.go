package markdown

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/memminer/memminer/memory/markdown/markdowntest"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// render prints a parsed document the way the golden files hold it: the
// frontmatter as JSON, warnings, then one line per note.
func render(t *testing.T, doc *Document) string {
	t.Helper()
	var b strings.Builder
	if doc.Frontmatter != nil {
		fm, err := json.Marshal(doc.Frontmatter)
		if err != nil {
			t.Fatalf("marshal frontmatter: %v", err)
		}
		fmt.Fprintf(&b, "frontmatter: %s\n", fm)
	}
	for _, w := range doc.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	for _, n := range doc.Notes {
		fmt.Fprintf(&b, "L%d [%s] %s\n", n.Line, n.Heading, escape(n.Text))
	}
	return b.String()
}

// escape makes a note's text fit on one line.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
}

// checkInvariants verifies what must hold for any input: notes are not
// empty, come in source order, and each note's first line is part of the
// source line it names.
func checkInvariants(t *testing.T, src []byte, doc *Document) {
	t.Helper()
	lines := bytes.Split(src, []byte("\n"))
	prev := 0
	for i, n := range doc.Notes {
		if strings.TrimSpace(n.Text) == "" {
			t.Errorf("note %d is empty: %+v", i, n)
		}
		if n.Text != strings.TrimRight(n.Text, " \t\r\n") {
			t.Errorf("note %d has trailing whitespace: %q", i, n.Text)
		}
		if n.Line < 1 || n.Line > len(lines) {
			t.Errorf("note %d: line %d outside 1..%d", i, n.Line, len(lines))
			continue
		}
		if n.Line < prev {
			t.Errorf("note %d: line %d comes before the previous note's line %d", i, n.Line, prev)
		}
		prev = n.Line
		first, _, _ := strings.Cut(n.Text, "\n")
		if !bytes.Contains(lines[n.Line-1], []byte(first)) {
			t.Errorf("note %d: first line %q is not in source line %d %q", i, first, n.Line, lines[n.Line-1])
		}
	}
}

func TestParseGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "parse", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no golden inputs under testdata/parse")
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".md")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := Parse(src, ParseOptions{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			checkInvariants(t, src, doc)
			got := render(t, doc)
			golden := strings.TrimSuffix(in, ".md") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (run with -update to create it): %v", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s (run with -update after checking):\n--- got\n%s--- want\n%s", in, golden, got, want)
			}
			again, err := Parse(src, ParseOptions{})
			if err != nil || render(t, again) != got {
				t.Errorf("second Parse of the same input gave a different result (err %v)", err)
			}
		})
	}
}

func TestParseHeadingPath(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // heading of each note, in order
	}{
		{"no headings", "one\n\ntwo\n", []string{"", ""}},
		{"nested levels", "# A\n## B\n### C\nx\n", []string{"A > B > C"}},
		{"sibling pops sibling", "# A\n## B\nx\n## C\ny\n", []string{"A > B", "A > C"}},
		{"higher pops deeper", "# A\n## B\n### C\nx\n# D\ny\n", []string{"A > B > C", "D"}},
		{"skipped level", "# A\n### C\nx\n## B\ny\n", []string{"A > C", "A > B"}},
		{"deeper first", "### C\nx\n# A\ny\n", []string{"C", "A"}},
		{"closing hashes and spaces", "#   Build ##\n##  Web  #\nx\n", []string{"Build > Web"}},
		{"setext", "Build\n=====\nWeb\n---\nx\n", []string{"Build > Web"}},
		{"inline markup kept", "# The `mine` loop\nx\n", []string{"The `mine` loop"}},
		{"empty heading skipped", "# A\n##\nx\n", []string{"A"}},
		{"heading in list item ignored", "# A\n- ## not a heading path\n\nx\n", []string{"A", "A"}},
		{"before first heading", "x\n# A\ny\n", []string{"", "A"}},
		{"unicode", "# 构建 🚀\n## Café\nx\n", []string{"构建 🚀 > Café"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte(tt.src), ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range doc.Notes {
				got = append(got, n.Heading)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("headings = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseLines(t *testing.T) {
	type note struct {
		line int
		text string
	}
	tests := []struct {
		name string
		src  string
		want []note
	}{
		{"plain", "a\n\nb\n", []note{{1, "a"}, {3, "b"}}},
		{"no final newline", "a\n\nb", []note{{1, "a"}, {3, "b"}}},
		{"crlf", "# H\r\n\r\n- a\r\n- b\r\n\r\npara\r\n", []note{{3, "a"}, {4, "b"}, {6, "para"}}},
		{"bom", "\uFEFFa\n\nb\n", []note{{1, "a"}, {3, "b"}}},
		{"bom and frontmatter", "\uFEFF---\nk: v\n---\nbody\n", []note{{4, "body"}}},
		{"frontmatter counted", "---\ntitle: x\ntags: [a, b]\n---\n\n# H\n\n- item\n", []note{{8, "item"}}},
		{"frontmatter closed by dots", "---\nk: v\n...\nbody\n", []note{{4, "body"}}},
		{"leading blank lines", "\n\n\n  para\n", []note{{4, "para"}}},
		{"item content on next line", "-\n  foo\n", []note{{2, "foo"}}},
		{"nested item stays", "- a\n  - b\n- c\n", []note{{1, "a\n- b"}, {3, "c"}}},
		{"loose list", "- a\n\n- b\n\n\n- c\n", []note{{1, "a"}, {3, "b"}, {6, "c"}}},
		{"ordered", "1. one\n2) two\n", []note{{1, "one"}, {2, "two"}}},
		{"ordered after paren", "1) one\n2) two\n", []note{{1, "one"}, {2, "two"}}},
		{"tab after marker", "-\tfoo\n\tbar\n", []note{{1, "foo\nbar"}}},
		{"lazy continuation", "- foo\nbar\n", []note{{1, "foo\nbar"}}},
		{"checkbox kept", "- [ ] todo\n- [x] done\n", []note{{1, "[ ] todo"}, {2, "[x] done"}}},
		{"fence after heading", "# H\n```\ncode\n```\n", []note{{2, "```\ncode\n```"}}},
		{"fence after paragraph", "Build with:\n\n```sh\nmake\n```\n", []note{{1, "Build with:\n\n```sh\nmake\n```"}}},
		{"fence after list", "- build:\n\n```\nmake\n```\n", []note{{1, "build:\n\n```\nmake\n```"}}},
		{"fence after fence alone", "# H\n```\na\n```\n```\nb\n```\n", []note{{2, "```\na\n```"}, {5, "```\nb\n```"}}},
		{"unclosed fence", "text\n```\ncode", []note{{1, "text\n```\ncode"}}},
		{"thematic break is not frontmatter", "intro\n\n---\n\nafter\n", []note{{1, "intro"}, {5, "after"}}},
		{"indented paragraph", "   indented\n   more\n", []note{{1, "indented\nmore"}}},
		{"html comment", "<!-- note -->\n\ntext\n", []note{{1, "<!-- note -->"}, {3, "text"}}},
		{"link reference", "[x]: https://example.invalid/\n\ntext\n", []note{{1, "[x]: https://example.invalid/"}, {3, "text"}}},
		{"trailing whitespace", "a  \t\nb \n", []note{{1, "a\nb"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte(tt.src), ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, []byte(tt.src), doc)
			var got []note
			for _, n := range doc.Notes {
				got = append(got, note{n.Line, n.Text})
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("notes = %+v\nwant    %+v", got, tt.want)
			}
		})
	}
}

func TestParseFrontmatter(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		wantFM   string // JSON; "null" when absent
		warnings int
		notes    int
	}{
		{"absent", "body\n", "null", 0, 1},
		{"valid", "---\ntitle: Memory\nversion: 3\ntags: [a, b]\n---\nbody\n", `{"tags":["a","b"],"title":"Memory","version":3}`, 0, 1},
		{"empty", "---\n---\nbody\n", "null", 0, 1},
		{"invalid yaml", "---\ntitle: [unclosed\n---\nbody\n", "null", 1, 1},
		{"invalid yaml after comment", "---\n# comment\ntitle: a: b\n---\nbody\n", "null", 1, 1},
		{"quoted key", "---\n\"a b\": [\n---\nbody\n", "null", 1, 1},
		{"list is markdown", "---\n- a\n- b\n---\nbody\n", "null", 0, 3},
		{"markdown between breaks", "---\n# Title\n\nSome text.\n\n---\nbody\n", "null", 0, 2},
		{"markdown that is a YAML mapping", "---\nSome text: more.\n---\nbody\n", `{"Some text":"more."}`, 0, 1},
		{"scalar is markdown", "---\nSome text\n---\n\nbody\n", "null", 0, 1},
		{"unclosed", "---\ntitle: x\n", "null", 0, 1},
		{"not at start", "\n---\ntitle: x\n---\nbody\n", "null", 0, 1},
		{"only frontmatter", "---\nk: v\n---", `{"k":"v"}`, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte(tt.src), ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			fm, err := json.Marshal(doc.Frontmatter)
			if err != nil {
				t.Fatal(err)
			}
			if string(fm) != tt.wantFM {
				t.Errorf("frontmatter = %s, want %s", fm, tt.wantFM)
			}
			if len(doc.Warnings) != tt.warnings {
				t.Errorf("warnings = %q, want %d", doc.Warnings, tt.warnings)
			}
			if len(doc.Notes) != tt.notes {
				t.Errorf("got %d notes %+v, want %d", len(doc.Notes), doc.Notes, tt.notes)
			}
		})
	}
}

// noSpace returns s without whitespace.
func noSpace(s string) string { return strings.Join(strings.Fields(s), "") }

func TestParseSplit(t *testing.T) {
	sentence := func(i int) string {
		return fmt.Sprintf("Sentence number %d explains one more detail about the deploy.", i)
	}
	var para []string
	for i := range 12 {
		para = append(para, sentence(i))
	}
	long := strings.Join(para, " ")
	wrapped := strings.ReplaceAll(long, "about the", "about\nthe")
	oneSentence := strings.Repeat("word ", 150) + "end"
	fence := "```\n" + strings.Repeat("code line that must stay whole\n", 20) + "```"

	tests := []struct {
		name     string
		src      string
		max      int
		minNotes int
		// each piece but those holding code is at most max runes
	}{
		{"long paragraph", long + "\n", 200, 4},
		{"hard-wrapped paragraph", wrapped + "\n", 200, 4},
		{"one long sentence", oneSentence + "\n", 100, 7},
		{"one long word", strings.Repeat("x", 250) + "\n", 100, 3},
		{"cjk", strings.Repeat("这是一个很长的句子。", 30) + "\n", 50, 6},
		{"list item with nested list", "- Steps:\n" + strings.Repeat("  - "+sentence(1)+"\n", 10), 200, 3},
		{"paragraph then long fence", long + "\n" + fence + "\n", 200, 3},
		{"long fence alone", "# H\n" + fence + "\n", 50, 1},
		{"item with long fence", "- Build:\n\n  " + strings.ReplaceAll(fence, "\n", "\n  ") + "\n  " + long + "\n", 200, 3},
		{"blockquote", "> " + strings.ReplaceAll(wrapped, "\n", "\n> ") + "\n", 200, 4},
		{"table", "| a | b |\n|---|---|\n" + strings.Repeat("| cell | "+sentence(2)+" |\n", 10), 200, 4},
		{"tiny bound", "hello world, café 🚀\n", 1, 15},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := []byte(tt.src)
			doc, err := Parse(src, ParseOptions{MaxNoteRunes: tt.max})
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, src, doc)
			if len(doc.Notes) < tt.minNotes {
				t.Errorf("got %d notes, want at least %d: %+v", len(doc.Notes), tt.minNotes, doc.Notes)
			}
			var all []string
			for _, n := range doc.Notes {
				if !strings.Contains(n.Text, "```") && utf8.RuneCountInString(n.Text) > tt.max {
					t.Errorf("note at line %d has %d runes, bound %d: %q", n.Line, utf8.RuneCountInString(n.Text), tt.max, n.Text)
				}
				if strings.Count(n.Text, "```")%2 != 0 {
					t.Errorf("note at line %d cuts a fence: %q", n.Line, n.Text)
				}
				all = append(all, n.Text)
			}
			// Splitting loses or repeats nothing but whitespace (list
			// markers and headings aside, which these inputs avoid).
			if !strings.HasPrefix(tt.src, "- ") && !strings.HasPrefix(tt.src, "#") {
				if got, want := noSpace(strings.Join(all, "")), noSpace(tt.src); got != want {
					t.Errorf("text changed:\n got %q\nwant %q", got, want)
				}
			}
		})
	}
}

func TestParseSplitSentences(t *testing.T) {
	src := "First sentence is here. Second one, e.g. with an abbreviation, is longer than the first. " +
		"Third! Fourth? Fifth (in parens.) Sixth ends it."
	doc, err := Parse([]byte(src), ParseOptions{MaxNoteRunes: 60})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range doc.Notes {
		got = append(got, n.Text)
	}
	want := []string{
		"First sentence is here.",
		"Second one, e.g. with an abbreviation, is longer than the",
		"first. Third! Fourth? Fifth (in parens.) Sixth ends it.",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("pieces = %q\nwant     %q", got, want)
	}
}

func TestParseSplitLines(t *testing.T) {
	// Pieces of a hard-wrapped paragraph start on the line of their first
	// word.
	src := "# H\n\nAlpha beta gamma.\nDelta epsilon zeta.\nEta theta iota.\nKappa lambda mu.\n"
	doc, err := Parse([]byte(src), ParseOptions{MaxNoteRunes: 40})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range doc.Notes {
		got = append(got, fmt.Sprintf("L%d %s", n.Line, escape(n.Text)))
	}
	want := []string{`L3 Alpha beta gamma.\nDelta epsilon zeta.`, `L5 Eta theta iota.\nKappa lambda mu.`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("pieces = %q\nwant     %q", got, want)
	}
}

func TestParseOptions(t *testing.T) {
	if _, err := Parse([]byte("x"), ParseOptions{MaxNoteRunes: -1}); err == nil {
		t.Error("negative MaxNoteRunes: want an error")
	}
	long := []byte(strings.Repeat("Short sentence here. ", 100))
	def, err := Parse(long, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	explicit, err := Parse(long, ParseOptions{MaxNoteRunes: DefaultMaxNoteRunes})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(def.Notes) != fmt.Sprint(explicit.Notes) {
		t.Error("zero MaxNoteRunes differs from DefaultMaxNoteRunes")
	}
	for _, n := range def.Notes {
		if c := utf8.RuneCountInString(n.Text); c > DefaultMaxNoteRunes {
			t.Errorf("note of %d runes exceeds the default bound", c)
		}
	}
}

func TestParseEmpty(t *testing.T) {
	for _, src := range []string{"", "\n", "\n\n  \n", "\uFEFF", "# A\n## B\n\n### C\n", "---\n\n***\n"} {
		doc, err := Parse([]byte(src), ParseOptions{})
		if err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		if len(doc.Notes) != 0 {
			t.Errorf("Parse(%q) = %+v, want no notes", src, doc.Notes)
		}
	}
}

func TestParseConcurrent(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "parse", "nested_lists.md"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Parse(src, ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := Parse(src, ParseOptions{})
			if err != nil || fmt.Sprint(got.Notes) != fmt.Sprint(want.Notes) {
				t.Errorf("concurrent Parse differs (err %v)", err)
			}
		})
	}
	wg.Wait()
}

func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "parse", "*.md"))
	for _, s := range seeds {
		if src, err := os.ReadFile(s); err == nil {
			f.Add(src, 0)
		}
	}
	f.Add([]byte("- a\n  ```\n  b\n- c\n```\n> d\n"), 3)
	f.Add([]byte("---\na: [\n---\n1. x. y. z\n"), 2)
	f.Fuzz(func(t *testing.T, src []byte, max int) {
		if max < 0 || max > 10000 {
			max = 0
		}
		doc, err := Parse(src, ParseOptions{MaxNoteRunes: max})
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		if utf8.Valid(src) {
			checkInvariants(t, src, doc)
		}
		// Parsed a section at every heading where one may end, the same.
		sections, err := parse(src, ParseOptions{MaxNoteRunes: max}, 1)
		if err != nil || !reflect.DeepEqual(sections, doc) {
			t.Fatalf("in sections: %+v, %v\nwhole: %+v", sections, err, doc)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	src := markdowntest.Memory(1000)
	doc, err := Parse(src, ParseOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Parse(src, ParseOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(doc.Notes)), "notes/op")
	b.ReportMetric(float64(bytes.Count(src, []byte("\n"))), "lines/op")
}

func TestParseSplitKeepsCodeWithIntro(t *testing.T) {
	fence := "```\nmake release\nmake upload\n```"
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"intro line is not cut", "Intro line for the fence:\n" + fence, []string{"Intro line for the fence:\n" + fence}},
		{"sentence before intro is", "Done with the tests. Build with:\n" + fence, []string{"Done with the tests.", "Build with:\n" + fence}},
		{"text after code", fence + "\nThen check uploads.", []string{fence, "Then check uploads."}},
		{"two fences", "Build:\n" + fence + "\n\n" + fence, []string{"Build:\n" + fence, fence}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte(tt.src), ParseOptions{MaxNoteRunes: 24})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range doc.Notes {
				got = append(got, n.Text)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("pieces = %q\nwant     %q", got, tt.want)
			}
		})
	}
}

// TestFrontmatterBounds: a frontmatter block over MaxFrontmatterBytes or
// MaxFrontmatterKeys is skipped with a warning, before yaml.v3 decodes it
// (150k keys once took minutes), and the body is still parsed.
func TestFrontmatterBounds(t *testing.T) {
	keys := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%sk%d: v\n", prefix, i)
		}
		return b.String()
	}
	tests := []struct {
		name    string
		yaml    string
		keys    int    // top-level keys decoded; 0 when skipped
		warning string // in the warning; empty for none
	}{
		{"at the key limit", keys("", MaxFrontmatterKeys), MaxFrontmatterKeys, ""},
		{"one key too many", keys("", MaxFrontmatterKeys+1), 0, "more than 1000 keys"},
		{"nested keys count", "a:\n" + keys("  ", 600) + "b:\n" + keys("  ", 600), 0, "more than 1000 keys"},
		{"150k keys", keys("", 150_000), 0, "limit"},
		{"over the size limit", "k: " + strings.Repeat("v", MaxFrontmatterBytes) + "\n", 0, "more than the 64.0 KiB limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte("---\n"+tt.yaml+"---\n- body note\n"), ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Frontmatter) != tt.keys {
				t.Errorf("frontmatter has %d keys, want %d", len(doc.Frontmatter), tt.keys)
			}
			switch {
			case tt.warning == "" && len(doc.Warnings) != 0:
				t.Errorf("warnings %q, want none", doc.Warnings)
			case tt.warning != "" && (len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], tt.warning)):
				t.Errorf("warnings %q, want one mentioning %q", doc.Warnings, tt.warning)
			}
			if len(doc.Notes) != 1 || doc.Notes[0].Text != "body note" {
				t.Errorf("notes %+v, want the body note", doc.Notes)
			}
		})
	}
}

// FuzzFrontmatter feeds arbitrary YAML between frontmatter delimiters:
// Parse never fails or panics, never keeps a block over the bounds, and a
// frontmatter it keeps is a mapping of at most MaxFrontmatterKeys keys.
func FuzzFrontmatter(f *testing.F) {
	f.Add("title: Memory\ntags: [a, b]\n")
	f.Add("identity: Release captain.\nstatus: superseded\nreview_by: 2026-01-01\n")
	f.Add("a: &x [1, 2]\nb: *x\nc: {d: {e: f}}\n")
	f.Add("role: [unclosed\n")
	f.Add("- a\n- b\n")
	f.Add("k0: v\nk1: v\nk1: dup\n")
	f.Add("a: &a [*a]\n")
	f.Add("? complex key\n: value\n!!binary x: 1\n")
	f.Fuzz(func(t *testing.T, yamlText string) {
		src := []byte("---\n" + yamlText + "\n---\n- body\n")
		doc, err := Parse(src, ParseOptions{})
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		if len(doc.Frontmatter) > MaxFrontmatterKeys {
			t.Fatalf("kept frontmatter with %d keys", len(doc.Frontmatter))
		}
		if doc.Frontmatter != nil && len(yamlText) > MaxFrontmatterBytes {
			t.Fatalf("kept frontmatter of %d bytes", len(yamlText))
		}
		again, err := Parse(src, ParseOptions{})
		if err != nil || len(again.Notes) != len(doc.Notes) || len(again.Warnings) != len(doc.Warnings) {
			t.Fatalf("Parse is not deterministic: %v", err)
		}
	})
}

func TestParseConflictMarkers(t *testing.T) {
	src := "# Dwight\n\n- beets\n<<<<<<< ours\n- bears eat honey\n=======\n- bears eat beets\n>>>>>>> theirs\n- farms\n"
	doc, err := Parse([]byte(src), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type nl struct {
		line     int
		text     string
		conflict bool
	}
	var got []nl
	for _, n := range doc.Notes {
		got = append(got, nl{n.Line, n.Text, n.Conflict})
	}
	want := []nl{{3, "beets", false}, {5, "bears eat honey", true}, {7, "bears eat beets", true}, {9, "farms", false}}
	if !slices.Equal(got, want) {
		t.Fatalf("notes = %+v\nwant %+v", got, want)
	}
	// diff3's common ancestor is neither side: not mined.
	doc, err = Parse([]byte("<<<<<<< ours\nours para\n||||||| base\nold para\n=======\ntheirs para\n>>>>>>> theirs\n"), ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Notes) != 2 || doc.Notes[0].Text != "ours para" || doc.Notes[1].Text != "theirs para" {
		t.Fatalf("diff3 notes = %+v", doc.Notes)
	}
}
