package capture

import (
	"strings"
	"testing"
)

// TestReadWork counts the agent's tool calls and sees a remember among
// them, by memminer's MCP tool or its CLI through a shell, in both
// clients' formats; a tool's result or a user's words naming remember
// are not calls.
func TestReadWork(t *testing.T) {
	claudeCall := func(name, input string) string {
		return `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t","name":"` + name + `","input":` + input + `}]}}`
	}
	codexCall := func(ns, name, args string) string {
		return `{"type":"response_item","payload":{"type":"function_call","name":"` + name + `","namespace":"` + ns + `","arguments":"` + args + `","call_id":"c"}}`
	}
	user := `{"type":"user","message":{"role":"user","content":"please run memminer remember \"tool_use\" for me"}}`
	for _, tc := range []struct {
		client string
		lines  []string
		want   Work
	}{
		{ClaudeCode, []string{user, claudeCall("Read", `{"file_path":"a"}`), claudeCall("mcp__memminer__search", `{"query":"q"}`)}, Work{ToolCalls: 2, LastMessage: "x"}},
		{ClaudeCode, []string{claudeCall("mcp__memminer__remember", `{"text":"x"}`)}, Work{ToolCalls: 1, Remembered: true, LastMessage: "x"}},
		{ClaudeCode, []string{claudeCall("Bash", `{"command":"memminer remember --wing pam \"db-7\""}`)}, Work{ToolCalls: 1, Remembered: true, LastMessage: "x"}},
		{Codex, []string{codexCall("", "shell", "{}"), codexCall("mcp__memminer", "search", "{}"), `{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"memminer remember"}}`}, Work{ToolCalls: 2}},
		{Codex, []string{codexCall("mcp__memminer", "remember", `{\"text\":\"x\"}`)}, Work{ToolCalls: 1, Remembered: true}},
		{Codex, []string{codexCall("", "exec_command", `{\"cmd\":\"memminer remember x\"}`)}, Work{ToolCalls: 1, Remembered: true}},
	} {
		got, err := ReadWork(tc.client, strings.NewReader(strings.Join(tc.lines, "\n")))
		if err != nil || got != tc.want {
			t.Errorf("%s %q: %+v, %v; want %+v", tc.client, tc.lines, got, err, tc.want)
		}
	}
}

// TestReadWorkLastMessage reads the text of the agent's last message as
// a Stop hook's last_assistant_message gives it: the text blocks of a
// message Claude Code wrote as entries of their own, joined; a message
// without text has none.
func TestReadWorkLastMessage(t *testing.T) {
	claude := func(id, content string) string {
		return `{"type":"assistant","message":{"id":"` + id + `","role":"assistant","content":[` + content + `]}}`
	}
	codex := func(role, text string) string {
		return `{"type":"response_item","payload":{"type":"message","role":"` + role + `","content":[{"type":"output_text","text":"` + text + `"}]}}`
	}
	for _, tc := range []struct {
		client string
		lines  []string
		want   string
	}{
		{ClaudeCode, []string{claude("m1", `{"type":"text","text":"before"}`), claude("m2", `{"type":"thinking","thinking":"t"}`),
			claude("m2", `{"type":"text","text":"Done. "}`), claude("m2", `{"type":"text","text":"db-7 it is.\n"}`)}, "Done. \ndb-7 it is."},
		{ClaudeCode, []string{claude("m1", `{"type":"text","text":"before"}`), claude("m2", `{"type":"tool_use","id":"t","name":"Read","input":{}}`)}, ""},
		{Codex, []string{codex("assistant", "first"), codex("user", "thanks"), codex("assistant", "mock answer: done")}, "mock answer: done"},
	} {
		got, err := ReadWork(tc.client, strings.NewReader(strings.Join(tc.lines, "\n")))
		if err != nil || got.LastMessage != tc.want {
			t.Errorf("%s %q: last message %q, %v; want %q", tc.client, tc.lines, got.LastMessage, err, tc.want)
		}
	}
}
