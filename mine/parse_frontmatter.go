package mine

import (
	"bytes"
	"fmt"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// parseFrontmatter looks for YAML frontmatter whose opening "---" line starts
// at byte from (after any byte order mark). It returns the decoded mapping
// and the byte offset where the markdown body starts, or after = -1 when the
// file has no frontmatter. A delimited block that is not a YAML mapping is
// skipped with a warning when its first line looks like a YAML key, and
// otherwise taken for markdown that starts with a thematic break.
func parseFrontmatter(src []byte, from int, lines lineIndex) (fm map[string]any, after int, warning string) {
	if from >= len(src) || lines.lineOf(from) != 0 || !isDelimiter(lines.line(src, 0)[from:], false) {
		return nil, -1, ""
	}
	for l := 1; l < lines.count(); l++ {
		if !isDelimiter(lines.line(src, l), true) {
			continue
		}
		yamlText := src[lines.start(1):lines.start(l)]
		after = len(src)
		if l+1 < lines.count() {
			after = lines.start(l + 1)
		}
		err := yaml.Unmarshal(yamlText, &fm)
		if err == nil {
			return fm, after, ""
		}
		if !looksLikeYAMLKey(yamlText) {
			return nil, -1, ""
		}
		return nil, after, fmt.Sprintf("frontmatter (lines 1-%d) is not a valid YAML mapping and was skipped: %v", l+1, err)
	}
	return nil, -1, ""
}

// yamlKey matches a line that opens a YAML mapping: a plain or quoted key
// followed by a colon and a space or the end of the line.
var yamlKey = regexp.MustCompile(`^(?:[A-Za-z0-9_][^:#]*|"[^"]*"|'[^']*')[ \t]*:(?:[ \t]|$)`)

// looksLikeYAMLKey reports whether the first line of text that is not blank
// or a comment opens a YAML mapping.
func looksLikeYAMLKey(text []byte) bool {
	for line := range bytes.Lines(text) {
		line = bytes.TrimRight(line, " \t\r\n")
		if len(bytes.TrimSpace(line)) == 0 || bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			continue
		}
		return yamlKey.Match(line)
	}
	return false
}

// isDelimiter reports whether a line is a frontmatter delimiter: "---", or
// "..." when closing, with optional trailing whitespace.
func isDelimiter(line []byte, closing bool) bool {
	line = bytes.TrimRight(line, " \t\r")
	return string(line) == "---" || closing && string(line) == "..."
}
