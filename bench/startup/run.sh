#!/bin/sh
# Whole-process start-up of memminer: `--help`, and `search` through a
# running daemon serving 10,000 notes (100 agents, lexical). Needs
# hyperfine (Debian: apt-get install -y hyperfine). Prints hyperfine's
# figures and the package initialisation of `--help` (GODEBUG=inittrace=1),
# heaviest first.
set -eu
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/memminer" ./cmd/memminer
go run ./bench/hivegen/cmd --notes 10000 --agents 100 --out "$tmp/hive" >/dev/null
export MEMMINER_PALACE_PATH="$tmp/palace" MEMMINER_EMBEDDING_MODEL=lexical XDG_CONFIG_HOME="$tmp/config"
"$tmp/memminer" mine "$tmp/hive" >/dev/null
"$tmp/memminer" run --hive "$tmp/hive" --no-syncthing 2>"$tmp/daemon.log" &
pid=$!
until "$tmp/memminer" status 2>/dev/null | grep -q 'active: *true'; do sleep 0.2; done
hyperfine -N --warmup 10 --runs 100 \
	"$tmp/memminer --help" \
	"$tmp/memminer search 'postgres backup'"
echo "package initialisation of --help (ms, mean of 5 runs):"
for i in 1 2 3 4 5; do GODEBUG=inittrace=1 "$tmp/memminer" --help 2>&1 >/dev/null; done |
	awk '/^init /{print $2, $5}' | sort | awk '{v[$1]=v[$1] " " $2} END {for (k in v) print k v[k]}' |
	awk '{n=split($0,a," "); s=0; for(i=2;i<=n;i++) s+=a[i]; printf "%.3f %s\n", s/(n-1), a[1]}' | sort -rn | head -12
