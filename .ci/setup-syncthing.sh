#!/usr/bin/env bash
# setup-syncthing.sh installs Debian's syncthing package when the binary is
# not already on PATH. It is idempotent: a second run does nothing.
# The syncthing/ integration tests need the binary; under CI=true they fail
# without it, so .ci/run calls this script before `go test`.
set -euo pipefail
exec bash "$(dirname "$0")/apt-install.sh" syncthing syncthing
