package connect

import (
	"strings"
	"testing"
)

// TestJSONEditKeepsTheFileEnd checks that setting and appending keys keeps
// what follows the top-level object (a final newline, or none), and that
// removing them again gives the file back byte for byte.
func TestJSONEditKeepsTheFileEnd(t *testing.T) {
	e := jsonEdit{
		sets:    []jsonSet{{path: "a.b", value: `"x"`, ours: equalString("x")}},
		appends: []jsonAppend{{path: "p.allow", value: `"y"`, ours: equalString("y")}},
	}
	for _, tc := range []struct{ name, in string }{
		{"newline", "{\"theme\": \"dark\"}\n"},
		{"indented", "{\n  \"theme\": \"dark\"\n}\n"},
		{"no newline", `{"theme": "dark"}`},
		{"blank lines", "{\"theme\": \"dark\"}\n\n"},
		{"CRLF", "{\"theme\": \"dark\"}\r\n"},
		{"empty object", "{}\n"},
		{"existing array", "{\"p\": {\"allow\": []}}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := e.apply([]byte(tc.in), []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			tail := tc.in[len(strings.TrimRight(tc.in, " \t\r\n")):]
			if !strings.HasSuffix(string(out), "}"+tail) {
				t.Errorf("apply(%q) = %q: the file's end %q is lost", tc.in, out, tail)
			}
			back, err := e.remove(out, []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(back) != tc.in {
				t.Errorf("remove(apply(%q)) = %q", tc.in, back)
			}
		})
	}
}
