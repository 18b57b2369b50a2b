#!/usr/bin/env bash
# setup-ui-browser.sh installs what the end-to-end test of `memminer ui`
# drives: Debian's Chromium (never a browser a test tool downloads) and
# playwright-core from npm, pinned, into the user's cache (never into the
# repository). It is idempotent: a second run with both in place does
# nothing. Under CI=true the test fails without them, so scripts/test
# calls this script before `go test`.
#
# The npm directory is $MEMMINER_UI_BROWSER_DIR, default
# ${XDG_CACHE_HOME:-$HOME/.cache}/memminer/ui-browser (where the test looks).
set -euo pipefail

bash "$(dirname "$0")/apt-install.sh" chromium chromium
version=1.64.1
dir="${MEMMINER_UI_BROWSER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/memminer/ui-browser}"
# playwright-core downloads no browser: the test launches Debian's.
exec bash "$(dirname "$0")/npm-install.sh" setup-ui-browser "$dir" playwright-core "$version"
