#!/bin/sh
# zbench merge recognises the same attempt of a cell in two shards by the canonical id of its
# configuration (builder/matrix/canon.h), so a shard recorded before canonical ids (old id, another
# spelling) and one recorded after still merge to one record per attempt. The shards are the
# golden compare fixture's records, spelled two ways (tests/golden/compare/spelling).
# Prints "merge-canon: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
ZBENCH=${ZBENCH:-./zbench}
. tests/check.inc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fix=tests/golden/compare/spelling

for i in 1 2; do
	mkdir -p "$tmp/s$i"
	jq --argjson i "$i" '.shard = {"index": $i, "count": 2}' "$fix/a/manifest.json" >"$tmp/s$i/manifest.json"
done
# shard 1: the cell ashift=9 as written before (id cccc..., bs "4k"), all repeats;
# shard 2: the same attempts spelled "4K", "1024M", "readwrite" (id dddd...), plus ashift=12
grep '"ashift":9' "$fix/a/cells.jsonl" | jq -c 'del(.dir)' >"$tmp/s1/cells.jsonl"
jq -c 'del(.dir)' "$fix/b/cells.jsonl" >"$tmp/s2/cells.jsonl"
n9=$(grep -c '"ashift":9' "$tmp/s1/cells.jsonl")
n12=$(grep -c '"ashift":12' "$tmp/s2/cells.jsonl")

"$ZBENCH" merge -o "$tmp/out" "$tmp/s1" "$tmp/s2" >"$tmp/merge.out" 2>&1
check "merge of the two shards: exit 0" [ $? -eq 0 ]
check "the same attempts spelled two ways are kept once ($n9 + $n12 records)" \
	[ "$(wc -l <"$tmp/out/cells.jsonl")" -eq $((n9 + n12)) ]
check "the first shard's records are the ones kept" \
	[ "$(grep -c '"cell":"cccc' "$tmp/out/cells.jsonl")" -eq "$n9" ]

echo "merge-canon: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
