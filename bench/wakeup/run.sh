#!/bin/sh
# Whole-process `memminer wake-up` time on a 10,000-note palace, direct and
# through the daemon, lexical and with the built-in model (use-lite).
#
#   sh bench/wakeup/run.sh [notes]
#
# Needs hyperfine (apt-get install -y hyperfine). The use-lite palace takes a
# few minutes to mine once (the model embeds every note); set
# WAKEUP_BENCH_LEXICAL_ONLY=1 to skip it. Everything lives in a temp dir
# that is removed at the end.
set -eu

notes=${1:-10000}
cd "$(dirname "$0")/../.."
work=$(mktemp -d "${TMPDIR:-/tmp}/memminer-wakeup-bench.XXXXXX")
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	for p in $pids; do wait "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

go build -o "$work/memminer" ./cmd/memminer
go run ./bench/hivegen/cmd --notes "$notes" --out "$work/hive"

models="lexical"
if [ "${WAKEUP_BENCH_LEXICAL_ONLY:-}" != 1 ]; then
	models="lexical use-lite"
fi

set --
for m in $models; do
	pal="$work/palace-$m"
	MEMMINER_PALACE_PATH=$pal MEMMINER_EMBEDDING_MODEL=$m "$work/memminer" mine "$work/hive"
	# Direct: the command opens the palace and ranks it itself.
	set -- "$@" -n "$m, direct" "env MEMMINER_PALACE_PATH=$pal MEMMINER_EMBEDDING_MODEL=$m $work/memminer wake-up --no-daemon"
	set -- "$@" -n "$m, status direct (palace open only)" "env MEMMINER_PALACE_PATH=$pal MEMMINER_EMBEDDING_MODEL=$m $work/memminer status --no-daemon"
done

# Through the daemon: one `memminer run` per palace, serving its socket.
for m in $models; do
	pal="$work/palace-$m"
	MEMMINER_PALACE_PATH=$pal MEMMINER_EMBEDDING_MODEL=$m "$work/memminer" run --hive "$work/hive" --log-level warn &
	pids="$pids $!"
	set -- "$@" -n "$m, daemon" "env MEMMINER_PALACE_PATH=$pal MEMMINER_EMBEDDING_MODEL=$m $work/memminer wake-up"
done
for m in $models; do
	i=0
	until MEMMINER_PALACE_PATH="$work/palace-$m" "$work/memminer" status | grep -q 'active: *true'; do
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "daemon for $m did not come up" >&2; exit 1; }
		sleep 0.1
	done
done

# The daemon and the direct path must print the same digest.
for m in $models; do
	pal="$work/palace-$m"
	MEMMINER_PALACE_PATH=$pal MEMMINER_EMBEDDING_MODEL=$m "$work/memminer" wake-up >"$work/daemon.md"
	MEMMINER_PALACE_PATH=$pal MEMMINER_EMBEDDING_MODEL=$m "$work/memminer" wake-up --no-daemon >"$work/direct.md"
	cmp "$work/daemon.md" "$work/direct.md"
done

hyperfine -N --warmup 5 --runs 40 "$@"
