// Package connect wires memminer into an agent client's own files: a
// session-start hook (wake-up), a prompt hook (recall), the MCP server and
// the memory protocol in the agent's instructions file. It edits each file
// so that everything else in it stays as it was (other keys, their order,
// comments), keeps a backup of each file it changed until Disconnect, and
// Disconnect restores each file byte for byte apart from what Connect
// added. The agents it knows are the table in this file; the rules are in
// docs/connect.md.
package connect

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Scope says whose files an agent's configuration is in: the user's
// (Project empty) or one project's.
type Scope struct {
	// Home is the user's home directory.
	Home string
	// ClaudeConfigDir is $CLAUDE_CONFIG_DIR, where Claude Code keeps its
	// user files instead of ~/.claude and ~/.claude.json when it is set.
	ClaudeConfigDir string
	// CodexHome is $CODEX_HOME, default ~/.codex.
	CodexHome string
	// GeminiCLIHome is $GEMINI_CLI_HOME, which Gemini CLI uses in place
	// of the home directory.
	GeminiCLIHome string
	// ConfigHome is $XDG_CONFIG_HOME, where OpenCode keeps its user
	// files (opencode/), default ~/.config.
	ConfigHome string
	// Project, when set, is the project directory whose files are edited
	// instead of the user's.
	Project string
}

// Name is the scope as status and the JSON show it: "user" or the
// project directory.
func (s Scope) Name() string {
	if s.Project != "" {
		return s.Project
	}
	return "user"
}

// Install is what Connect installs: the memminer program and the flags
// every command it installs carries.
type Install struct {
	// Exe is the memminer program, an absolute path.
	Exe string
	// Flags are the settings the installed commands are given: --wing ID,
	// and --hive, --palace, --model when the user chose them.
	Flags []string
	// Protocol is the memory protocol, put in the instructions file.
	Protocol string
	// MemoryDir is the folder of the hive where the client is to keep
	// the memory it writes itself (Agent.OwnMemory): its agent
	// directory's hive.ClientMemoryDirName for this machine. Empty, the
	// client's memory stays where it is.
	MemoryDir string
	// hive is Options.Hive, where a memory folder connect set for another
	// wing or machine is recognised (ourMemoryDir).
	hive string
}

// Roles of the files an agent's connection touches.
const (
	RoleHooks        = "hooks"
	RoleMCP          = "mcp"
	RoleInstructions = "instructions"
)

// file is one file of an agent's connection and how it is edited.
type file struct {
	path string
	role string
	edit edit
}

// Agent is one agent client memminer connects to.
type Agent struct {
	// ID is the name `memminer connect ID` takes.
	ID string
	// Name is the client's name, for messages.
	Name string
	// ContextJSON says the client reads a hook's stdout as JSON only:
	// the hooks print their text as hookSpecificOutput.additionalContext.
	ContextJSON bool
	// Prompt, when set, takes the user's prompt out of the prompt the
	// client's hook input carries.
	Prompt func(string) string
	// files lists the files connecting touches in scope s.
	files func(s Scope, in Install) []file
	// Note is what the user must do for the installed hooks to run, said
	// when connecting; empty when nothing.
	Note string
	// skills is the folder of skills the client loads in scope s; nil
	// when it loads none.
	skills func(s Scope) string
	// Ask, when set, is what the client's pre-tool hook prints to have
	// the user confirm the tool call, reason saying why; nil is Claude
	// Code's (and Codex's) permissionDecision "ask" (AskJSON).
	Ask func(reason string) any
	// memory is the memory the client keeps of its own, brought into
	// the hive; nil when it keeps none.
	memory *ownMemory
}

// AskJSON is what agent a's pre-tool hook prints to have the user confirm
// the tool call, reason saying why.
func (a Agent) AskJSON(reason string) any {
	if a.Ask != nil {
		return a.Ask(reason)
	}
	return map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName":            "PreToolUse",
		"permissionDecision":       "ask",
		"permissionDecisionReason": reason,
	}}
}

// OwnMemory reports whether connecting the client in scope s brings the
// memory it keeps of its own into the hive (Install.MemoryDir): Claude
// Code's auto memory, in the user's scope.
func (a Agent) OwnMemory(s Scope) bool { return a.memory != nil && s.Project == "" }

// SkillsDir is the folder of skills (one folder with a SKILL.md each) the
// client loads in scope s, where connect installs the hive's published
// skills; "" when the client loads none.
func (a Agent) SkillsDir(s Scope) string {
	if a.skills == nil {
		return ""
	}
	return a.skills(s)
}

// Agents are the agent clients memminer connects to. A third is an entry
// here: its files and the edit each needs.
var Agents = []Agent{
	{ID: "claude-code", Name: "Claude Code", files: claudeFiles, skills: claudeSkills, memory: claudeMemory},
	{ID: "codex", Name: "Codex", files: codexFiles, skills: codexSkills, Note: "Codex runs the hooks only when started with --dangerously-bypass-hook-trust (it skips untrusted hooks silently); the MCP server runs either way"},
	{ID: "opencode", Name: "OpenCode", files: openCodeFiles, skills: openCodeSkills},
	{ID: "gemini", Name: "Gemini CLI", files: geminiFiles, ContextJSON: true, Prompt: geminiPrompt, skills: geminiSkills, Ask: geminiAsk},
}

// AgentIDs lists the ids of Agents, for messages.
func AgentIDs() []string {
	ids := make([]string, len(Agents))
	for i, a := range Agents {
		ids[i] = a.ID
	}
	return ids
}

// Lookup returns the agent with id.
func Lookup(id string) (Agent, bool) {
	i := slices.IndexFunc(Agents, func(a Agent) bool { return a.ID == id })
	if i < 0 {
		return Agent{}, false
	}
	return Agents[i], true
}

// serverName is the name memminer's MCP server is registered under; the
// clients offer its tools to the model as mcp__memminer__TOOL.
const serverName = "memminer"

// claudeSessionEndTimeout is the capture hook's timeout in Claude Code,
// in seconds: its SessionEnd hooks are stopped after 1.5 s unless a hook
// asks for more (2.1.197), less than a capture that writes several notes
// through a cold palace takes. It is above the hook's own limit
// (hookTimeout in the CLI, 20 s).
const claudeSessionEndTimeout = 30

// clientHooks are agent id's session-start, prompt and capture hooks, in
// the hooks shape both clients read; captureTimeout is the capture
// hook's timeout in seconds (0: the client's default). Capture runs when
// a session ends and before its context is compacted, and at the end of
// a turn (Stop) asks the agent to record what it learned (both clients
// name these events alike, and Codex 0.171 runs them as Claude Code
// does, a Stop hook's block included).
func clientHooks(id string, in Install, captureTimeout int) hooksEdit {
	start, prompt, capture, preAction := hookCommands(id, in)
	return hooksEdit{
		ours: ourHook(id),
		events: []hookEvent{
			{name: "SessionStart", command: start},
			{name: "UserPromptSubmit", command: prompt},
			{name: "PreCompact", command: capture, timeout: captureTimeout},
			{name: "SessionEnd", command: capture, timeout: captureTimeout},
			{name: "Stop", command: capture},
			{name: "PreToolUse", command: preAction},
		},
	}
}

// hookCommands are the shell commands of the session-start, the prompt,
// the capture and the pre-action hook for agent id.
func hookCommands(id string, in Install) (sessionStart, prompt, capture, preAction string) {
	return shellJoin(append([]string{in.Exe, "wake-up", "--hook", id}, in.Flags...)),
		shellJoin(append([]string{in.Exe, "recall", "--hook", id}, in.Flags...)),
		shellJoin(append([]string{in.Exe, "capture", "--hook", id}, in.Flags...)),
		shellJoin(append([]string{in.Exe, "pre-action", "--hook", id}, in.Flags...))
}

// mcpArgs are the arguments of the MCP server's command.
func mcpArgs(in Install) []string { return append([]string{"mcp"}, in.Flags...) }

// ourHook recognises a hook command connect installed for agent id, under
// any wing or program path.
func ourHook(id string) *regexp.Regexp {
	return regexp.MustCompile(`memminer\S*'? (wake-up|recall|capture|pre-action) --hook ` + regexp.QuoteMeta(id) + `( |$)`)
}

func claudeFiles(s Scope, in Install) []file {
	hooks := clientHooks("claude-code", in, claudeSessionEndTimeout)
	server := stdioServer{Type: "stdio", Command: in.Exe, Args: mcpArgs(in), Env: map[string]string{}}
	instructions := markdownBlock(in.Protocol)
	if s.Project != "" {
		settings := hooks.json()
		// Allowing the server's tools lets `claude -p` call them; a
		// project's .mcp.json servers also need approving.
		settings.appends = append(settings.appends,
			jsonAppend{path: "permissions.allow", value: `"mcp__` + serverName + `"`, ours: equalString("mcp__" + serverName)},
			jsonAppend{path: "enabledMcpjsonServers", value: `"` + serverName + `"`, ours: equalString(serverName)})
		return []file{
			{path: filepath.Join(s.Project, ".claude", "settings.json"), role: RoleHooks, edit: settings},
			{path: filepath.Join(s.Project, ".mcp.json"), role: RoleMCP, edit: mcpServersEdit(server)},
			{path: filepath.Join(s.Project, "CLAUDE.md"), role: RoleInstructions, edit: instructions},
		}
	}
	dir, state := filepath.Join(s.Home, ".claude"), filepath.Join(s.Home, ".claude.json")
	if s.ClaudeConfigDir != "" {
		dir, state = s.ClaudeConfigDir, filepath.Join(s.ClaudeConfigDir, ".claude.json")
	}
	settings := hooks.json()
	settings.appends = append(settings.appends,
		jsonAppend{path: "permissions.allow", value: `"mcp__` + serverName + `"`, ours: equalString("mcp__" + serverName)})
	settings.sets = append(settings.sets, claudeMemory.memorySet(in))
	return []file{
		{path: filepath.Join(dir, "settings.json"), role: RoleHooks, edit: settings},
		{path: state, role: RoleMCP, edit: mcpServersEdit(server)},
		{path: filepath.Join(dir, "CLAUDE.md"), role: RoleInstructions, edit: instructions},
	}
}

// claudeSkills is Claude Code's skills folder: ~/.claude/skills (or
// $CLAUDE_CONFIG_DIR/skills), a project's .claude/skills.
func claudeSkills(s Scope) string {
	switch {
	case s.Project != "":
		return filepath.Join(s.Project, ".claude", "skills")
	case s.ClaudeConfigDir != "":
		return filepath.Join(s.ClaudeConfigDir, "skills")
	}
	return filepath.Join(s.Home, ".claude", "skills")
}

// codexSkills is Codex's skills folder: $CODEX_HOME/skills (~/.codex/skills),
// a project's .agents/skills.
func codexSkills(s Scope) string {
	switch {
	case s.Project != "":
		return filepath.Join(s.Project, ".agents", "skills")
	case s.CodexHome != "":
		return filepath.Join(s.CodexHome, "skills")
	}
	return filepath.Join(s.Home, ".codex", "skills")
}

func codexFiles(s Scope, in Install) []file {
	hooks := clientHooks("codex", in, 0)
	dir, instructions := s.CodexHome, filepath.Join(s.CodexHome, "AGENTS.md")
	if dir == "" {
		dir, instructions = filepath.Join(s.Home, ".codex"), filepath.Join(s.Home, ".codex", "AGENTS.md")
	}
	if s.Project != "" {
		dir, instructions = filepath.Join(s.Project, ".codex"), filepath.Join(s.Project, "AGENTS.md")
	}
	return []file{
		{path: filepath.Join(dir, "hooks.json"), role: RoleHooks, edit: hooks.json()},
		{path: filepath.Join(dir, "config.toml"), role: RoleMCP, edit: codexMCPEdit(in)},
		{path: instructions, role: RoleInstructions, edit: markdownBlock(in.Protocol)},
	}
}

// shellJoin quotes args for sh, as the clients run hook commands.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
