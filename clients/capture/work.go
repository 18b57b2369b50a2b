package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Work is what the agent did in a session, as its transcript records it:
// what the Stop hook weighs before it asks the agent to record what it
// learned (docs/capture.md, "What the agent learned").
type Work struct {
	// ToolCalls counts the agent's tool calls.
	ToolCalls int `json:"tool_calls"`
	// Remembered says the agent already wrote to memory: it called
	// memminer's remember tool, or ran memminer remember.
	Remembered bool `json:"remembered"`
	// LastMessage is the text of the agent's last message the transcript
	// holds, its text blocks joined by newlines and trimmed, as a Stop
	// hook's last_assistant_message gives it: the hook knows the
	// transcript holds the whole turn when they are equal.
	LastMessage string `json:"last_message,omitempty"`
}

// ReadWork reads the agent's tool calls from the transcript of client
// (ClaudeCode or Codex).
func ReadWork(client string, r io.Reader) (Work, error) {
	var calls func(line []byte) (n int, remembered bool)
	var message func(line []byte) (id, text string, ok bool)
	switch client {
	case ClaudeCode:
		calls, message = claudeToolUses, claudeMessage
	case Codex:
		calls, message = codexFunctionCall, codexMessage
	default:
		return Work{}, fmt.Errorf("%w: %q (want %s or %s)", ErrUnknownClient, client, ClaudeCode, Codex)
	}
	var w Work
	// Claude Code writes a message's content blocks as entries of their
	// own, with the message's id: the text of the last message is that
	// of its entries.
	var lastID string
	var last []string
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 {
			n, remembered := calls(line)
			w.ToolCalls += n
			w.Remembered = w.Remembered || remembered
			if id, text, ok := message(line); ok {
				if id == "" || id != lastID {
					last = last[:0]
				}
				lastID = id
				if text != "" {
					last = append(last, text)
				}
			}
		}
		if err == io.EOF {
			w.LastMessage = strings.TrimSpace(strings.Join(last, "\n"))
			return w, nil
		}
		if err != nil {
			return w, err
		}
	}
}

// remembers reports whether a tool call writes to memminer's memory: its
// MCP tool, or the CLI run through a shell.
func remembers(name, input string) bool {
	return name == "mcp__memminer__remember" || strings.Contains(input, "memminer remember")
}

// claudeToolUses are the tool calls of a Claude Code transcript line:
// the tool_use blocks of an assistant entry.
func claudeToolUses(line []byte) (n int, remembered bool) {
	if !bytes.Contains(line, []byte(`"tool_use"`)) {
		return 0, false
	}
	var e struct {
		Type    string `json:"type"`
		Message struct {
			Content []struct {
				Type  string          `json:"type"`
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &e) != nil || e.Type != "assistant" {
		return 0, false
	}
	for _, c := range e.Message.Content {
		if c.Type == "tool_use" {
			n++
			remembered = remembered || remembers(c.Name, string(c.Input))
		}
	}
	return n, remembered
}

// codexFunctionCall is the tool call of a Codex rollout line: a
// function_call response item, its name qualified by its namespace as
// the model sees it (mcp__memminer__remember).
func codexFunctionCall(line []byte) (n int, remembered bool) {
	if !bytes.Contains(line, []byte(`"function_call"`)) && !bytes.Contains(line, []byte(`"custom_tool_call"`)) {
		return 0, false
	}
	var e struct {
		Type    string `json:"type"`
		Payload struct {
			Type      string `json:"type"`
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
			Arguments string `json:"arguments"`
			Input     string `json:"input"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &e) != nil || e.Type != "response_item" || (e.Payload.Type != "function_call" && e.Payload.Type != "custom_tool_call") {
		return 0, false
	}
	name := e.Payload.Name
	if e.Payload.Namespace != "" {
		name = e.Payload.Namespace + "__" + name
	}
	return 1, remembers(name, e.Payload.Arguments+e.Payload.Input)
}

// claudeMessage is the id and text of a Claude Code transcript line that
// is an assistant entry: its text blocks joined by newlines.
func claudeMessage(line []byte) (id, text string, ok bool) {
	if !bytes.Contains(line, []byte(`"assistant"`)) {
		return "", "", false
	}
	var e struct {
		Type    string `json:"type"`
		Message struct {
			ID      string `json:"id"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &e) != nil || e.Type != "assistant" {
		return "", "", false
	}
	var texts []string
	for _, c := range e.Message.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	return e.Message.ID, strings.Join(texts, "\n"), true
}

// codexMessage is the text of a Codex rollout line that is the
// assistant's message: its output_text blocks joined by newlines.
func codexMessage(line []byte) (id, text string, ok bool) {
	if !bytes.Contains(line, []byte(`"assistant"`)) {
		return "", "", false
	}
	var e struct {
		Type    string `json:"type"`
		Payload struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &e) != nil || e.Type != "response_item" || e.Payload.Type != "message" || e.Payload.Role != "assistant" {
		return "", "", false
	}
	var texts []string
	for _, c := range e.Payload.Content {
		if c.Type == "output_text" {
			texts = append(texts, c.Text)
		}
	}
	return "", strings.Join(texts, "\n"), true
}
