package memfile

import (
	"errors"
	"strings"
	"testing"

	"github.com/memminer/memminer/memory/markdown"
)

func TestAppend(t *testing.T) {
	note := Item{Text: "Aisle seats on all flights", Date: "2026-12-01"}
	tests := []struct {
		name    string
		data    string
		heading string
		item    Item
		want    string
		line    int
	}{
		{name: "empty file", data: "", item: note,
			want: "- Aisle seats on all flights (added 2026-12-01)\n", line: 1},
		{name: "end of file", data: "# pam\n\n- one\n", item: note,
			want: "# pam\n\n- one\n- Aisle seats on all flights (added 2026-12-01)\n", line: 4},
		{name: "no final newline stays without", data: "# pam\n\n- one", item: note,
			want: "# pam\n\n- one\n- Aisle seats on all flights (added 2026-12-01)", line: 4},
		{name: "CRLF", data: "# pam\r\n\r\n- one\r\n", item: note,
			want: "# pam\r\n\r\n- one\r\n- Aisle seats on all flights (added 2026-12-01)\r\n", line: 4},
		{name: "CRLF heading missing, no final newline", data: "# pam\r\n\r\n- one", heading: "Travel", item: note,
			want: "# pam\r\n\r\n- one\r\n\r\n## Travel\r\n- Aisle seats on all flights (added 2026-12-01)", line: 6},
		{name: "frontmatter only", data: "---\nrole: travel\n---\n", item: note,
			want: "---\nrole: travel\n---\n- Aisle seats on all flights (added 2026-12-01)\n", line: 4},
		{name: "frontmatter only, heading missing", data: "---\nrole: travel\n---\n", heading: "Travel", item: note,
			want: "---\nrole: travel\n---\n\n## Travel\n- Aisle seats on all flights (added 2026-12-01)\n", line: 6},
		{name: "empty file, heading missing", data: "", heading: "Travel", item: note,
			want: "## Travel\n- Aisle seats on all flights (added 2026-12-01)\n", line: 2},
		{name: "heading missing after blank line", data: "- one\n\n", heading: "Travel", item: note,
			want: "- one\n\n## Travel\n- Aisle seats on all flights (added 2026-12-01)\n", line: 4},
		{name: "heading present, middle of file", heading: "Travel", item: note,
			data: "# pam\n\n## Travel\n- window seat  \n\n## Work\n- x\n",
			want: "# pam\n\n## Travel\n- window seat  \n- Aisle seats on all flights (added 2026-12-01)\n\n## Work\n- x\n", line: 5},
		{name: "heading present with subsections", heading: "travel", item: note,
			data: "## Travel\n- a\n### Trains\n- b\n\n## Work\n",
			want: "## Travel\n- a\n### Trains\n- b\n- Aisle seats on all flights (added 2026-12-01)\n\n## Work\n", line: 5},
		{name: "heading present, empty section", heading: "## Travel", item: note,
			data: "## Travel\n\n## Work\n- x\n",
			want: "## Travel\n- Aisle seats on all flights (added 2026-12-01)\n\n## Work\n- x\n", line: 2},
		{name: "heading last, no final newline", heading: "Travel", item: note,
			data: "## Work\n- x\n## Travel\n- a",
			want: "## Work\n- x\n## Travel\n- a\n- Aisle seats on all flights (added 2026-12-01)", line: 5},
		{name: "heading last with trailing blank lines", heading: "Travel", item: note,
			data: "## Travel\n- a\n\n\n",
			want: "## Travel\n- a\n- Aisle seats on all flights (added 2026-12-01)\n\n\n", line: 3},
		{name: "heading duplicated: the first", heading: "Travel", item: note,
			data: "## Travel\n- a\n\n## Travel\n- b\n",
			want: "## Travel\n- a\n- Aisle seats on all flights (added 2026-12-01)\n\n## Travel\n- b\n", line: 3},
		{name: "heading inside code is no heading", heading: "Travel", item: note,
			data: "```\n## Travel\n```\n",
			want: "```\n## Travel\n```\n\n## Travel\n- Aisle seats on all flights (added 2026-12-01)\n", line: 6},
		{name: "multi-line text, tags", item: Item{Text: "Deploys need two approvals.\nSee the runbook.\n\nAsk Pam.", Tags: []string{"ops", "deploy"}, Date: "2026-12-01"},
			data: "- one\n",
			want: "- one\n- Deploys need two approvals.\n  See the runbook.\n\n  Ask Pam. #ops #deploy (added 2026-12-01)\n", line: 2},
		{name: "byte order mark kept", data: "\ufeff# pam\n", item: note,
			want: "\ufeff# pam\n- Aisle seats on all flights (added 2026-12-01)\n", line: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, line, err := Append([]byte(tt.data), tt.heading, tt.item)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want || line != tt.line {
				t.Errorf("Append(%q) =\n%q line %d\nwant\n%q line %d", tt.data, got, line, tt.want, tt.line)
			}
			checkKept(t, tt.data, string(got))
			checkNoteAt(t, got, line, strings.Split(strings.TrimSpace(tt.item.Text), "\n")[0])
		})
	}
}

// checkKept checks that out is data with one run of bytes inserted.
func checkKept(t *testing.T, data, out string) {
	t.Helper()
	p := 0
	for p < len(data) && data[p] == out[p] {
		p++
	}
	s := 0
	for s < len(data)-p && data[len(data)-1-s] == out[len(out)-1-s] {
		s++
	}
	if p+s != len(data) {
		t.Errorf("bytes of the file changed: kept %d of %d before and %d after the insert", p, len(data), s)
	}
}

// checkNoteAt checks that mine sees a note starting at line with text.
func checkNoteAt(t *testing.T, data []byte, line int, text string) {
	t.Helper()
	doc, err := markdown.Parse(data, markdown.MemoryOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range doc.Notes {
		if n.Line == line {
			if !strings.HasPrefix(n.Text, text) {
				t.Errorf("note at line %d is %q, want it to start with %q", line, n.Text, text)
			}
			return
		}
	}
	t.Errorf("no note at line %d in %q", line, data)
}

func TestAppendUnsafe(t *testing.T) {
	_, _, err := Append([]byte("```\nopen fence\n"), "", Item{Text: "x", Date: "2026-12-01"})
	if !errors.Is(err, ErrUnsafeAppend) {
		t.Fatalf("append into an open code fence: %v, want ErrUnsafeAppend", err)
	}
}

func TestMarkSuperseded(t *testing.T) {
	tests := []struct {
		name, data string
		line       int
		want       string
		err        error
	}{
		{name: "plain", data: "- a\n- b\n", line: 1, want: "- a (superseded 2026-12-02)\n- b\n"},
		{name: "CRLF and trailing spaces", data: "- a  \r\n- b\r\n", line: 1, want: "- a (superseded 2026-12-02)  \r\n- b\r\n"},
		{name: "last line without newline", data: "- a\n- b", line: 2, want: "- a\n- b (superseded 2026-12-02)"},
		{name: "already", data: "- a (superseded 2026-01-01)\n", line: 1, err: ErrAlreadySuperseded},
		{name: "struck through", data: "- ~~old~~\n", line: 1, err: ErrAlreadySuperseded},
		{name: "status superseded", data: "- old status: superseded\n", line: 1, err: ErrAlreadySuperseded},
		{name: "frontmatter", data: "---\nstatus: superseded\n---\n- old\n", line: 4, err: ErrAlreadySuperseded},
		{name: "under a Superseded heading", data: "## Superseded\n- old\n", line: 2, err: ErrAlreadySuperseded},
		{name: "live note naming superseded", data: "- (superseded builds are purged)\n", line: 1, want: "- (superseded builds are purged) (superseded 2026-12-02)\n"},
		{name: "no note there", data: "# T\n\n- a\n", line: 2, err: ErrNoNote},
		{name: "past the end", data: "- a\n", line: 2, err: ErrNoNote},
		{name: "zero", data: "- a\n", line: 0, err: ErrNoNote},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MarkSuperseded([]byte(tt.data), tt.line, "2026-12-02")
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			checkKept(t, tt.data, string(got))
		})
	}
}

func TestAppendKeepsNotes(t *testing.T) {
	// A fence the note opens ends with its list item: the notes after it
	// stay notes (Append checks that every one is still there).
	data := "## A\n- a\n\n## B\n- b\n"
	out, line, err := Append([]byte(data), "A", Item{Text: "run:\n```\nmake", Date: "2026-12-01"})
	if err != nil {
		t.Fatal(err)
	}
	checkNoteAt(t, out, line, "run:")
	checkNoteAt(t, out, line+5, "b")
}
