#!/bin/sh
# zbench merge says what is wrong with a set of shards, without booting anything: the shards that
# are missing by number, the ones that did not finish, shards of another image or matrix and a
# manifest that names an impossible shard (refused), and more shards than a 64-bit mask holds (the
# completeness check once stopped at 64). The shards are the golden compare fixture's manifest
# with a "shard" set; a `zbench slurm` merge job relies on these messages (docs/scale-out.md).
# Prints "merge-shards: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
ZBENCH=${ZBENCH:-./zbench}
. tests/check.inc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fix=tests/golden/compare/spelling/a

# shard DIR INDEX COUNT [JQ]: a shard of the fixture's run, its manifest changed by JQ
shard() {
	mkdir -p "$1"
	jq --argjson i "$2" --argjson n "$3" ".shard = {\"index\": \$i, \"count\": \$n} | ${4:-.}" \
		"$fix/manifest.json" >"$1/manifest.json"
	: >"$1/cells.jsonl"
}
# merge NAME SHARD...: exit status in $rc, stderr in $tmp/NAME.err
merge() {
	name=$1
	shift
	"$ZBENCH" merge -o "$tmp/out-$name" "$@" >/dev/null 2>"$tmp/$name.err"
	rc=$?
}

shard "$tmp/s1" 1 4
shard "$tmp/s3" 3 4
merge gaps "$tmp/s1" "$tmp/s3"
check "shards 1 and 3 of 4: incomplete (exit 1)" [ "$rc" -eq 1 ]
check "... naming the missing shards 2 and 4" grep -qx "zbench merge: shards 2, 4 of 4 are missing" "$tmp/gaps.err"
check "... and the merged run says incomplete" \
	[ "$(jq -r .status "$tmp/out-gaps/manifest.json")" = incomplete ]

shard "$tmp/s2" 2 4 '.status = "interrupted"'
shard "$tmp/s4" 4 4
merge killed "$tmp/s1" "$tmp/s2" "$tmp/s3" "$tmp/s4"
check "every shard, one interrupted: incomplete (exit 1)" [ "$rc" -eq 1 ]
check "... naming it and its state" grep -q "shard 2 ('.*/s2') is interrupted" "$tmp/killed.err"
check "... and no shard as missing" sh -c "! grep -q missing '$tmp/killed.err'"

shard "$tmp/s2" 2 4
merge whole "$tmp/s1" "$tmp/s2" "$tmp/s3" "$tmp/s4"
check "all 4 shards complete: exit 0, complete" \
	[ "$rc" -eq 0 -a "$(jq -r .status "$tmp/out-whole/manifest.json")" = complete ]

shard "$tmp/img" 2 4 '.image.hash = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2"'
merge image "$tmp/s1" "$tmp/img"
check "a shard of another image is refused (exit 2), naming both images" \
	[ "$rc" -eq 2 -a ! -e "$tmp/out-image" ] &&
	grep -q "not shards of one run: .*image a1a1a1a1a1a1 vs b2b2b2b2b2b2" "$tmp/image.err"
shard "$tmp/mat" 2 4 '.matrix.sha256 = "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"'
merge matrix "$tmp/s1" "$tmp/mat"
check "a shard of another matrix is refused (exit 2)" \
	[ "$rc" -eq 2 ] && grep -q "matrix abababababab vs cdcdcdcdcdcd" "$tmp/matrix.err"
shard "$tmp/three" 2 3
merge count "$tmp/s1" "$tmp/three"
check "a shard of another count is refused (exit 2)" \
	[ "$rc" -eq 2 ] && grep -q "shards of 4 vs 3" "$tmp/count.err"
shard "$tmp/bad" 5 3
merge bad "$tmp/bad"
check "a manifest naming shard 5 of 3 is refused (exit 2)" \
	[ "$rc" -eq 2 ] && grep -q "shard 5 of 3 is not a shard" "$tmp/bad.err"

# 70 shards, number 67 left out: past a 64-bit mask
set --
for i in $(seq 1 70); do
	[ "$i" -eq 67 ] && continue
	shard "$tmp/w$i" "$i" 70
	set -- "$@" "$tmp/w$i"
done
merge wide "$@"
check "70 shards without number 67: incomplete, naming 67" \
	[ "$rc" -eq 1 ] && grep -qx "zbench merge: shard 67 of 70 is missing" "$tmp/wide.err"

echo "merge-shards: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
