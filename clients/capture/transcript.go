// Package capture finds the durable directives a user stated in an agent
// session — "remember that …", "from now on …", "always/never …", "we
// decided …", a correction that states a rule — in the session's
// transcript as the agent client wrote it (Claude Code's JSONL, Codex's
// rollout JSONL), and says how risky each is. It decides nothing about
// where a directive goes or how it is written: the caller hands each to
// remember's one write path, whose inbox routing, duplicate rule and
// secrets guard apply. The rules are in docs/capture.md.
package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Clients whose transcripts Read understands: the ids memminer connect
// gives them.
const (
	ClaudeCode = "claude-code"
	Codex      = "codex"
)

// Clients are the clients whose transcripts Read understands.
var Clients = []string{ClaudeCode, Codex}

// ErrUnknownClient means Read was given a client whose transcript format
// it does not know.
var ErrUnknownClient = errors.New("unknown transcript format")

// MaxLineBytes bounds one line of a transcript Read parses: a longer line
// is a tool's output or a pasted file, never a typed directive, and is
// skipped unread.
const MaxLineBytes = 1 << 20

// Read returns the messages the user typed in a session, in order, from
// the transcript of client (ClaudeCode or Codex). Everything else the
// transcript holds — the agent's messages, tool calls and their output,
// hook output, instructions files, slash-command records — is left out.
// Lines that are not JSON are skipped: a client may be writing the file
// while it is read.
func Read(client string, r io.Reader) ([]string, error) {
	var user func(line []byte) (string, bool)
	switch client {
	case ClaudeCode:
		user = claudeUser
	case Codex:
		user = codexUser
	default:
		return nil, fmt.Errorf("%w: %q (want %s or %s)", ErrUnknownClient, client, ClaudeCode, Codex)
	}
	var out []string
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			if text, ok := user(line); ok && !injected(text) {
				out = append(out, text)
			}
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// readLine returns the next line of br, or nil for a line over
// MaxLineBytes, which it reads past.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > MaxLineBytes {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			return nil, err
		}
		return bytes.TrimSpace(buf), err
	}
}

// claudeUser is the text of a Claude Code transcript line the user typed:
// an entry of type "user" that is not the client's own (isMeta), not a
// subagent's (isSidechain) and not a tool's result.
func claudeUser(line []byte) (string, bool) {
	// A tool's result is the bulk of a transcript: skip it unparsed (in a
	// typed text the quotes would be escaped).
	if !bytes.Contains(line, []byte(`"user"`)) || bytes.Contains(line, []byte(`"type":"tool_result"`)) {
		return "", false
	}
	var e struct {
		Type        string `json:"type"`
		IsMeta      bool   `json:"isMeta"`
		IsSidechain bool   `json:"isSidechain"`
		Message     struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &e) != nil || e.Type != "user" || e.IsMeta || e.IsSidechain || e.Message.Role != "user" {
		return "", false
	}
	var s string
	if json.Unmarshal(e.Message.Content, &s) == nil {
		return s, s != ""
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(e.Message.Content, &blocks) != nil {
		return "", false
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return "", false
		}
		if b.Type == "text" && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n"), len(parts) > 0
}

// codexUser is the text of a Codex rollout line the user typed: the
// UserMessage item Codex records once per message (0.171), or the
// user_message event of older versions. Codex's own user-role items
// (environment context, AGENTS.md) are neither.
func codexUser(line []byte) (string, bool) {
	if !bytes.Contains(line, []byte(`"UserMessage"`)) && !bytes.Contains(line, []byte(`"user_message"`)) {
		return "", false
	}
	var e struct {
		Type    string `json:"type"`
		Payload struct {
			Type    string `json:"type"`
			Message string `json:"message"`
			Item    struct {
				Type    string `json:"type"`
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"item"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &e) != nil || e.Type != "event_msg" {
		return "", false
	}
	switch {
	case e.Payload.Type == "user_message":
		return e.Payload.Message, e.Payload.Message != ""
	case e.Payload.Type == "item_completed" && e.Payload.Item.Type == "UserMessage":
		var parts []string
		for _, c := range e.Payload.Item.Content {
			if c.Type == "text" && c.Text != "" {
				parts = append(parts, c.Text)
			}
		}
		return strings.Join(parts, "\n"), len(parts) > 0
	}
	return "", false
}

// injected reports whether a user-role text is the client's rather than
// typed: a slash command's record, a command's output, a system reminder
// or environment block, all of which begin with a tag.
func injected(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, "<") && !strings.HasPrefix(t, "<<")
}
