#!/bin/sh
# Integration test: -j 2 runs a 4-cell throttled matrix with two VMs at once and records every
# cell once, each with its disks' limits kept through setup; -j 2 on unthrottled disks is refused
# before anything is created. (How much faster -j 2 is: bench/parallel.sh.) Prints "parallel: N
# passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-parallel.XXXXXX)
. tests/check.inc
./zbench run -j 2 -o "$out/j2" tests/integration/parallel.json >/dev/null 2>"$out/j2.log" &
pid=$!
most=0
while kill -0 "$pid" 2>/dev/null; do
	n=$(pgrep -f "qemu-system.*$out/j2/cells" | wc -l)
	[ "$n" -gt "$most" ] && most=$n
	sleep 1
done
wait "$pid"
check "-j 2 exits 0" [ $? -eq 0 ]
check "two VMs ran at once" [ "$most" -ge 2 ]
check "4 ok records, each cell once" \
	[ "$(jq -r .outcome "$out/j2/cells.jsonl" | grep -c '^ok$')" -eq 4 -a "$(jq -r .cell "$out/j2/cells.jsonl" | sort -u | wc -l)" -eq 4 ]
check "cells at once keep their disks' limits through setup (docs/disks.md)" \
	[ "$(jq -s 'all(.disk_limits.setup == "kept")' "$out/j2/cells.jsonl")" = true ]
check "manifest complete, 4 of 4 ok" \
	[ "$(jq -r '[.status, .cells_ok] | join(",")' "$out/j2/manifest.json")" = "complete,4" ]
./zbench run -j 2 -o "$out/refused" matrices/quick.json >/dev/null 2>"$out/refused.log"
check "-j 2 with unthrottled disks is refused (exit 2), nothing created" \
	[ $? -eq 2 -a ! -e "$out/refused" ] && grep -q "not throttled" "$out/refused.log"
echo "parallel: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; fi
[ "$failed" -eq 0 ]
