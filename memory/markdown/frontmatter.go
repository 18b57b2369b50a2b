package markdown

import (
	"bytes"
	"fmt"
	"regexp"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/memminer/memminer/internal/bytesize"
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
		fm, tooBig, err := decodeFrontmatter(yamlText)
		if err == nil {
			return fm, after, ""
		}
		if !looksLikeYAMLKey(yamlText) {
			return nil, -1, ""
		}
		if tooBig {
			return nil, after, fmt.Sprintf("frontmatter (lines 1-%d) %v; skipped", l+1, err)
		}
		return nil, after, fmt.Sprintf("frontmatter (lines 1-%d) is not a valid YAML mapping and was skipped: %v", l+1, err)
	}
	return nil, -1, ""
}

// MaxFrontmatterBytes and MaxFrontmatterKeys bound a frontmatter block:
// decoding a mapping costs yaml.v3 time quadratic in its keys (80k keys
// took 38 s), and nothing in a memory file's frontmatter needs more.
const (
	MaxFrontmatterBytes = 64 << 10
	MaxFrontmatterKeys  = 1000
)

// decodeFrontmatter decodes a frontmatter block into a mapping, refusing
// (tooBig) one larger than MaxFrontmatterBytes or with more than
// MaxFrontmatterKeys keys, counted over all nested mappings before any is
// decoded.
func decodeFrontmatter(text []byte) (fm map[string]any, tooBig bool, err error) {
	if len(text) > MaxFrontmatterBytes {
		return nil, true, fmt.Errorf("is %s, more than the %s limit", bytesize.Format(int64(len(text))), bytesize.Format(MaxFrontmatterBytes))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, false, err
	}
	if doc.Kind == 0 {
		return nil, false, nil // empty or only comments
	}
	if n := countKeys(&doc, MaxFrontmatterKeys+1); n > MaxFrontmatterKeys {
		return nil, true, fmt.Errorf("has more than %d keys", MaxFrontmatterKeys)
	}
	if err := doc.Decode(&fm); err != nil {
		return nil, false, err
	}
	return fm, false, nil
}

// countKeys counts the keys of every mapping below n, stopping once it
// reaches limit. Aliases are not followed: they add no keys to count,
// and yaml.v3 bounds their expansion itself.
func countKeys(n *yaml.Node, limit int) int {
	count := 0
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if count >= limit {
			return
		}
		if n.Kind == yaml.MappingNode {
			count += len(n.Content) / 2
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return count
}

// yamlKey matches a line that opens a YAML mapping: a plain or quoted key
// followed by a colon and a space or the end of the line.
var yamlKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:[A-Za-z0-9_][^:#]*|"[^"]*"|'[^']*')[ \t]*:(?:[ \t]|$)`)
})

// looksLikeYAMLKey reports whether the first line of text that is not blank
// or a comment opens a YAML mapping.
func looksLikeYAMLKey(text []byte) bool {
	for line := range bytes.Lines(text) {
		line = bytes.TrimRight(line, " \t\r\n")
		if len(bytes.TrimSpace(line)) == 0 || bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			continue
		}
		return yamlKey().Match(line)
	}
	return false
}

// isDelimiter reports whether a line is a frontmatter delimiter: "---", or
// "..." when closing, with optional trailing whitespace.
func isDelimiter(line []byte, closing bool) bool {
	line = bytes.TrimRight(line, " \t\r")
	return string(line) == "---" || closing && string(line) == "..."
}

// FrontmatterScalars returns the scalar values of frontmatter as text, as
// the palace keeps them (palace.Source.Frontmatter); lists and mappings are
// left out.
func FrontmatterScalars(fm map[string]any) map[string]string {
	if len(fm) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range fm {
		switch x := v.(type) {
		case string:
			out[k] = x
		case bool, int, int64, uint64, float64:
			out[k] = fmt.Sprint(x)
		case time.Time:
			out[k] = x.Format(time.RFC3339)
		}
	}
	return out
}
