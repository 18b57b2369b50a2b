#!/usr/bin/env bash
# setup-agent-clients.sh installs the real agent CLIs the `memminer connect`
# end-to-end tests drive, Claude Code, Codex, OpenCode and Gemini CLI, pinned, from the
# npm registry into the user's cache (never into the repository). It is
# idempotent: a second run with every package in place does nothing. Under
# CI=true those tests fail without them, so scripts/test calls this script
# before `go test`. All together are about 1 GB; each client's native
# binary comes inside a registry package (an optional dependency), so
# nothing is downloaded from anywhere else.
#
# The directory is $MEMMINER_AGENT_CLIENTS_DIR, default
# ${XDG_CACHE_HOME:-$HOME/.cache}/memminer/agent-clients (where the tests look).
set -euo pipefail

claude_version=2.1.197
codex_version=0.171.0
opencode_version=1.18.33
gemini_version=0.61.0
dir="${MEMMINER_AGENT_CLIENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/memminer/agent-clients}"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "setup-agent-clients: node and npm are needed (Debian: apt-get install nodejs npm)" >&2
	exit 1
fi

installed() { # installed PACKAGE VERSION
	local pkg="$dir/node_modules/$1/package.json"
	[ -f "$pkg" ] && grep -q "\"version\": \"$2\"" "$pkg"
}

versions="claude-code $claude_version, codex $codex_version, opencode $opencode_version and gemini-cli $gemini_version"
if installed @anthropic-ai/claude-code "$claude_version" && installed @openai/codex "$codex_version" &&
	installed opencode-ai "$opencode_version" && installed @google/gemini-cli "$gemini_version" &&
	[ -x "$dir/node_modules/.bin/claude" ] && [ -x "$dir/node_modules/.bin/codex" ] &&
	[ -x "$dir/node_modules/.bin/opencode" ] && [ -x "$dir/node_modules/.bin/gemini" ]; then
	echo "setup-agent-clients: $versions already in $dir"
	exit 0
fi
mkdir -p "$dir"
echo "setup-agent-clients: installing $versions into $dir"
# A package.json of our own keeps npm from looking upwards for a project;
# the lock file npm writes pins what was installed.
[ -f "$dir/package.json" ] || echo '{"name":"memminer-agent-clients-test","private":true}' >"$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error \
	"@anthropic-ai/claude-code@$claude_version" "@openai/codex@$codex_version" "opencode-ai@$opencode_version" \
	"@google/gemini-cli@$gemini_version"
echo "setup-agent-clients: installed $versions"
