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
exec bash "$(dirname "$0")/npm-install.sh" setup-mcp-client "$dir" @modelcontextprotocol/sdk "$version"
