package mine

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memminer/memminer/memory/markdown"
	"github.com/memminer/memminer/memory/markdown/markdowntest"
)

// TestMinedNotesAreParsedNotes: mining cuts a file into exactly the notes
// markdown.Parse makes of it with markdown.MemoryOptions, as merge,
// remember, memfile, wake-up and the inbox parse it, so each of them
// names the notes the palace holds.
func TestMinedNotesAreParsedNotes(t *testing.T) {
	inputs, _ := filepath.Glob(filepath.Join("..", "memory", "markdown", "testdata", "parse", "*.md"))
	if len(inputs) == 0 {
		t.Fatal("no parser inputs under markdown/testdata/parse")
	}
	files := map[string][]byte{"generated": markdowntest.Memory(3000)}
	for _, in := range inputs {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(in)] = data
	}
	type note struct {
		line          int
		heading, text string
	}
	order := func(a, b note) int {
		return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.heading, b.heading), cmp.Compare(a.text, b.text))
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			doc, err := markdown.Parse(data, markdown.MemoryOptions())
			if err != nil {
				t.Fatal(err)
			}
			var want []note
			for _, n := range doc.Notes {
				want = append(want, note{n.Line, n.Heading, n.Text})
			}
			hv := t.TempDir()
			writeFile(t, hv, "agents/a/memory.md", string(data))
			p := openPalace(t, filepath.Join(t.TempDir(), "palace"), nil)
			mineT(t, p, filepath.Join(hv, "agents/a"), Options{})
			var got []note
			for _, n := range p.Notes("a") {
				got = append(got, note{n.Line, n.Heading, n.Text})
			}
			slices.SortFunc(want, order)
			slices.SortFunc(got, order)
			if !slices.Equal(got, want) {
				t.Errorf("mined %d notes, parsed %d; they differ:\nmined  %+v\nparsed %+v", len(got), len(want), got, want)
			}
		})
	}
}
