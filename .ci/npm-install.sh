#!/usr/bin/env bash
# npm-install.sh NAME DIR PACKAGE VERSION installs the npm PACKAGE at
# VERSION into DIR (a directory in the user's cache, never the
# repository) unless it is there already. It is idempotent: a second run
# does nothing. NAME is the setup script's name, for its messages. The
# setup-*.sh scripts call it for the npm packages the tests drive.
set -euo pipefail

name="$1"
dir="$2"
package="$3"
version="$4"
pkg="$dir/node_modules/$package/package.json"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "$name: node and npm are needed (Debian: apt-get install nodejs npm)" >&2
	exit 1
fi
if [ -f "$pkg" ] && grep -q "\"version\": \"$version\"" "$pkg"; then
	echo "$name: $package $version already in $dir"
	exit 0
fi
mkdir -p "$dir"
echo "$name: installing $package $version into $dir"
# --no-save with a package.json of our own keeps npm from looking upwards
# for a project; the lock file npm writes pins what was installed.
[ -f "$dir/package.json" ] || echo "{\"name\":\"memminer-$name-test\",\"private\":true}" >"$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$package@$version"
echo "$name: installed $package $version"
