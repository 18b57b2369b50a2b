package connect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"
)

// OpenCode reads its user configuration from $XDG_CONFIG_HOME/opencode
// (default ~/.config/opencode), merging config.json, opencode.json and
// opencode.jsonc, and a project's from DIR/opencode.json(c) and
// DIR/.opencode/. It has no command hooks; in their place it loads every
// plugins/*.js of those directories, and a plugin's
// experimental.chat.system.transform and experimental.chat.messages.transform
// hooks add text to what is sent to the model. Its instructions are
// AGENTS.md, or ~/.claude/CLAUDE.md when the user has none, plus the files
// the configuration's "instructions" list names: connect adds a file of its
// own there rather than creating AGENTS.md, which would hide the user's
// ~/.claude/CLAUDE.md from OpenCode, or sharing a project's AGENTS.md with
// Codex, which may be connected to another wing.
//
// Checked with opencode-ai 1.18.33: a plugin's tool.execute.before runs
// before every tool call with the tool's id (bash) and its arguments
// (command), so the plugin runs the pre-action hook there; a plugin cannot
// have the user confirm a call, so pre_action_block does nothing in
// OpenCode. Skills are loaded from {skill,skills}/**/SKILL.md of its
// configuration directories (and from ~/.claude/skills and
// ~/.agents/skills, a project's .claude/skills and .agents/skills).

// openCodeDir is OpenCode's user configuration directory.
func openCodeDir(s Scope) string {
	if s.ConfigHome != "" && filepath.IsAbs(s.ConfigHome) {
		return filepath.Join(s.ConfigHome, "opencode")
	}
	return filepath.Join(s.Home, ".config", "opencode")
}

// firstExisting returns the first of names in dir that exists, or dflt.
func firstExisting(dir string, names []string, dflt string) string {
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			return filepath.Join(dir, n)
		}
	}
	return filepath.Join(dir, dflt)
}

// openCodeSkills is OpenCode's skills folder: skills/ of its user
// configuration directory, a project's .opencode/skills.
func openCodeSkills(s Scope) string {
	if s.Project != "" {
		return filepath.Join(s.Project, ".opencode", "skills")
	}
	return filepath.Join(openCodeDir(s), "skills")
}

func openCodeFiles(s Scope, in Install) []file {
	var config, plugin, protocol, protocolRef string
	if s.Project != "" {
		// OpenCode's `mcp add` edits the first of these and creates
		// opencode.json.
		config = firstExisting(s.Project, []string{"opencode.json", "opencode.jsonc"}, "opencode.json")
		plugin = filepath.Join(s.Project, ".opencode", "plugins", "memminer.js")
		protocol = filepath.Join(s.Project, ".opencode", "memminer-protocol.md")
		// Relative names are looked for from the session's directory up
		// to the project's root.
		protocolRef = filepath.ToSlash(filepath.Join(".opencode", "memminer-protocol.md"))
	} else {
		dir := openCodeDir(s)
		// The order OpenCode picks the file it writes in; it creates
		// opencode.jsonc when there is none, so connect does too.
		config = firstExisting(dir, []string{"opencode.jsonc", "opencode.json", "config.json"}, "opencode.jsonc")
		plugin = filepath.Join(dir, "plugins", "memminer.js")
		protocol = filepath.Join(dir, "memminer-protocol.md")
		protocolRef = protocol
	}
	ref, _ := json.Marshal(protocolRef)
	server, _ := json.Marshal(openCodeServer{Type: "local", Command: append([]string{in.Exe}, mcpArgs(in)...), Enabled: true})
	cfg := jsonEdit{
		sets:    []jsonSet{{path: "mcp." + serverName, value: string(server), ours: ourOpenCodeServer}},
		appends: []jsonAppend{{path: "instructions", value: string(ref), ours: equalString(protocolRef)}},
	}
	return []file{
		{path: plugin, role: RoleHooks, edit: openCodePlugin(in)},
		{path: config, role: RoleMCP, edit: cfg},
		{path: protocol, role: RoleInstructions, edit: markdownBlock(in.Protocol)},
	}
}

// openCodeServer is an MCP server entry of OpenCode's configuration.
type openCodeServer struct {
	Type    string   `json:"type"`
	Command []string `json:"command"`
	Enabled bool     `json:"enabled"`
}

// ourOpenCodeServer recognises an OpenCode MCP server entry that runs
// `memminer mcp`.
func ourOpenCodeServer(r gjson.Result) bool {
	return strings.Contains(r.Get("command.0").String(), "memminer") && r.Get("command.1").String() == "mcp"
}

var jsMarkers = markers{
	begin:     "// BEGIN memminer connect",
	end:       "// END memminer connect",
	beginLine: "// BEGIN memminer connect: OpenCode plugin written by `memminer connect opencode`, removed by `memminer disconnect opencode`; edits inside are replaced",
	endLine:   "// END memminer connect",
}

// openCodePlugin is the plugin OpenCode loads in place of hooks: the wing's
// wake-up digest joins the system prompt of every session (the
// session-start hook's output), and the notes recall finds for the latest
// prompt join that prompt as a part the model sees and the session does
// not keep (the prompt hook's), and a bash command is shown to the
// pre-action hook before it runs. They run the same commands, with the
// same JSON on stdin, as the other clients' hooks. It is a marked block whose
// only top-level name is its export, so whatever else the file holds is
// the user's and stays.
func openCodePlugin(in Install) blockEdit {
	args := func(cmd string) string {
		b, _ := json.Marshal(append([]string{in.Exe, cmd, "--hook", "opencode"}, in.Flags...))
		return string(b)
	}
	body := `export const MemminerPlugin = async ({ directory }) => {
  const { spawnSync } = await import("node:child_process")
  // run runs a memminer hook with the hook's JSON on stdin; a hook never
  // fails, so anything but its output is nothing.
  const run = ([exe, ...args], input) => {
    const r = spawnSync(exe, args, { input: JSON.stringify(input), encoding: "utf8", timeout: 30000 })
    return r.status === 0 && typeof r.stdout === "string" ? r.stdout.trim() : ""
  }
  const wakeUp = ` + args("wake-up") + `
  const recall = ` + args("recall") + `
  const preAction = ` + args("pre-action") + `
  const digests = new Map()
  const notes = new Map()
  return {
    "experimental.chat.system.transform": async (input, output) => {
      if (!input.sessionID) return
      if (!digests.has(input.sessionID)) {
        digests.set(input.sessionID, run(wakeUp, { hook_event_name: "SessionStart", session_id: input.sessionID, cwd: directory }))
      }
      const digest = digests.get(input.sessionID)
      if (digest) output.system.push(digest)
    },
    "tool.execute.before": async (input, output) => {
      const command = output && output.args && output.args.command
      if (input.tool !== "bash" || typeof command !== "string") return
      run(preAction, { hook_event_name: "PreToolUse", session_id: input.sessionID, cwd: directory, tool_name: "bash", tool_input: { command } })
    },
    "experimental.chat.messages.transform": async (_input, output) => {
      const msgs = output.messages || []
      for (let i = msgs.length - 1; i >= 0; i--) {
        const m = msgs[i]
        if (!m.info || m.info.role !== "user" || !Array.isArray(m.parts)) continue
        const part = m.parts.find((p) => p.type === "text" && !p.synthetic && p.text)
        if (!part) return
        if (!notes.has(m.info.id)) {
          notes.set(m.info.id, run(recall, { hook_event_name: "UserPromptSubmit", prompt: part.text, session_id: m.info.sessionID, cwd: directory }))
        }
        const text = notes.get(m.info.id)
        if (text) m.parts.push({ ...part, id: part.id + "memminer", text, synthetic: true })
        return
      }
    },
  }
}
`
	return blockEdit{m: jsMarkers, body: body, kind: "JavaScript"}
}
