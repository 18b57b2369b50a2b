#!/usr/bin/env bash
# apt-install.sh CMD PACKAGE installs Debian's PACKAGE when the binary CMD
# is not already on PATH. It is idempotent: a second run does nothing.
# The setup-*.sh scripts call it for what the integration tests run.
set -euo pipefail

cmd="$1"
pkg="$2"
if command -v "$cmd" >/dev/null 2>&1; then
	echo "setup-$cmd: $("$cmd" --version 2>/dev/null | head -n1 || echo "$cmd") already installed"
	exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
	echo "setup-$cmd: $cmd is not on PATH and apt-get is missing; install $pkg by hand" >&2
	exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "setup-$cmd: need root (or sudo) to apt-get install $pkg" >&2
		exit 1
	fi
fi

export DEBIAN_FRONTEND=noninteractive
echo "setup-$cmd: installing $pkg with apt-get"
if ! $SUDO apt-get update -q; then
	echo "setup-$cmd: apt-get update failed" >&2
	exit 1
fi
if ! $SUDO apt-get install -y -q --no-install-recommends "$pkg"; then
	echo "setup-$cmd: apt-get install $pkg failed" >&2
	exit 1
fi
if ! command -v "$cmd" >/dev/null 2>&1; then
	echo "setup-$cmd: $pkg installed but $cmd is still not on PATH" >&2
	exit 1
fi
echo "setup-$cmd: installed $("$cmd" --version | head -n1)"
