package markdown

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// appendTails are bytes appended to generated documents: lines that
// continue, close or reopen what the document ends with.
var appendTails = []string{
	"- an appended note\n", "\n- after a blank line\n", "lazy continuation\n", "  - nested under the last item\n",
	"===\n", "---\n", "```\n", "~~~\n", "-->\n", "</div>\n", "\n## A new section\n- its note\n", "# Top again\n\ntext\n",
	"## no blank line before\n", "<<<<<<< ours\n- a\n=======\n- b\n>>>>>>> theirs\n", ">>>>>>> theirs\n", "x", " and more\n",
	"\r\n", "\n\n\n", "    indented code\n", "| a | b |\n|---|---|\n| 1 | 2 |\n", "[ref]: /url\n",
}

// notesOf parses src whole, as Sections does for a mine.
func notesOf(t *testing.T, src []byte) (*Document, []Note) {
	t.Helper()
	doc, seq, err := Sections(src, MemoryOptions())
	if err != nil {
		t.Fatal(err)
	}
	var notes []Note
	for ns := range seq {
		notes = append(notes, ns...)
	}
	return doc, notes
}

// checkResume fails when a parse of old+tail resumed where old's parse
// left off, after old's notes before that point, differs from a whole
// parse of old+tail. It reports whether the parse could be resumed.
func checkResume(t *testing.T, old, tail []byte) bool {
	t.Helper()
	doc, oldNotes := notesOf(t, old)
	if doc.Resume == nil {
		return false
	}
	b, err := doc.Resume.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var r Resume
	if err := r.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(&r, doc.Resume) {
		t.Fatalf("resume point %+v does not survive its binary form: %+v, %v", doc.Resume, r, err)
	}
	grown := append(append([]byte(nil), old...), tail...)
	wantDoc, want := notesOf(t, grown)
	gotDoc, seq, err := SectionsFrom(grown, MemoryOptions(), &r)
	if errors.Is(err, ErrCannotResume) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	var got []Note
	for _, n := range oldNotes {
		if n.Line < r.Line {
			got = append(got, n)
		}
	}
	for ns := range seq {
		got = append(got, ns...)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed at line %d of\n%q\n+ %q:\n--- resumed\n%+v\n--- whole\n%+v", r.Line, old, tail, got, want)
	}
	if !reflect.DeepEqual(gotDoc.Frontmatter, wantDoc.Frontmatter) || gotDoc.BodyStart != wantDoc.BodyStart || !reflect.DeepEqual(gotDoc.Resume, wantDoc.Resume) {
		t.Fatalf("resumed document of %q + %q: %+v, whole %+v", old, tail, gotDoc, wantDoc)
	}
	return true
}

func TestResumeMatchesWholeParse(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 3))
	tried, resumed := 0, 0
	for range 20000 {
		// Two documents with a heading between them: most have a section
		// after the first to resume at.
		old := append(append(genDoc(r), "\n\n## Between\n"...), genDoc(r)...)
		var tail []byte
		if r.IntN(2) == 0 {
			tail = []byte(appendTails[r.IntN(len(appendTails))])
		} else {
			tail = genDoc(r)
		}
		tried++
		if checkResume(t, old, tail) {
			resumed++
		}
	}
	// Vacuous unless most generated documents with a section after the
	// first could be resumed.
	if resumed < tried/5 {
		t.Fatalf("resumed only %d of %d appends", resumed, tried)
	}
	t.Logf("resumed %d of %d appends", resumed, tried)
}

func TestResumeKeepsTheHeadingPath(t *testing.T) {
	old := []byte("# Agent\n\n## Build\n- a\n\n## Deploy\n- b\n")
	doc, _ := notesOf(t, old)
	if doc.Resume == nil || doc.Resume.Line != 6 {
		t.Fatalf("resume point %+v, want line 6 (## Deploy)", doc.Resume)
	}
	grown := append(old, "- c\n"...)
	_, seq, err := SectionsFrom(grown, MemoryOptions(), doc.Resume)
	if err != nil {
		t.Fatal(err)
	}
	var got []Note
	for ns := range seq {
		got = append(got, ns...)
	}
	want := []Note{{Heading: "Agent > Deploy", Line: 7, Text: "b"}, {Heading: "Agent > Deploy", Line: 8, Text: "c"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed notes %+v, want %+v", got, want)
	}
}

func TestResumeRefused(t *testing.T) {
	for _, tt := range []struct {
		name, old string
		resumable bool
		tail      string
	}{
		{"one section", "- a\n- b\n", false, ""},
		{"a last heading line the file does not end", "- a\n\n# H", false, ""},
		{"conflict markers", "- a\n\n# H\n<<<<<<< a\n- b\n=======\n- c\n>>>>>>> b\n", false, ""},
		{"markers appended", "- a\n\n# H\n- b\n", true, "<<<<<<< a\n- b\n=======\n- c\n>>>>>>> b\n"},
		{"frontmatter closed by the append", "---\nagent: a\n" + strings.Repeat("- a note\n", 80) + "\n# H\n- b\n", true, "---\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc, _ := notesOf(t, []byte(tt.old))
			if (doc.Resume != nil) != tt.resumable {
				t.Fatalf("resume point %+v, want one: %v", doc.Resume, tt.resumable)
			}
			if doc.Resume == nil {
				return
			}
			if _, _, err := SectionsFrom([]byte(tt.old+tt.tail), MemoryOptions(), doc.Resume); !errors.Is(err, ErrCannotResume) {
				t.Fatalf("SectionsFrom = %v, want ErrCannotResume", err)
			}
		})
	}
}

func TestResumeUnmarshalRejectsDamage(t *testing.T) {
	doc, _ := notesOf(t, []byte("# A\n\n## B\n- x\n"))
	b, _ := doc.Resume.MarshalBinary()
	for i := range b {
		var r Resume
		if r.UnmarshalBinary(b[:i]) == nil {
			t.Fatalf("a resume point cut to %d of %d bytes decodes", i, len(b))
		}
	}
	var r Resume
	if r.UnmarshalBinary(append(b, 0)) == nil || r.UnmarshalBinary(nil) == nil {
		t.Fatal("a resume point with a byte too many, or none, decodes")
	}
}

func FuzzResumeMatchesWholeParse(f *testing.F) {
	r := rand.New(rand.NewPCG(27, 4))
	for range 64 {
		f.Add(genDoc(r), []byte(appendTails[r.IntN(len(appendTails))]))
	}
	f.Fuzz(func(t *testing.T, old, tail []byte) {
		if CheckText(old) != nil || CheckText(tail) != nil {
			return
		}
		checkResume(t, old, tail)
	})
}
