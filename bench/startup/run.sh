#!/bin/sh
# Whole-process start-up of memminer: `--help`, and `search` through a
# running daemon serving 10,000 notes (100 agents, lexical), next to a Go
# "hello world" built by the same toolchain. Needs hyperfine (Debian:
# apt-get install -y hyperfine). Prints hyperfine's medians, the
# instructions each command executes (valgrind's callgrind, when installed:
# unlike times, they do not depend on the machine's load) and the package
# initialisation of `--help` (GODEBUG=inittrace=1), heaviest first.
set -eu
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
pid=
# The daemon is waited for, so it has stopped writing the palace before the
# directory goes.
trap 'if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; rm -rf "$tmp"' EXIT
go build -o "$tmp/memminer" ./cmd/memminer
mkdir "$tmp/hello"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' >"$tmp/hello/main.go"
# The same go line as memminer's, so both get the same GODEBUG defaults.
{ echo 'module hello'; grep '^go ' go.mod; } >"$tmp/hello/go.mod"
(cd "$tmp/hello" && go build -o "$tmp/hello-world" .)
go run ./bench/hivegen/cmd --notes 10000 --agents 100 --out "$tmp/hive" >/dev/null
export MEMMINER_PALACE_PATH="$tmp/palace" MEMMINER_EMBEDDING_MODEL=lexical XDG_CONFIG_HOME="$tmp/config"
"$tmp/memminer" mine "$tmp/hive" >/dev/null
"$tmp/memminer" run --hive "$tmp/hive" --no-syncthing 2>"$tmp/daemon.log" &
pid=$!
until "$tmp/memminer" status 2>/dev/null | grep -q 'active: *true'; do sleep 0.2; done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine -N --warmup 10 --runs 100 --export-json "$tmp/times.json" \
	"$tmp/hello-world" \
	"$tmp/memminer --help" \
	"$tmp/memminer search 'postgres backup'"
echo "median (min), ms:"
grep -E '"(command|median|min)"' "$tmp/times.json" | sed "s|$tmp/||" |
	awk -F': ' '{sub(/,$/, "", $2)} /"command"/{c=$2; gsub(/"/, "", c)} /"median"/{m=$2}
		/"min"/{printf "%6.2f (%.2f)  %s\n", m*1000, $2*1000, c}'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
if command -v valgrind >/dev/null; then
	echo "instructions (callgrind):"
	for cmd in "hello-world" "memminer --help" "memminer search postgres backup"; do
		# Go's asynchronous preemption signal trips callgrind; the count is
		# the same without it.
		n=$(cd "$tmp" && GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
			./$cmd 2>&1 >/dev/null | awk '/refs:/{print $NF}')
		printf "%12s  %s\n" "$n" "$cmd"
	done
fi
echo "package initialisation of --help (ms, mean of 5 runs):"
for i in 1 2 3 4 5; do GODEBUG=inittrace=1 "$tmp/memminer" --help 2>&1 >/dev/null; done |
	awk '/^init /{print $2, $5}' | sort | awk '{v[$1]=v[$1] " " $2} END {for (k in v) print k v[k]}' |
	awk '{n=split($0,a," "); s=0; for(i=2;i<=n;i++) s+=a[i]; printf "%.3f %s\n", s/(n-1), a[1]}' | sort -rn | head -12
