#!/bin/sh
# Integration test: an adaptive gate in tiers (docs/compare.md, "Adaptive gates"). An A/A run
# of the cached default image named twice, bench/ab-gate.json (one size-bound cell of 4k sync
# writes, 2 repeats: 4 VMs), then `zbench compare --adaptive` with a count gate (decided at
# once, no statistics) and a timing gate with a wide threshold, at most 10 repeats a side: the
# added repeats interleave (A B, B A, ...), the count gate passes (the same work), no gate fails
# (an A/A run), and the exit status is 0 (decided) or 4 (undecided when the budget ran out),
# with the verdicts in the job summary. Prints "gate: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-gate.XXXXXX)
. tests/check.inc
# jq_true FILTER FILE: the filter's last output is true (printing nothing)
jq_true() { jq -e "$1" "$2" >/dev/null; }
img=images/debian12-zfs.json
./zbench run -o "$out/run" -i "$img" -i "./$img" bench/ab-gate.json >/dev/null 2>"$out/run.log"
check "the A/A run exits 0" [ $? -eq 0 ]
./zbench compare --adaptive --fail-if 'disk_flushes > 5%' --fail-if 'write_iops < -50%' \
	--max-repeats 10 --max-minutes 20 --summary "$out/summary.md" --json "$out/run" \
	>"$out/compare.json" 2>"$out/compare.log"
rc=$?
grep -E "adaptive|compare:" "$out/compare.log" | sed 's/^/    /'
check "compare --adaptive exits 0 or 4, never 3 on an A/A run (exit $rc)" [ $rc -eq 0 -o $rc -eq 4 ]
n=$(jq -r 'select(.side == "A") | .repeat' "$out/run/cells.jsonl" | sort -u | wc -l)
check "repeats were added past the matrix's 2, at most 10 ($n)" [ "$n" -gt 2 -a "$n" -le 10 ]
order=$(jq -r '"\(.repeat)\(.side)"' "$out/run/cells.jsonl" | tr '\n' ' ')
check "each added repeat ran both images, in turning order ($order)" sh -c \
	"jq -rs 'group_by(.repeat) | map(map(.side) | join(\"\")) | to_entries
	  | all(.value == (if .key % 2 == 0 then \"AB\" else \"BA\" end))' '$out/run/cells.jsonl' | grep -qx true"
check "the count gate passed with no statistics" \
	jq_true '.gates[] | select(.metric == "disk_flushes") | .verdict == "passed"' "$out/compare.json"
check "every gated row prints its minimum detectable effect" \
	jq_true '[.verdicts.rows[] | select(.gate) | has("mde_pct")] | all' "$out/compare.json"
check "the job summary has the verdict" grep -Eq "zbench compare: (passed|UNDECIDED)" "$out/summary.md"
echo "gate: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; fi
[ "$failed" -eq 0 ]
