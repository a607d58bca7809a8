#!/bin/sh
# Integration test: a workload in phases inside a real guest (docs/matrix.md, "Phases"): each
# phase's result and witness in the record, the cell's result the measured phase's, a prefilled
# zvol's reads reaching the disk after an export and import, one file shared by two jobs on a
# dataset, and a dataset's prefill on its disks (synced) before the read phase right after it.
# Prints "phases: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-phases.XXXXXX)
. tests/check.inc
field() { jq -r --arg s "case=$1" "select(.summary == \$s) | $2" "$out/run/cells.jsonl"; }

# the fresh-zvol read without its prefill is refused before anything boots
jq '.base.workload |= (del(.phases) + {runtime: "3s", time_based: true})' \
	tests/integration/phases.json >"$out/fresh.json"
./zbench matrix check "$out/fresh.json" >/dev/null 2>"$out/check.log"
check "matrix check refuses the fresh-zvol read" grep -q 'reads zvol "vol" from 0 to 64M' "$out/check.log"

./zbench run -o "$out/run" tests/integration/phases.json >/dev/null 2>"$out/log"
check "run exits 0 (3 ok cells)" [ $? -eq 0 ]
for c in zvol shared-file ds-prefill; do
	check "$c: both engine phases in phase_results, only the last measured" \
		[ "$(field $c '[.phase_results[] | "\(.name):\(.measured)"] | join(",")')" = \
		  "$([ $c = shared-file ] && echo write:false,read:true || echo fill:false,read:true)" ]
	check "$c: the cell's result is the read phase's" \
		[ "$(field $c '.fio == (.phase_results[] | select(.name == "read") | .fio)')" = true ]
	check "$c: read phase: witness figures (disk shares, ARC hit ratio, compress ratio)" \
		[ "$(field $c '.phase_results[1].witness | has("disk_read_share") and has("arc_hit_ratio") and has("compress_ratio")')" = true ]
	check "$c: read phase: at least half the reads reached the disk" \
		[ "$(field $c '.phase_results[1].witness.disk_read_share >= 0.5')" = true ]
	check "$c: write phase: its writes reached the disk" \
		[ "$(field $c '.phase_results[0].witness.disk_write_share >= 0.5')" = true ]
done
check "zvol: the prefill wrote in 1m blocks with libaio" \
	[ "$(field zvol '.phase_results[0].fio.jobs[0]["job options"] | (.bs == "1m") and (.ioengine == "libaio")')" = true ]
check "shared-file: two jobs on one file" \
	[ "$(field shared-file '[.phase_results[1].fio.jobs[] | .["job options"].filename] | unique == ["f"] and (length == 2)')" = true ]
check "shared-file: random data on lz4: compress ratio about 1" \
	[ "$(field shared-file '.witness.compress_ratio < 1.1')" = true ]
# the prefill's data was on the disks before the read phase (the fill ends with a zpool sync):
# without the sync, the read above answered from the last TXG's dirty data in memory (15,659
# read IOPS, none from the disk) and its writeback could fall in the read
check "ds-prefill: the read phase wrote under 2M (no prefill writeback)" \
	[ "$(field ds-prefill '.phase_results[1].witness.disk_write_bytes < 2 * 1048576')" = true ]
echo "phases: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; fi
[ "$failed" -eq 0 ]
