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
func geminiFiles(s Scope, in Install) []file {
	start, prompt, _, _ := hookCommands("gemini", in)
	hooks := hooksEdit{ours: ourHook("gemini"), events: []hookEvent{
		{name: "SessionStart", command: start},
		{name: "BeforeAgent", command: prompt},
	}}
	settings := hooks.json()
	server, _ := json.Marshal(struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}{in.Exe, mcpArgs(in)})
	settings.sets = append(settings.sets, jsonSet{path: "mcpServers." + serverName, value: string(server), ours: ourServer})
	dir, instructions := filepath.Join(s.Home, ".gemini"), filepath.Join(s.Home, ".gemini", "GEMINI.md")
	if s.GeminiCLIHome != "" && filepath.IsAbs(s.GeminiCLIHome) {
		dir = filepath.Join(s.GeminiCLIHome, ".gemini")
		instructions = filepath.Join(dir, "GEMINI.md")
	}
	if s.Project != "" {
		dir, instructions = filepath.Join(s.Project, ".gemini"), filepath.Join(s.Project, "GEMINI.md")
	}
	return []file{
		{path: filepath.Join(dir, "settings.json"), role: RoleHooks + "+" + RoleMCP, edit: settings},
		{path: instructions, role: RoleInstructions, edit: markdownBlock(in.Protocol)},
	}
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
