#!/bin/sh
# Integration test: adaptive repeats run past `repeats` while the CV is above the limit, and stop
# at max_repeats; `zbench report` then shows the repeats' statistics; `zbench replay` reruns it. Prints "adaptive: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-adaptive.XXXXXX)
. tests/check.inc
./zbench run -o "$out/run" tests/integration/adaptive.json >/dev/null 2>"$out/log"
rc=$?
grep adaptive: "$out/log" | sed 's/^/    /'
check "run exits 0" [ "$rc" -eq 0 ]
check "3 records: 2 repeats + 1 adaptive, capped by max_repeats" [ "$(wc -l < "$out/run/cells.jsonl")" -eq 3 ]
check "repeats 0, 1, 2" [ "$(jq -r .repeat "$out/run/cells.jsonl" | sort | tr '\n' ' ')" = "0 1 2 " ]
check "the adaptive decision was printed" grep -q "adaptive: cell .* CV" "$out/log"
./zbench report "$out/run" >/dev/null 2>&1
check "report has the confidence interval table" grep -qi "confidence" "$out/run/report.md"
./zbench replay -o "$out/replay" "$out/run/manifest.json" >/dev/null 2>"$out/replay.log"
rc=$?
check "replay exits 0" [ "$rc" -eq 0 ]
check "replay ran the same cell" \
	[ "$(jq -r .cell "$out/replay/cells.jsonl" | sort -u)" = "$(jq -r .cell "$out/run/cells.jsonl" | sort -u)" ]
check "replay kept the matrix (same sha256)" \
	[ "$(jq -r .matrix.sha256 "$out/replay/manifest.json")" = "$(jq -r .matrix.sha256 "$out/run/manifest.json")" ]
echo "adaptive: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; fi
[ "$failed" -eq 0 ]
