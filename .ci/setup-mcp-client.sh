#!/usr/bin/env bash
# setup-mcp-client.sh installs the official MCP TypeScript SDK from npm
# into the user's cache (never into the repository), for the test that runs
# `memminer mcp` against a client nobody here wrote. It is idempotent: a
# second run with the package in place does nothing. Under CI=true the test
# fails without it, so scripts/test calls this script before `go test`.
#
# The directory is $MEMMINER_MCP_CLIENT_DIR, default
# ${XDG_CACHE_HOME:-$HOME/.cache}/memminer/mcp-client (where the test looks).
set -euo pipefail

version=1.32.2
dir="${MEMMINER_MCP_CLIENT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/memminer/mcp-client}"
pkg="$dir/node_modules/@modelcontextprotocol/sdk/package.json"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "setup-mcp-client: node and npm are needed (Debian: apt-get install nodejs npm)" >&2
	exit 1
fi
if [ -f "$pkg" ] && grep -q "\"version\": \"$version\"" "$pkg"; then
	echo "setup-mcp-client: @modelcontextprotocol/sdk $version already in $dir"
	exit 0
fi
mkdir -p "$dir"
echo "setup-mcp-client: installing @modelcontextprotocol/sdk $version into $dir"
# --no-save with a package.json of our own keeps npm from looking upwards
# for a project; the lock file npm writes pins what was installed.
[ -f "$dir/package.json" ] || echo '{"name":"memminer-mcp-client-test","private":true}' >"$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@modelcontextprotocol/sdk@$version"
echo "setup-mcp-client: installed @modelcontextprotocol/sdk $version"
