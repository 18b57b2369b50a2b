#!/usr/bin/env bash
# setup-git.sh installs Debian's git package when the binary is not
# already on PATH. It is idempotent: a second run does nothing. The
# githive/ and `memminer git` tests run real git; under CI=true they fail
# without it, so scripts/test calls this script before `go test`.
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" git git
