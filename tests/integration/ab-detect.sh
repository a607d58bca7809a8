#!/bin/sh
# Integration test: the detection run (docs/compare.md, "Detecting a patch"). The source build
# without a patch (A, images/debian12-zfs-src-base.json) against the same source with
# patches/zfs-aggregation-16k.patch (B, images/debian12-zfs-src.json), interleaved in one run of
# matrices/ab-aggregation.json: the gate on write_bw must fail (a significant loss, exit 3). Then
# an A/A run of B with the same repeats: nothing significant, the gate passes (exit 0). Every
# record says what was built (zfs_build: the patch's hash on B only, the same source key on
# neither side of the A/B, the same on both of the A/A) and the module parameter the patch
# changed is what the guest had. Uses only cached images (never builds: a cold source build
# takes most of an hour here); not in `make integration` for that reason. 12 VMs.
# Prints "ab-detect: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-ab-detect.XXXXXX)
. tests/check.inc
base=images/debian12-zfs-src-base.json
patched=images/debian12-zfs-src.json
matrix=matrices/ab-aggregation.json
for img in "$base" "$patched"; do
	need_cached_image ab-detect "$img"
done

./zbench run -o "$out/ab" -i "$base" -i "$patched" "$matrix" >/dev/null 2>"$out/ab.log"
check "the A/B run exits 0" [ $? -eq 0 ]
cells="$out/ab/cells.jsonl"
check "every record ok" [ "$(jq -r .outcome "$cells" | sort -u)" = ok ]
check "B's records name the patch by its hash, A's name none" [ \
	"$(jq -r '"\(.side) \((.zfs_build.patches // []) | map(.name + "=" + .sha256) | join(","))"' "$cells" |
		sort -u | tr '\n' ' ')" = \
	"A  B zfs-aggregation-16k.patch=$(sha256sum patches/zfs-aggregation-16k.patch | cut -c1-64) " ]
check "the two sides' source keys differ, the version strings do not" [ \
	"$(jq -r '"\(.side) \(.zfs_build.key)"' "$cells" | sort -u | wc -l)" -eq 2 -a \
	"$(jq -r .effective.zfs_version "$cells" | sort -u | wc -l)" -eq 1 ]
check "the guest had the patched default on B only" [ \
	"$(jq -r '"\(.side)=\(.effective.module_params.zfs.zfs_vdev_aggregation_limit)"' "$cells" |
		sort -u | tr '\n' ' ')" = "A=1048576 B=16384 " ]
./zbench compare --fail-if 'write_bw < -5%' --json "$out/ab" >"$out/ab.json" 2>"$out/ab.err"
check "compare of the A/B: the gate fails (exit 3)" [ $? -eq 3 ]
check "a significant loss of write_bw" \
	jq -e '[.tests[] | select(.metric == "write_bw" and .significant and .change_pct < 0)]
		| length > 0' "$out/ab.json" >/dev/null

./zbench run -o "$out/aa" -i "$patched" -i "./$patched" "$matrix" >/dev/null 2>"$out/aa.log"
check "the A/A run exits 0" [ $? -eq 0 ]
check "A/A: one source key on both sides" \
	[ "$(jq -r .zfs_build.key "$out/aa/cells.jsonl" | sort -u | wc -l)" -eq 1 ]
./zbench compare --fail-if 'write_bw < -5%' --json "$out/aa" >"$out/aa.json" 2>"$out/aa.err"
check "compare of the A/A: the gate passes (exit 0)" [ $? -eq 0 ]
check "A/A: nothing significant" \
	jq -e '[.tests[] | select(.significant)] | length == 0' "$out/aa.json" >/dev/null

echo "ab-detect: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; fi
[ "$failed" -eq 0 ]
