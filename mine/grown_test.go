package mine

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/memminer/memminer/internal/testutil"
	"github.com/memminer/memminer/memory/markdown/markdowntest"
	"github.com/memminer/memminer/palace"
)

// grownTails are appended to memory files: notes, notes like earlier
// ones, lines that continue or close what the file ends with, sections.
var grownTails = []string{
	"- an appended note\n", "- Prefers short answers; explain trade-offs only when asked.\n", "lazy continuation of the last note\n",
	"  - nested under the last item\n", "===\n", "```\n", "\n## Appended\n- under a new heading\n", "\n# Top\n\n- a note\n- a note\n",
	"<<<<<<< ours\n- a\n=======\n- b\n>>>>>>> theirs\n", "- superseded: the old runner\n", "- !pinned: keep the lock file\n",
	"- a note with no newline", " continued", "\n\n", "- Decision: the loop re-reads changed files only.\n",
}

// wingState is what a wing holds of its files, to compare two palaces.
func wingState(t *testing.T, p *palace.Palace, wing string) ([]palace.Note, [][]string) {
	t.Helper()
	notes := p.Notes(wing)
	var ids [][]string
	for _, s := range p.Sources(wing) {
		ids = append(ids, s.NoteIDs)
	}
	return notes, ids
}

// A file that only grew is mined from the start of its last section,
// and the wing then holds what mining the file whole gives: the same
// notes, ids, lines, heading paths and governance, in the same order.
func TestGrownFileMinesAsWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 5))
	resumed := 0
	for i := range 60 {
		base := t.TempDir()
		hive := filepath.Join(base, "hive")
		path := writeFile(t, hive, "agents/ann/memory.md", string(markdowntest.Memory(5+r.IntN(40))))
		grown := openPalace(t, filepath.Join(base, "grown"), nil)
		mineT(t, grown, hive, Options{})
		content, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for range 1 + r.IntN(4) {
			content = append(content, grownTails[r.IntN(len(grownTails))]...)
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			s := mineT(t, grown, hive, Options{})
			resumed += s.resumed
		}
		whole := openPalace(t, filepath.Join(base, "whole"), nil)
		mineT(t, whole, hive, Options{})
		gotNotes, gotIDs := wingState(t, grown, "ann")
		wantNotes, wantIDs := wingState(t, whole, "ann")
		if !reflect.DeepEqual(gotNotes, wantNotes) || !reflect.DeepEqual(gotIDs, wantIDs) {
			t.Fatalf("case %d, file\n%s\n--- mined as it grew\n%+v\n--- mined whole\n%+v", i, content, gotNotes, wantNotes)
		}
	}
	// Vacuous unless most appends took the resumed path.
	if resumed < 60 {
		t.Fatalf("only %d appends were mined from the last section", resumed)
	}
	t.Logf("%d appends mined from the last section", resumed)
}

// Each way a grown file cannot be taken up from its last section is
// mined whole, with the notes a whole mine gives.
func TestGrownFileMinedWholeWhenItMust(t *testing.T) {
	for _, tt := range []struct {
		name, tail string
		opts       Options // the second mine's
		resumed    int
	}{
		{"an append", "- c\n", Options{}, 1},
		{"markers appended", "<<<<<<< a\n- c\n=======\n- d\n>>>>>>> b\n", Options{}, 0},
		{"another agent", "- c\n", Options{Wing: "ann", Agent: "bob"}, 0},
		{"frontmatter that governs", "", Options{}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			hive := filepath.Join(base, "hive")
			start := "# Memory\n\n## Build\n- a\n\n## Deploy\n- b\n"
			path := writeFile(t, hive, "agents/ann/memory.md", start)
			p := openPalace(t, filepath.Join(base, "palace"), nil)
			mineT(t, p, hive, Options{})
			grownTo := start + tt.tail
			if tt.name == "frontmatter that governs" {
				// The same bytes first, then frontmatter can only come by
				// rewriting: that is no append, and nothing is resumed.
				grownTo = "---\nstatus: superseded\n---\n" + start + "- c\n"
			}
			if err := os.WriteFile(path, []byte(grownTo), 0o644); err != nil {
				t.Fatal(err)
			}
			// The second mine as tt.opts says: of ann's directory when it
			// names the wing.
			target := hive
			if tt.opts.Wing != "" {
				target = filepath.Dir(path)
			}
			s := mineT(t, p, target, tt.opts)
			if s.resumed != tt.resumed {
				t.Fatalf("resumed %d files, want %d", s.resumed, tt.resumed)
			}
			whole := openPalace(t, filepath.Join(base, "whole"), nil)
			mineT(t, whole, target, tt.opts)
			got, _ := wingState(t, p, "ann")
			want, _ := wingState(t, whole, "ann")
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("--- mined as it grew\n%+v\n--- mined whole\n%+v", got, want)
			}
			if strings.Contains(tt.tail, "<<<<<<<") && got[len(got)-1].Governance.Reason != ConflictReason {
				t.Fatalf("a note between markers is not marked: %+v", got[len(got)-1])
			}
		})
	}
}

// Two files with the same wing and path below their agent directory
// share note ids; a note that leaves one passes to the other with the
// line it had there. The wing's notes of the file that receives it are
// then not what its content gave, and a later append mines it whole
// (found by review: the resumed mine lost x and q, or held x twice).
func TestGrownFileAfterSharedNotesPassed(t *testing.T) {
	for _, tt := range []struct {
		name                string
		hive, other, others string // ann's file, the other ann's first and next content
		tail                string
		want                []string // the texts of ann's notes after the append, in order
	}{
		{"a shared note passed back past the resume point", "- x\n- q\n\n## S\n- a\n", "f1\n\nf2\n\nf3\n\n- x\n", "f1\n\nf2\n", "- b\n", []string{"x", "q", "a", "b"}},
		{"a shared note passed back before it", "filler a\n\n## S\n- x\n", "## S\n- x\n", "## S\n- other\n", "- y\n", []string{"filler a", "x", "y"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			hive := filepath.Join(base, "hive")
			path := writeFile(t, hive, "agents/ann/memory.md", tt.hive)
			other := filepath.Join(base, "other", "ann")
			writeFile(t, other, "memory.md", tt.other)
			p := openPalace(t, filepath.Join(base, "palace"), nil)
			mineT(t, p, hive, Options{})
			mineT(t, p, other, Options{})
			writeFile(t, other, "memory.md", tt.others)
			mineT(t, p, other, Options{})
			testutil.AppendFile(t, path, tt.tail)
			s := mineT(t, p, hive, Options{})
			if s.NotesRemoved != 0 {
				t.Fatalf("an append removed %d notes: %+v", s.NotesRemoved, s)
			}
			var got []string
			for _, n := range p.Notes("ann") {
				if n.Source == path {
					got = append(got, n.Text)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ann's notes %q, want %q", got, tt.want)
			}
		})
	}
}

// A file mined under another path in its ids (a directory mined with
// --wing, no hive) is mined whole: every note's id names it by the path
// it has now, as a whole mine gives.
func TestGrownFileUnderAnotherRelPath(t *testing.T) {
	base := t.TempDir()
	hive := filepath.Join(base, "hive")
	writeFile(t, hive, "agents/ann/memory.md", "- m\n")
	path := writeFile(t, hive, "agents/ann/notes/x.md", "- p\n\n## S\n- a\n")
	p := openPalace(t, filepath.Join(base, "palace"), nil)
	mineT(t, p, hive, Options{})
	testutil.AppendFile(t, path, "- b\n")
	s := mineT(t, p, filepath.Dir(path), Options{Wing: "ann"})
	if s.resumed != 0 {
		t.Fatalf("resumed a file whose ids name it otherwise now")
	}
	for _, n := range p.Notes("ann") {
		if n.Source == path && n.ID != NoteID("ann", "x.md", n.Heading, n.Text, 0) {
			t.Errorf("note %q has id %s, not that of x.md", n.Text, n.ID)
		}
	}
}
