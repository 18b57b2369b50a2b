package connect

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// markers delimit the block connect owns in a text file: every line from
// the one starting with begin to the one starting with end. Everything
// outside the block is the user's and stays byte for byte.
type markers struct {
	begin, end string // line prefixes
	beginLine  string // the begin line connect writes
	endLine    string
}

// find returns the byte range of the block, its last line's line break
// included, or found false.
func (m markers) find(b []byte) (start, end int, found bool, err error) {
	start = -1
	off := 0
	for off < len(b) {
		next := bytes.IndexByte(b[off:], '\n')
		lineEnd := len(b)
		if next >= 0 {
			lineEnd = off + next + 1
		}
		line := strings.TrimRight(string(b[off:lineEnd]), "\r\n")
		switch {
		case strings.HasPrefix(line, m.begin):
			if start >= 0 || found {
				return 0, 0, false, fmt.Errorf("two %q lines", m.begin)
			}
			start = off
		case strings.HasPrefix(line, m.end):
			if start < 0 || found {
				return 0, 0, false, fmt.Errorf("%q without %q before it", m.end, m.begin)
			}
			end, found = lineEnd, true
		}
		off = lineEnd
	}
	if start >= 0 && !found {
		return 0, 0, false, fmt.Errorf("%q without %q after it", m.begin, m.end)
	}
	return start, end, found, nil
}

// put returns b with the block holding body: in place of the block it has,
// or appended after a blank line.
func (m markers) put(b []byte, body string) ([]byte, error) {
	block := m.beginLine + "\n" + strings.TrimSuffix(body, "\n") + "\n" + m.endLine + "\n"
	start, end, found, err := m.find(b)
	if err != nil {
		return nil, err
	}
	if found {
		return append(append(append([]byte{}, b[:start]...), block...), b[end:]...), nil
	}
	out := append([]byte{}, b...)
	switch {
	case len(out) == 0:
	case out[len(out)-1] == '\n':
		out = append(out, '\n')
	default:
		out = append(out, "\n\n"...)
	}
	return append(out, block...), nil
}

// cut returns b without the block, and without the blank line put left
// before a block at the end of the file.
func (m markers) cut(b []byte) ([]byte, error) {
	start, end, found, err := m.find(b)
	if err != nil || !found {
		return b, err
	}
	out := append(append([]byte{}, b[:start]...), b[end:]...)
	if end == len(b) && start >= 2 && string(b[start-2:start]) == "\n\n" {
		out = out[:len(out)-1]
	}
	return out, nil
}

// blockEdit is an edit of a text file by its marked block alone.
type blockEdit struct {
	m     markers
	body  string
	kind  string
	check func(b []byte) error // nil: any text
}

func (e blockEdit) format() string { return e.kind }

func (e blockEdit) apply(cur, _ []byte) ([]byte, error) {
	if e.check != nil {
		if err := e.check(cur); err != nil {
			return nil, err
		}
	}
	out, err := e.m.put(cur, e.body)
	if err != nil {
		return nil, &FormatError{Format: e.kind, Err: err}
	}
	if e.check != nil {
		if err := e.check(out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (e blockEdit) remove(cur, _ []byte) ([]byte, error) {
	out, err := e.m.cut(cur)
	if err != nil {
		return nil, &FormatError{Format: e.kind, Err: err}
	}
	return out, nil
}

func (e blockEdit) empty(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

var protocolMarkers = markers{
	begin:     "<!-- BEGIN memminer protocol",
	end:       "<!-- END memminer protocol",
	beginLine: "<!-- BEGIN memminer protocol: written by `memminer connect`, removed by `memminer disconnect`; edits inside are replaced -->",
	endLine:   "<!-- END memminer protocol -->",
}

// markdownBlock puts the protocol in an instructions file (CLAUDE.md,
// AGENTS.md) between HTML comment markers, which Markdown does not show.
func markdownBlock(protocol string) blockEdit {
	return blockEdit{m: protocolMarkers, body: protocol, kind: "Markdown"}
}

var tomlMarkers = markers{
	begin:     "# BEGIN memminer connect",
	end:       "# END memminer connect",
	beginLine: "# BEGIN memminer connect: memminer's MCP server, removed by `memminer disconnect codex`",
	endLine:   "# END memminer connect",
}

// codexMCPEdit registers memminer's MCP server in Codex's config.toml as
// the table [mcp_servers.memminer], in a marked block at the end of the
// file: TOML allows a table anywhere, and a textual block keeps every
// comment and key of the file as it is. The file is parsed before and
// after, so a file that is not TOML, or that the table would break, is
// refused.
func codexMCPEdit(in Install) blockEdit {
	server := struct {
		Command string   `toml:"command"`
		Args    []string `toml:"args"`
	}{in.Exe, mcpArgs(in)}
	kv, err := toml.Marshal(server)
	if err != nil {
		// Strings and a list of strings always marshal.
		panic(err)
	}
	body := "[mcp_servers." + serverName + "]\n" + string(kv)
	return blockEdit{m: tomlMarkers, body: body, kind: "TOML", check: func(b []byte) error {
		var doc map[string]any
		if err := toml.Unmarshal(b, &doc); err != nil {
			return &FormatError{Format: "TOML", Err: err}
		}
		if rest, err := tomlMarkers.cut(b); err == nil && !bytes.Equal(rest, b) {
			return nil // the table is ours, in our block
		}
		if servers, ok := doc["mcp_servers"].(map[string]any); ok {
			if _, taken := servers[serverName]; taken {
				return &TakenError{Key: "mcp_servers." + serverName}
			}
		}
		return nil
	}}
}
