package markdown

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/memminer/memminer/memory/markdown/markdowntest"
)

// parseWith is parse with plainSection on or off.
func parseWith(src []byte, sectionSize int, goldmarkOnly bool) (*Document, error) {
	p, doc, err := startParse(src, MemoryOptions(), sectionSize)
	if err != nil {
		return nil, err
	}
	p.goldmarkOnly = goldmarkOnly
	for notes := range p.sections(doc) {
		doc.Notes = append(doc.Notes, notes...)
	}
	doc.Resume = nil // as parse: it depends on where the sections were cut
	return doc, nil
}

// plainParts counts the sections of src, as short as they can be, and
// how many of them plainSection takes.
func plainParts(t *testing.T, src []byte) (parts, plain int) {
	p, doc, err := startParse(src, MemoryOptions(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for start := doc.BodyStart; start < len(src); parts++ {
		end := sectionEnd(src, start, 1)
		if _, _, ok := p.plainSection(start, end, &outline{}); ok {
			plain++
		}
		start = end
	}
	return parts, plain
}

// isPlain reports whether plainSection takes every section of src.
func isPlain(t *testing.T, src []byte) bool {
	parts, plain := plainParts(t, src)
	return parts == plain
}

// checkSame fails when the notes and headings of src differ with and
// without plainSection, whole and in small sections.
func checkSame(t *testing.T, src []byte) {
	t.Helper()
	for _, size := range []int{sectionBytes, 24} {
		want, err := parseWith(src, size, true)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseWith(src, size, false)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("sections of %d bytes: plain parse differs from goldmark's for\n%q\n--- plain\n%+v\n--- goldmark\n%+v", size, src, got, want)
		}
	}
}

// plainLines are lines of the kinds plainSection reads, and of kinds it
// must leave to goldmark, for generated documents.
var plainLines = []string{
	"", "", "", "   ",
	"# Memory", "## Build", "### The `mine` loop", "## Café 构建", "#", "## C# rules", "#tag", "####### seven", "  ## indented", "## closed ##",
	"- a note about the build", "- another note", "* star item", "+ plus item", "1. first", "2. second", "10) tenth", "01. zero-one",
	"- [ ] an open task", "- [x] a done task", "- [y] not a box", "- [ref]: /url", "- ", "-", "- - nested at once", "- # heading in item",
	"- > quote in item", "- ```", "-no space", "---", "***", "___", "* * *", "- **Important**: keep it", "**Bold** paragraph", "** not bold",
	"  - nested item", "    - deeper item", "  1. nested number", "  continued line", "      deep continued", "        deeper still", " one space",
	"   three spaces", "  ```", "  > nested quote", "  <div>",
	"A plain paragraph line.", "Another line | with a pipe", "| a | b |", "|---|---|", "--- | ---", "a | b", "===", "Title",
	"```", "```go", "~~~", "    code", "> a quote", "<div>", "<!-- comment -->", "[ref]: /url", "\tTab start", "line\r", "in\tside",
	"2026 was a year", "2026. a number", "12) item", "`code` first", "```x```", "\"quoted\" text", "(aside) text", "@mention", "/path/to",
	"Überblick der Woche", "日本語のメモ", "\u00a0nbsp first", "<<<<<<< HEAD", "=======", ">>>>>>> theirs", "\\- escaped",
	strings.Repeat("a long note with many words ", 20),
	"- " + strings.Repeat("word ", 100),
}

// plainish are lines plainSection mostly takes where genDoc puts them,
// edgy the ones it often must not; genDoc's plain documents are made of
// the first with a few of the second.
var (
	plainish = []string{"", "", "", "## Build", "# Memory", "### Deep", "- a note", "- another note", "* a star", "+ a plus", "1. first",
		"- [ ] a task", "- [x] done", "  - nested", "  1. nested first", "  3. nested third", "    - deeper", "  more of it",
		"Plain text.", "lazy line", "**Bold** text", "`code` text", "2026 numbers", "```sh", "~~~"}
	edgy = []string{"2. second", "10. tenth", "    four in", "      six in", "````", "``` x`y", " one in", "\tTab", "## C# rules"}
)

// fenceLines may follow a fence line in a generated document.
var fenceLines = []string{"go build ./...", "\tif err != nil {", "", "- not an item", "# not a heading", "    ```", "````"}

func genDoc(r *rand.Rand) []byte {
	var b strings.Builder
	if r.IntN(5) == 0 {
		b.WriteString("---\nagent: a\n---\n")
	}
	plainOnly := r.IntN(2) == 0
	inItem := false
	for range 1 + r.IntN(30) {
		line := plainLines[r.IntN(len(plainLines))]
		if plainOnly || r.IntN(3) > 0 {
			line = plainish[r.IntN(len(plainish))]
			// Indented lines mostly where they continue an item.
			for !inItem && strings.HasPrefix(line, " ") && r.IntN(10) > 0 {
				line = plainish[r.IntN(len(plainish))]
			}
			if r.IntN(20) == 0 {
				line = edgy[r.IntN(len(edgy))]
			}
		}
		inItem = listItemText(line) != "" || (inItem && line != "" && line[0] == ' ')
		b.WriteString(line)
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			for range r.IntN(4) {
				b.WriteString("\n" + fenceLines[r.IntN(len(fenceLines))])
			}
			if r.IntN(8) > 0 {
				b.WriteString("\n" + line[:3])
			}
			inItem = false
		}
		b.WriteByte('\n')
	}
	s := b.String()
	if r.IntN(8) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return []byte(s)
}

func TestPlainMatchesGoldmark(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 1))
	parts, plain := 0, 0
	for range 20000 {
		src := genDoc(r)
		checkSame(t, src)
		n, k := plainParts(t, src)
		parts, plain = parts+n, plain+k
	}
	// The comparison means something only if the plain path was taken.
	if plain < parts/4 {
		t.Fatalf("only %d of %d sections of the generated documents were plain", plain, parts)
	}
	t.Logf("%d of %d sections of the generated documents plain", plain, parts)
}

func TestPlainMatchesGoldmarkOnFiles(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "parse", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range inputs {
		src, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, src)
	}
	checkSame(t, markdowntest.Memory(400))
}

func TestPlainTakesMemoryBullets(t *testing.T) {
	src := []byte("---\nrole: x\n---\n# agent memory\n\n## Build\n- The CI runner is Debian.\n  - nested detail\n- [x] a done task\n\n" +
		"Decided that the loop re-reads a file only when it changed.\nIt keeps the loop cheap.\n\n## Deploy\n1. first step\n2. second step\n")
	if !isPlain(t, src) {
		t.Fatalf("plainSection left a file of bullets, tasks and paragraphs to goldmark")
	}
	checkSame(t, src)
}

func FuzzPlainMatchesGoldmark(f *testing.F) {
	r := rand.New(rand.NewPCG(27, 2))
	for range 64 {
		f.Add(genDoc(r))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if CheckText(src) != nil {
			return
		}
		checkSame(t, src)
	})
}

// BenchmarkPlainSections parses a memory file with plainSection and with
// goldmark alone.
func BenchmarkPlainSections(b *testing.B) {
	src := markdowntest.Memory(1000)
	for _, tt := range []struct {
		name         string
		goldmarkOnly bool
	}{{"plain", false}, {"goldmark", true}} {
		b.Run(tt.name, func(b *testing.B) {
			b.SetBytes(int64(len(src)))
			for b.Loop() {
				if _, err := parseWith(src, sectionBytes, tt.goldmarkOnly); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
