#!/usr/bin/env bash
# setup-syncthing.sh installs Debian's syncthing package when the binary is
# not already on PATH. It is idempotent: a second run does nothing.
# The syncthing/ integration tests need the binary; under CI=true they fail
# without it, so .ci/run calls this script before `go test`.
set -euo pipefail

if command -v syncthing >/dev/null 2>&1; then
	echo "setup-syncthing: $(syncthing --version 2>/dev/null | head -n1 || echo syncthing) already installed"
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "setup-syncthing: syncthing is not on PATH and apt-get is missing; install syncthing by hand" >&2
	exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "setup-syncthing: need root (or sudo) to apt-get install syncthing" >&2
		exit 1
	fi
fi

export DEBIAN_FRONTEND=noninteractive
echo "setup-syncthing: installing syncthing with apt-get"
if ! $SUDO apt-get update -q; then
	echo "setup-syncthing: apt-get update failed" >&2
	exit 1
fi
if ! $SUDO apt-get install -y -q --no-install-recommends syncthing; then
	echo "setup-syncthing: apt-get install syncthing failed" >&2
	exit 1
fi
if ! command -v syncthing >/dev/null 2>&1; then
	echo "setup-syncthing: syncthing installed but still not on PATH" >&2
	exit 1
fi
echo "setup-syncthing: installed $(syncthing --version | head -n1)"
