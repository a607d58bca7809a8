#!/bin/sh
# Integration test: each I/O engine (psync, libaio, io_uring), the open-loop Poisson rate and the
# iozone mode, inside a real guest on a ZFS dataset. Prints "engines: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-engines.XXXXXX)
. tests/check.inc
field() { jq -r --arg s "case=$1" "select(.summary == \$s) | $2" "$out/run/cells.jsonl"; }

./zbench run -o "$out/run" tests/integration/engines.json >/dev/null 2>"$out/log"
check "run exits 0 (5 ok cells)" [ $? -eq 0 ]
for e in psync libaio io_uring; do
	check "$e ran as $e, read and write IOPS > 0" \
		[ "$(field $e '(.fio.zbench.engine == "'$e'") and ([.fio.jobs[].read.iops] | add > 0) and ([.fio.jobs[].write.iops] | add > 0)')" = true ]
done
check "poisson rate: 50 IOPS target, achieved within 15%" \
	[ "$(field poisson '.fio.zbench.rate | (.target_iops == 50) and (.deviation_pct | fabs < 15)')" = true ]
check "iozone mode: KB/s for write, rewrite, read, reread, ..." \
	[ "$(field iozone '[.fio.iozone.results[] | select((.children_kbps // .kbps) > 0)] | length >= 4')" = true ]
echo "engines: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; fi
[ "$failed" -eq 0 ]
