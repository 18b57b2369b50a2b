package markdown

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/memminer/memminer/memory/markdown/markdowntest"
)

// sectionCases are bodies whose headings after a blank line are, or look
// like, places to end a section: fences and HTML blocks running past
// them, lists and quotes before them, line endings and markers around.
var sectionCases = map[string]string{
	"fence holds headings":        "# A\n\n```sh\n# not a heading\n\n# still code\n```\n\n# B\n- x\n",
	"tilde fence":                 "~~~\n# a\n\n# b\n~~~~\n\n# c\n- y\n",
	"unclosed fence":              "para\n\n```\nunclosed\n\n# H\n\n# H2\n",
	"only an unclosed fence":      "```\n\n# x\n\n# y\n",
	"empty fence":                 "```\n```\n\n# after\n- x\n",
	"fence after a paragraph":     "Build with:\n```\nmake\n\n# target\n```\n\n# Next\nmore\n",
	"pre holds headings":          "# A\n\n<pre>\n\n# in pre\n\n</pre>\n\n# B\ntext\n",
	"comment holds headings":      "<!--\n\n# in comment\n\n-->\n\n# B\n- y\n",
	"script runs on":              "<script>\nx\n\n# y\n</script>\n\n# z\n- q\n",
	"div ends at blank":           "<div>\nhtml\n\n# H\n- a\n",
	"fence in a list item":        "- item\n\n  ```\n  code\n\n# H\n- z\n",
	"fence in a quote":            "> quote\n> ```\n\n# H\npara\n",
	"loose list then heading":     "- a\n- b\n\n# H\n- c\n\n- d\n",
	"ordered list across heading": "1. one\n\n# H\n2. two\n",
	"crlf":                        "# A\r\n\r\n- a\r\n\r\n# B\r\n- b\r\n",
	"frontmatter and bom":         "\xEF\xBB\xBF---\ntitle: x\n---\n\n# A\n- a\n\n# B\n- b\n",
	"bom then blank":              "\xEF\xBB\xBF\n# A\n- a\n",
	"setext and indented code":    "Setext\n===\n\n# A\n    indented code\n\n# B\n",
	"not headings":                "#5 not heading\n\n#\n\n####### seven\n\n# real\n- r\n",
	"link reference":              "[ref]: /url\n\n# H\n[ref]\n",
	"tab after marker":            "#\tTab heading\n\n- a\n\n#\tNext\n- b\n",
	"heading in an item":          "- a\n  # nested heading\n\n# top\n- t\n",
	"heading in a quote":          "> # q\n\n# top\n",
	"indented heading":            "para\n\n   # three spaces\n\n# H\n",
	"blank line of spaces":        "- a\n   \t\n# H\n- b\n",
	"table before heading":        "| a | b |\n|---|---|\n| 1 | 2 |\n\n# H\n| c |\n|---|\n",
	"no final newline":            "- a\n\n# H",
}

// Parsing in sections gives what parsing the whole body at once gives,
// with a section ending at every heading where one may.
func TestParseSectionsAsWhole(t *testing.T) {
	inputs := map[string][]byte{}
	for name, body := range sectionCases {
		inputs[name] = []byte(body)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "parse", "*.md"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = data
	}
	inputs["benchMemory"] = markdowntest.Memory(3000)
	for name, src := range inputs {
		for _, maxRunes := range []int{0, 40} {
			whole, err := parse(src, ParseOptions{MaxNoteRunes: maxRunes}, len(src)+1)
			if err != nil {
				t.Fatal(err)
			}
			sections, err := parse(src, ParseOptions{MaxNoteRunes: maxRunes}, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(whole, sections) {
				t.Errorf("%s (max %d): in sections\n%+v\nwhole\n%+v", name, maxRunes, sections, whole)
			}
		}
	}
}

// The sections end where they may and nowhere else.
func TestSectionEnd(t *testing.T) {
	tests := []struct {
		src  string
		want []int // section starts after the first
	}{
		{"# A\n- a\n\n# B\n- b\n\n## C\n", []int{9, 18}},
		{"# A\n- a\n# B\n", nil},                 // no blank line before
		{"- a\n\n #B\n\n#B\n\n####### C\n", nil}, // not at column 0, no space, seven
		{"- a\n \t\r\n#\tB\n", []int{8}},
		{"- a\n\n#\n", []int{5}},
	}
	for _, tt := range tests {
		var got []int
		for at := 0; ; {
			at = sectionEnd([]byte(tt.src), at, 1)
			if at == len(tt.src) {
				break
			}
			got = append(got, at)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("sections of %q start at %v, want %v", tt.src, got, tt.want)
		}
		for _, at := range got {
			if !strings.HasPrefix(tt.src[at:], "#") {
				t.Errorf("%q: section at %d does not start with a heading", tt.src, at)
			}
		}
	}
}
