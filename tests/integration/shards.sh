#!/bin/sh
# Integration test: a 4-cell matrix run as two shards, merged, reported; shards of different
# matrices are refused. Prints "shards: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-shards.XXXXXX)
. tests/check.inc
./zbench run --shard 1/2 -o "$out/s1" tests/integration/resume.json >/dev/null 2>&1
r1=$?
./zbench run --shard 2/2 -o "$out/s2" tests/integration/resume.json >/dev/null 2>&1
r2=$?
check "both shards exit 0" [ "$r1" -eq 0 -a "$r2" -eq 0 ]
n1=$(wc -l < "$out/s1/cells.jsonl"); n2=$(wc -l < "$out/s2/cells.jsonl")
check "the shards split the 4 cells without overlap ($n1 + $n2)" \
	[ "$((n1 + n2))" -eq 4 -a -z "$(cat "$out"/s*/cells.jsonl | jq -r .cell | sort | uniq -d)" ]
./zbench merge -o "$out/all" "$out/s1" "$out/s2" >/dev/null 2>&1
check "merge exits 0" [ $? -eq 0 ]
check "merged: 4 ok records, complete" \
	[ "$(jq -r .outcome "$out/all/cells.jsonl" | grep -c ok)" -eq 4 -a "$(jq -r .status "$out/all/manifest.json")" = complete ]
check "merged: every cell's console log" [ "$(ls "$out"/all/cells/*/console.log | wc -l)" -eq 4 ]
./zbench report "$out/all" >/dev/null 2>&1
check "report accepts the merged run" [ $? -eq 0 -a -s "$out/all/report.md" ]
./zbench merge -o "$out/only1" "$out/s1" >/dev/null 2>&1
check "a missing shard makes the merge incomplete (exit 1)" [ $? -eq 1 ]
mkdir -p "$out/other"
jq '.matrix.sha256 = "0000"' "$out/s2/manifest.json" > "$out/other/manifest.json"
cp "$out/s2/cells.jsonl" "$out/other/"
./zbench merge -o "$out/bad" "$out/s1" "$out/other" 2>"$out/bad.log" >/dev/null
check "shards of another matrix are refused, naming both" \
	[ $? -eq 2 -a ! -e "$out/bad" ] && grep -q "not shards of one run" "$out/bad.log"
echo "shards: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; fi
[ "$failed" -eq 0 ]
