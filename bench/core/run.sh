#!/bin/sh
# Core pipeline figures (BENCHMARKS.md, "Core pipeline"): mine throughput,
# palace size and whole-process `memminer search` time on a generated
# 10,000-note hive, lexically and with the built-in model. Needs hyperfine.
set -eu
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/memminer" ./cmd/memminer
go run ./bench/hivegen/cmd --notes 10000 --out "$work/hive"
mm="$work/memminer"
for model in lexical use-lite; do
	palace="$work/palace-$model"
	echo "== $model: mine (cold, then unchanged)"
	/usr/bin/time -f "cold mine: %e s wall, %U s user, %M KB max RSS" \
		"$mm" --palace "$palace" --model "$model" mine "$work/hive" | tail -1
	/usr/bin/time -f "re-mine: %e s wall" "$mm" --palace "$palace" --model "$model" mine "$work/hive" | tail -1
	echo "palace size: $(du -sk "$palace" | cut -f1) KiB"
	hyperfine -N --warmup 3 --runs 30 \
		"$mm --palace $palace --model $model --no-daemon search 'pgbouncer depends on vault'" \
		"$mm --palace $palace --model $model --no-daemon search 'pgbouncer depends on vault' --wing agent-003"
done
