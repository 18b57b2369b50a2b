package connect

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// Gemini CLI (checked with @google/gemini-cli 0.61.0) keeps hooks and MCP
// servers in one settings.json: ~/.gemini/ ($GEMINI_CLI_HOME/.gemini when
// that is set), or a trusted project's DIR/.gemini/. Its hooks have Claude
// Code's shape; the prompt event is BeforeAgent. It reads a hook's stdout
// as JSON, and plain text only as a message shown to the user, so its
// hooks print hookSpecificOutput.additionalContext (Agent.ContextJSON).
// Its instructions are GEMINI.md beside settings.json, or the project's.
// Its BeforeTool event runs before every tool call, with Claude Code's
// input (tool_name run_shell_command, tool_input.command): the pre-action
// hook.
func geminiFiles(s Scope, in Install) []file {
	start, prompt, _, preAction := hookCommands("gemini", in)
	hooks := hooksEdit{ours: ourHook("gemini"), events: []hookEvent{
		{name: "SessionStart", command: start},
		{name: "BeforeAgent", command: prompt},
		{name: "BeforeTool", command: preAction},
	}}
	settings := hooks.json()
	server, _ := json.Marshal(struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{in.Exe, mcpArgs(in)})
	settings.sets = append(settings.sets, jsonSet{path: "mcpServers." + serverName, value: string(server), ours: ourServer})
	dir := geminiDir(s)
	instructions := filepath.Join(dir, "GEMINI.md")
	if s.Project != "" {
		instructions = filepath.Join(s.Project, "GEMINI.md")
	}
	return []file{
		{path: filepath.Join(dir, "settings.json"), role: RoleHooks + "+" + RoleMCP, edit: settings},
		{path: instructions, role: RoleInstructions, edit: markdownBlock(in.Protocol)},
	}
}

// geminiDir is Gemini CLI's directory of settings in scope s: ~/.gemini
// ($GEMINI_CLI_HOME/.gemini), a project's .gemini.
func geminiDir(s Scope) string {
	switch {
	case s.Project != "":
		return filepath.Join(s.Project, ".gemini")
	case s.GeminiCLIHome != "" && filepath.IsAbs(s.GeminiCLIHome):
		return filepath.Join(s.GeminiCLIHome, ".gemini")
	}
	return filepath.Join(s.Home, ".gemini")
}

// geminiSkills is Gemini CLI's skills folder: skills/ of its settings
// directory (0.61.0 also reads ~/.agents/skills and a project's
// .agents/skills, which Codex's project skills use).
func geminiSkills(s Scope) string { return filepath.Join(geminiDir(s), "skills") }

// geminiAsk is what Gemini CLI's BeforeTool hook prints to have the user
// confirm the call: 0.61.0 reads a top-level decision "ask" (and shows
// systemMessage), not Claude Code's permissionDecision.
func geminiAsk(reason string) any {
	return map[string]any{"decision": "ask", "reason": reason, "systemMessage": reason}
}

// geminiPrompt is the user's prompt in Gemini CLI's BeforeAgent hook
// input: the client puts the context its SessionStart hooks gave in front
// of the first prompt, as <hook_context>…</hook_context> blocks.
func geminiPrompt(p string) string {
	for {
		rest, ok := strings.CutPrefix(strings.TrimLeft(p, " \t\r\n"), "<hook_context>")
		if !ok {
			return p
		}
		_, after, found := strings.Cut(rest, "</hook_context>")
		if !found {
			return p
		}
		p = after
	}
}
