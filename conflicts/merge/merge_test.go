package merge

import (
	"strings"
	"testing"

	"github.com/memminer/memminer/memory/markdown"
)

// baseOf returns content as the mine package would have recorded it.
func baseOf(t testing.TB, content string) *Base {
	t.Helper()
	doc, err := markdown.Parse([]byte(content), markdown.MemoryOptions())
	if err != nil {
		t.Fatal(err)
	}
	b := &Base{Frontmatter: markdown.FrontmatterScalars(doc.Frontmatter)}
	for _, n := range doc.Notes {
		b.Notes = append(b.Notes, BaseNote{Heading: n.Heading, Text: n.Text, Line: n.Line})
	}
	return b
}

// basesOf returns content as mined, then an older content without its
// last note: a history in which both sides, keeping that note, confirm
// content as their common ancestor.
func basesOf(t testing.TB, content string) []Base {
	t.Helper()
	b := *baseOf(t, content)
	older := b
	older.Notes = b.Notes[:len(b.Notes)-1]
	return []Base{b, older}
}

const marker = "(conflict: from the copy of laptop, 2026-12-01)"

const baseFile = `# Memory

## Build

- run make before pushing
- CI runs on two cores

## People

- Ana owns the palace
`

func TestMerge(t *testing.T) {
	tests := []struct {
		name   string
		base   string // "" with noBase means no base
		noBase bool
		// removedLast: the base's history is base with a note at the
		// end, then base (the note removed); an empty copy confirms that.
		removedLast  bool
		onlyBase     bool // the base is the only content mined: unconfirmed
		ours, theirs string
		want         string
		review       bool
		kinds        []ConflictKind
		fromTheirs   int
		removed      int
		proposed     int
		accept       bool // Input.AcceptRemovals
		remove       []Note
		removeFM     bool // Input.RemoveFrontmatter
		proposedFM   bool
		frontmatter  string
	}{
		{
			name:   "append/append in one section",
			base:   baseFile,
			ours:   strings.Replace(baseFile, "- CI runs on two cores\n", "- CI runs on two cores\n- ours: lint with vet\n", 1),
			theirs: strings.Replace(baseFile, "- CI runs on two cores\n", "- CI runs on two cores\n- theirs: tests need -race\n", 1),
			want: strings.Replace(baseFile, "- CI runs on two cores\n",
				"- CI runs on two cores\n- ours: lint with vet\n- theirs: tests need -race\n", 1),
			fromTheirs: 1,
		},
		{
			name:   "append in different sections",
			base:   baseFile,
			ours:   strings.Replace(baseFile, "- CI runs on two cores\n", "- CI runs on two cores\n- ours: lint with vet\n", 1),
			theirs: baseFile + "- Bo writes the docs\n",
			want: strings.Replace(baseFile, "- CI runs on two cores\n", "- CI runs on two cores\n- ours: lint with vet\n", 1) +
				"- Bo writes the docs\n",
			fromTheirs: 1,
		},
		{
			name:       "append at the end of a section the copy also appended to",
			base:       baseFile,
			ours:       baseFile + "- Bo writes the docs\n",
			theirs:     baseFile + "- Cy runs releases\n",
			want:       baseFile + "- Bo writes the docs\n- Cy runs releases\n",
			fromTheirs: 1,
		},
		{
			name:     "append/delete keeps the note, the removal proposed",
			base:     baseFile,
			ours:     baseFile + "- Bo writes the docs\n",
			theirs:   strings.Replace(baseFile, "- run make before pushing\n", "", 1),
			want:     baseFile + "- Bo writes the docs\n",
			proposed: 1,
		},
		{
			name:    "append/delete with AcceptRemovals",
			base:    baseFile,
			ours:    baseFile + "- Bo writes the docs\n",
			theirs:  strings.Replace(baseFile, "- run make before pushing\n", "", 1),
			want:    strings.Replace(baseFile, "- run make before pushing\n", "", 1) + "- Bo writes the docs\n",
			removed: 1, accept: true,
		},
		{
			name:        "an empty copy removes nothing",
			removedLast: true,
			base:        baseFile,
			ours:        baseFile + "- Bo writes the docs\n",
			theirs:      "",
			want:        baseFile + "- Bo writes the docs\n",
			proposed:    3,
		},
		{
			name:        "a truncated copy removes nothing, nor cuts a note short",
			removedLast: true,
			base:        baseFile,
			ours:        baseFile + "- Bo writes the docs\n",
			theirs:      baseFile[:strings.Index(baseFile, "palace")+3],
			want:        baseFile + "- Bo writes the docs\n",
			proposed:    1,
		},
		{
			name:        "an empty copy keeps the frontmatter",
			removedLast: true,
			base:        "---\nagent: dwight\nreview: 2026-06-01\n---\n" + baseFile,
			ours:        "---\nagent: dwight\nreview: 2026-06-01\n---\n" + baseFile + "- Bo writes the docs\n",
			theirs:      "",
			want:        "---\nagent: dwight\nreview: 2026-06-01\n---\n" + baseFile + "- Bo writes the docs\n",
			proposed:    3,
			proposedFM:  true, frontmatter: FrontmatterOurs,
		},
		{
			name:       "a copy dropping a frontmatter key keeps it",
			base:       "---\nagent: dwight\nreview: 2026-06-01\n---\n" + baseFile,
			ours:       "---\nagent: dwight\nreview: 2026-06-01\n---\n" + baseFile + "- Bo writes the docs\n",
			theirs:     "---\nreview: 2027-01-01\n---\n" + baseFile,
			want:       "---\nagent: dwight\nreview: 2026-06-01\n---\n" + baseFile + "- Bo writes the docs\n",
			fromTheirs: 0,
			proposedFM: true, frontmatter: FrontmatterOurs,
		},
		{
			name:        "a copy dropping a frontmatter key with AcceptRemovals",
			base:        "---\nagent: dwight\nreview: 2026-06-01\n---\n" + baseFile,
			ours:        "---\nagent: dwight\nreview: 2026-06-01\n---\n" + baseFile + "- Bo writes the docs\n",
			theirs:      "---\nreview: 2027-01-01\n---\n" + baseFile,
			want:        "---\nreview: 2027-01-01\n---\n" + baseFile + "- Bo writes the docs\n",
			accept:      true,
			frontmatter: FrontmatterTheirs,
		},
		{
			name:        "an empty copy with one removal taken removes that note only",
			removedLast: true,
			base:        baseFile,
			ours:        baseFile + "- Bo writes the docs\n",
			theirs:      "",
			remove:      []Note{{Heading: "Memory > Build", Text: "run make before pushing"}},
			want:        strings.Replace(baseFile, "- run make before pushing\n", "", 1) + "- Bo writes the docs\n",
			removed:     1,
			proposed:    2,
		},
		{
			name:        "a removal taken that the copy does not propose removes nothing",
			removedLast: true,
			base:        baseFile,
			ours:        baseFile + "- Bo writes the docs\n",
			theirs:      strings.Replace(baseFile, "- CI runs on two cores\n", "", 1),
			remove:      []Note{{Heading: "Memory > Build", Text: "run make before pushing"}, {Heading: "Memory > People", Text: "Bo writes the docs"}},
			want:        baseFile + "- Bo writes the docs\n",
			proposed:    1,
		},
		{
			name:        "a truncated copy with its cut note taken cuts it",
			removedLast: true,
			base:        baseFile,
			ours:        baseFile + "- Bo writes the docs\n",
			theirs:      baseFile[:strings.Index(baseFile, "palace")+3],
			remove:      []Note{{Heading: "Memory > People", Text: "Ana owns the palace"}},
			want:        strings.Replace(baseFile, "palace\n", "pal\n", 1) + "- Bo writes the docs\n",
			fromTheirs:  1,
		},
		{
			name:        "an empty copy with one removal taken keeps the frontmatter",
			removedLast: true,
			base:        "---\nagent: dwight\n---\n" + baseFile,
			ours:        "---\nagent: dwight\n---\n" + baseFile + "- Bo writes the docs\n",
			theirs:      "",
			remove:      []Note{{Heading: "Memory > People", Text: "Ana owns the palace"}},
			want:        "---\nagent: dwight\n---\n" + strings.Replace(baseFile, "- Ana owns the palace\n", "", 1) + "- Bo writes the docs\n",
			removed:     1,
			proposed:    2,
			proposedFM:  true, frontmatter: FrontmatterOurs,
		},
		{
			name:        "a copy dropping a frontmatter key with RemoveFrontmatter",
			base:        "---\nagent: dwight\nreview: 2026-06-01\n---\n" + baseFile,
			ours:        "---\nagent: dwight\nreview: 2026-06-01\n---\n" + baseFile + "- Bo writes the docs\n",
			theirs:      "---\nreview: 2027-01-01\n---\n" + baseFile,
			want:        "---\nreview: 2027-01-01\n---\n" + baseFile + "- Bo writes the docs\n",
			removeFM:    true,
			frontmatter: FrontmatterTheirs,
		},
		{
			name:       "edit/append",
			base:       baseFile,
			ours:       strings.Replace(baseFile, "two cores", "four cores since May", 1),
			theirs:     baseFile + "- Bo writes the docs\n",
			want:       strings.Replace(baseFile, "two cores", "four cores since May", 1) + "- Bo writes the docs\n",
			fromTheirs: 1,
		},
		{
			name:       "append/edit takes the copy's edit",
			base:       baseFile,
			ours:       baseFile + "- Bo writes the docs\n",
			theirs:     strings.Replace(baseFile, "two cores", "four cores since May", 1),
			want:       strings.Replace(baseFile, "two cores", "four cores since May", 1) + "- Bo writes the docs\n",
			fromTheirs: 1,
		},
		{
			name:   "edit/edit is a conflict",
			base:   baseFile,
			ours:   strings.Replace(baseFile, "two cores", "four cores", 1),
			theirs: strings.Replace(baseFile, "two cores", "eight cores", 1),
			want: strings.Replace(baseFile, "- CI runs on two cores\n",
				"- CI runs on four cores\n- CI runs on eight cores "+marker+"\n", 1),
			review: true, kinds: []ConflictKind{BothChanged}, fromTheirs: 1,
		},
		{
			name:   "a conflict on a section's first item keeps the list tight",
			base:   baseFile,
			ours:   strings.Replace(baseFile, "run make before", "run make check before", 1),
			theirs: strings.Replace(baseFile, "run make before", "run make lint before", 1),
			want: strings.Replace(baseFile, "- run make before pushing\n",
				"- run make check before pushing\n- run make lint before pushing "+marker+"\n", 1),
			review: true, kinds: []ConflictKind{BothChanged}, fromTheirs: 1,
		},
		{
			name:   "same edit on both sides",
			base:   baseFile,
			ours:   strings.Replace(baseFile, "two cores", "four cores", 1),
			theirs: strings.Replace(baseFile, "two cores", "four cores", 1),
			want:   strings.Replace(baseFile, "two cores", "four cores", 1),
		},
		{
			name:   "delete/edit keeps the edit, marked",
			base:   baseFile,
			ours:   strings.Replace(baseFile, "- CI runs on two cores\n", "", 1),
			theirs: strings.Replace(baseFile, "two cores", "four cores", 1),
			want: strings.Replace(baseFile, "- CI runs on two cores\n",
				"- CI runs on four cores "+marker+"\n", 1),
			review: true, kinds: []ConflictKind{OursRemovedTheirsChanged}, fromTheirs: 1,
		},
		{
			name:   "edit/delete keeps ours",
			base:   baseFile,
			ours:   strings.Replace(baseFile, "two cores", "four cores", 1),
			theirs: strings.Replace(baseFile, "- CI runs on two cores\n", "", 1),
			want:   strings.Replace(baseFile, "two cores", "four cores", 1),
			review: true, kinds: []ConflictKind{OursChangedTheirsRemoved},
		},
		{
			name:       "delete/delete",
			base:       baseFile,
			ours:       strings.Replace(baseFile, "- CI runs on two cores\n", "", 1),
			theirs:     strings.Replace(baseFile, "- CI runs on two cores\n", "", 1) + "- Bo writes the docs\n",
			want:       strings.Replace(baseFile, "- CI runs on two cores\n", "", 1) + "- Bo writes the docs\n",
			fromTheirs: 1,
		},
		{
			name:        "frontmatter changed in the copy only",
			base:        "---\nreview: 2026-06-01\n---\n" + baseFile,
			ours:        "---\nreview: 2026-06-01\n---\n" + baseFile + "- Bo writes the docs\n",
			theirs:      "---\nreview: 2027-01-01\n---\n" + baseFile,
			want:        "---\nreview: 2027-01-01\n---\n" + baseFile + "- Bo writes the docs\n",
			frontmatter: FrontmatterTheirs,
		},
		{
			name:     "frontmatter changed in the copy against an unconfirmed base is not taken",
			base:     "---\nagent: dwight\n---\n" + baseFile,
			onlyBase: true,
			ours:     "---\nagent: dwight\n---\n" + baseFile + "- Bo writes the docs\n",
			theirs:   "---\nagent: jim\n---\n" + baseFile,
			want:     "---\nagent: dwight\n---\n" + baseFile + "- Bo writes the docs\n",
			review:   true, kinds: []ConflictKind{FrontmatterChanged}, frontmatter: FrontmatterOurs,
		},
		{
			name:       "frontmatter changed here only",
			base:       "---\nreview: 2026-06-01\n---\n" + baseFile,
			ours:       "---\nreview: 2027-01-01\n---\n" + baseFile,
			theirs:     "---\nreview: 2026-06-01\n---\n" + baseFile + "- Bo writes the docs\n",
			want:       "---\nreview: 2027-01-01\n---\n" + baseFile + "- Bo writes the docs\n",
			fromTheirs: 1, frontmatter: FrontmatterOurs,
		},
		{
			name:   "frontmatter changed on both sides keeps ours",
			base:   "---\nreview: 2026-06-01\n---\n" + baseFile,
			ours:   "---\nreview: 2027-01-01\n---\n" + baseFile,
			theirs: "---\nreview: 2028-01-01\n---\n" + baseFile,
			want:   "---\nreview: 2027-01-01\n---\n" + baseFile,
			review: true, kinds: []ConflictKind{FrontmatterChanged}, frontmatter: FrontmatterOurs,
		},
		{
			name:       "CRLF file, LF copy",
			base:       baseFile,
			ours:       crlf(baseFile + "- Bo writes the docs\n"),
			theirs:     baseFile + "- Cy runs releases\n",
			want:       crlf(baseFile + "- Bo writes the docs\n- Cy runs releases\n"),
			fromTheirs: 1,
		},
		{
			name:       "LF file, CRLF copy",
			base:       baseFile,
			ours:       baseFile + "- Bo writes the docs\n",
			theirs:     crlf(strings.Replace(baseFile, "two cores", "four cores", 1)),
			want:       strings.Replace(baseFile, "two cores", "four cores", 1) + "- Bo writes the docs\n",
			fromTheirs: 1,
		},
		{
			name:   "copy identical to the file",
			base:   baseFile,
			ours:   baseFile + "- Bo writes the docs\n",
			theirs: baseFile + "- Bo writes the docs\n",
			want:   baseFile + "- Bo writes the docs\n",
		},
		{
			name:   "no base: union of both appends",
			noBase: true,
			ours:   baseFile + "- Bo writes the docs\n",
			theirs: strings.Replace(baseFile, "- CI runs on two cores\n", "- CI runs on two cores\n- tests need -race\n", 1),
			want: strings.Replace(baseFile, "- CI runs on two cores\n", "- CI runs on two cores\n- tests need -race\n", 1) +
				"- Bo writes the docs\n",
			fromTheirs: 1,
		},
		{
			name:   "no base: nothing dropped, a second version marked",
			noBase: true,
			ours:   strings.Replace(baseFile, "- run make before pushing\n", "", 1),
			theirs: strings.Replace(baseFile, "two cores", "four cores", 1),
			want:   strings.Replace(baseFile, "- CI runs on two cores\n", "- CI runs on two cores\n- CI runs on four cores "+marker+"\n", 1),
			review: true, kinds: []ConflictKind{UnionChanged}, fromTheirs: 2,
		},
		{
			name:   "a new section in the copy",
			base:   baseFile,
			ours:   baseFile + "- Bo writes the docs\n",
			theirs: strings.Replace(baseFile, "## People\n", "## Deploy\n\n1. tag\n2. push\n\n## People\n", 1),
			want: strings.Replace(baseFile, "## People\n", "## Deploy\n\n1. tag\n2. push\n\n## People\n", 1) +
				"- Bo writes the docs\n",
			fromTheirs: 2,
		},
		{
			name:       "paragraphs",
			base:       "# Notes\n\nFirst paragraph.\n\nSecond paragraph.\n",
			ours:       "# Notes\n\nFirst paragraph.\n\nSecond paragraph.\n\nOurs adds this.\n",
			theirs:     "# Notes\n\nFirst paragraph.\n\nTheirs adds this.\n\nSecond paragraph.\n",
			want:       "# Notes\n\nFirst paragraph.\n\nTheirs adds this.\n\nSecond paragraph.\n\nOurs adds this.\n",
			fromTheirs: 1,
		},
		{
			name:       "file without a final newline",
			base:       "- a\n- b",
			ours:       "- a\n- b\n- c",
			theirs:     "- a\n- b\n- d",
			want:       "- a\n- b\n- c\n- d",
			fromTheirs: 1,
		},
		{
			name:       "empty file, copy has notes",
			noBase:     true,
			ours:       "",
			theirs:     "# Memory\n\n- a\n",
			want:       "# Memory\n\n- a\n",
			fromTheirs: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Ours: []byte(tt.ours), Theirs: []byte(tt.theirs), Device: "laptop", Date: "2026-12-01", AcceptRemovals: tt.accept, Remove: tt.remove, RemoveFrontmatter: tt.removeFM}
			switch {
			case tt.removedLast:
				b := *baseOf(t, tt.base)
				in.Bases = []Base{b, *baseOf(t, tt.base+"- Cy left the team\n")}
			case tt.onlyBase:
				in.Bases = []Base{*baseOf(t, tt.base)}
			case !tt.noBase:
				in.Bases = basesOf(t, tt.base)
			}
			res, err := Merge(in)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Merged) != tt.want {
				t.Errorf("merged:\n%s\nwant:\n%s", res.Merged, tt.want)
			}
			if res.NeedsReview != tt.review {
				t.Errorf("NeedsReview = %v, want %v (conflicts %+v)", res.NeedsReview, tt.review, res.Conflicts)
			}
			var kinds []ConflictKind
			for _, c := range res.Conflicts {
				kinds = append(kinds, c.Kind)
			}
			if strings.Join(asStrings(kinds), ",") != strings.Join(asStrings(tt.kinds), ",") {
				t.Errorf("conflicts %v, want %v", kinds, tt.kinds)
			}
			if len(res.FromTheirs) != tt.fromTheirs {
				t.Errorf("FromTheirs = %+v, want %d notes", res.FromTheirs, tt.fromTheirs)
			}
			if len(res.Removed) != tt.removed {
				t.Errorf("Removed = %+v, want %d notes", res.Removed, tt.removed)
			}
			if len(res.ProposedRemovals) != tt.proposed {
				t.Errorf("ProposedRemovals = %+v, want %d notes", res.ProposedRemovals, tt.proposed)
			}
			if res.ProposedFrontmatter != tt.proposedFM {
				t.Errorf("ProposedFrontmatter = %v, want %v", res.ProposedFrontmatter, tt.proposedFM)
			}
			if tt.frontmatter != "" && res.Frontmatter != tt.frontmatter {
				t.Errorf("Frontmatter = %s, want %s", res.Frontmatter, tt.frontmatter)
			}
			if res.ThreeWay == tt.noBase {
				t.Errorf("ThreeWay = %v with noBase %v", res.ThreeWay, tt.noBase)
			}
		})
	}
}

func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

func asStrings(ks []ConflictKind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// TestBaseIsTheLastContentBothSidesHad: the palace holds the file's
// contents as mined, newest first; the merge must pick the one both sides
// started from, never one side's own earlier edit.
func TestBaseIsTheLastContentBothSidesHad(t *testing.T) {
	v0 := baseFile
	mid := strings.Replace(v0, "two cores", "four cores", 1)           // ours' first edit
	ours := mid + "- Bo writes the docs\n"                             // ours now
	theirsFromV0 := strings.Replace(v0, "two cores", "eight cores", 1) // the copy edited v0
	theirsFromMid := mid + "- Cy runs releases\n"                      // the copy started from mid
	bases := []Base{*baseOf(t, ours), *baseOf(t, mid), *baseOf(t, v0)}
	tests := []struct {
		name, theirs string
		base         int
		review       bool
	}{
		{"copy made before ours' first edit synced", theirsFromV0, 2, true},
		{"copy made after it synced", theirsFromMid, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Merge(Input{Bases: bases, Ours: []byte(ours), Theirs: []byte(tt.theirs), Device: "laptop", Date: "2026-12-01"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Base != tt.base || res.NeedsReview != tt.review {
				t.Errorf("base %d, review %v; want %d, %v\n%s", res.Base, res.NeedsReview, tt.base, tt.review, res.Merged)
			}
			if !strings.Contains(string(res.Merged), "four cores") {
				t.Errorf("ours' edit lost:\n%s", res.Merged)
			}
		})
	}
	// Only ours as mined: no usable base.
	res, err := Merge(Input{Bases: bases[:1], Ours: []byte(ours), Theirs: []byte(theirsFromMid)})
	if err != nil {
		t.Fatal(err)
	}
	if res.ThreeWay || res.Base != -1 {
		t.Errorf("ThreeWay %v base %d with only ours' content", res.ThreeWay, res.Base)
	}
}

// TestUnconfirmedBase: with only one mined content, nothing shows that
// both sides descend from it, so the merge takes additions only and keeps
// both versions of what one side removed or changed.
func TestUnconfirmedBase(t *testing.T) {
	tests := []struct {
		name, ours, theirs, want string
		kinds                    []ConflictKind
	}{
		{
			name:   "additions merge cleanly",
			ours:   baseFile + "- Bo writes the docs\n",
			theirs: strings.Replace(baseFile, "- CI runs on two cores\n", "- CI runs on two cores\n- tests need -race\n", 1),
			want:   strings.Replace(baseFile, "- CI runs on two cores\n", "- CI runs on two cores\n- tests need -race\n", 1) + "- Bo writes the docs\n",
		},
		{
			name:   "a note the copy lacks stays, and is no conflict",
			ours:   baseFile + "- Bo writes the docs\n",
			theirs: strings.Replace(baseFile, "- run make before pushing\n", "", 1),
			want:   baseFile + "- Bo writes the docs\n",
		},
		{
			name:   "a removal here keeps the copy's note, marked",
			ours:   strings.Replace(baseFile, "- run make before pushing\n", "", 1),
			theirs: baseFile + "- Cy runs releases\n",
			want:   strings.Replace(baseFile, "- run make before pushing\n", "- run make before pushing "+marker+"\n", 1) + "- Cy runs releases\n",
			kinds:  []ConflictKind{UnconfirmedRemoval},
		},
		{
			name:   "a change on one side keeps both versions",
			ours:   baseFile + "- Bo writes the docs\n",
			theirs: strings.Replace(baseFile, "two cores", "four cores", 1),
			want:   strings.Replace(baseFile, "- CI runs on two cores\n", "- CI runs on two cores\n- CI runs on four cores "+marker+"\n", 1) + "- Bo writes the docs\n",
			kinds:  []ConflictKind{UnconfirmedChange},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Merge(Input{Bases: []Base{*baseOf(t, baseFile)}, Ours: []byte(tt.ours), Theirs: []byte(tt.theirs), Device: "laptop", Date: "2026-12-01"})
			if err != nil {
				t.Fatal(err)
			}
			if !res.ThreeWay || res.Confirmed {
				t.Errorf("ThreeWay %v Confirmed %v", res.ThreeWay, res.Confirmed)
			}
			if string(res.Merged) != tt.want {
				t.Errorf("merged:\n%s\nwant:\n%s", res.Merged, tt.want)
			}
			var kinds []ConflictKind
			for _, c := range res.Conflicts {
				kinds = append(kinds, c.Kind)
			}
			if strings.Join(asStrings(kinds), ",") != strings.Join(asStrings(tt.kinds), ",") {
				t.Errorf("conflicts %v, want %v", kinds, tt.kinds)
			}
			if res.NeedsReview != (len(tt.kinds) > 0) {
				t.Errorf("NeedsReview %v", res.NeedsReview)
			}
		})
	}
}

// TestMergeOddFiles: files with a byte order mark, only frontmatter,
// nothing at all or only headings merge without losing a note.
func TestMergeOddFiles(t *testing.T) {
	tests := []struct{ name, ours, theirs, want string }{
		{"byte order mark", "\ufeff- a\n", "\ufeff- a\n- b\n", "\ufeff- a\n- b\n"},
		{"both empty", "", "", ""},
		{"copy empty", "- a\n", "", "- a\n"},
		{"only frontmatter", "---\nx: 1\n---\n", "---\nx: 1\n---\n- b\n", "---\nx: 1\n---\n- b\n"},
		{"only headings", "# A\n", "# A\n\n## B\n\n- b\n", "# A\n\n## B\n\n- b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Merge(Input{Ours: []byte(tt.ours), Theirs: []byte(tt.theirs), Device: "d", Date: "2026-12-01"})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Merged) != tt.want {
				t.Errorf("merged %q, want %q", res.Merged, tt.want)
			}
		})
	}
}
