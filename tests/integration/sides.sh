#!/bin/sh
# Integration test: a matrix's "sides" (docs/compare.md, "Sides that differ"). One cell on a
# throttled disk, 1 repeat, three sides of the cached default image: A, B the same, C with the
# disk 10% slower (45 IOPS, not 50): 3 VMs. Every record keeps the matrix cell's id and names its
# side; C's record carries its side_set and ran its own config (45 IOPS, and its QEMU was given
# that), A's and B's the matrix's; the manifest lists each side's set; a resume runs nothing;
# `zbench compare --sides AC` and `AB` pair the sides by id. -i given once per side but for the
# wrong number of sides is refused before anything is created (no VM). Uses only the cached
# image (never builds). Prints "sides: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-sides.XXXXXX)
. tests/check.inc
img=images/debian12-zfs.json
need_cached_image sides "$img"

./zbench run -o "$out/run" tests/integration/sides.json >/dev/null 2>"$out/run.log"
rc=$?
cells="$out/run/cells.jsonl"
check "zbench run of three sides exits 0" [ "$rc" -eq 0 ]
check "3 ok records (1 cell x 1 repeat x 3 sides)" \
	[ "$(jq -r .outcome "$cells" | grep -c '^ok$')" -eq 3 -a "$(wc -l < "$cells")" -eq 3 ]
check "one cell id on every side" [ "$(jq -r .cell "$cells" | sort -u | wc -l)" -eq 1 ]
check "the matrix's id (zbench matrix check)" \
	[ "$(jq -r .cell "$cells" | head -1)" = \
	  "$(./zbench matrix check tests/integration/sides.json | awk 'NR == 2 { print $2 }')" ]
order=$(jq -r '"\(.repeat)\(.side)"' "$cells" | tr '\n' ' ')
check "sides in order: 0A 0B 0C ($order)" [ "$order" = "0A 0B 0C " ]
check "only C's record has a side_set, and it is C's" \
	[ "$(jq -c '[.side, .side_set]' "$cells" | tr '\n' ' ')" = \
	  '["A",null] ["B",null] ["C",{"disks[0].throttle.iops":45}] ' ]
check "each record's config is its side's (50, 50, 45 IOPS)" \
	[ "$(jq -r '.config.disks[0].throttle.iops' "$cells" | tr '\n' ' ')" = "50 50 45 " ]
check "C's QEMU was given 45 IOPS, A's and B's 50" \
	grep -q '"iops-total":45}' "$out/run/cells/"*-C/qemu.cmdline && \
	grep -q '"iops-total":50}' "$out/run/cells/"*-A/qemu.cmdline && \
	grep -q '"iops-total":50}' "$out/run/cells/"*-B/qemu.cmdline
check "the manifest lists each side's set" \
	[ "$(jq -c '[.images[] | [.side, .set]]' "$out/run/manifest.json")" = \
	  '[["A",null],["B",null],["C",{"disks[0].throttle.iops":45}]]' ]

./zbench run --resume "$out/run" >/dev/null 2>"$out/resume.log"
check "a resume of the finished run runs nothing" \
	[ $? -eq 0 -a "$(wc -l < "$cells")" -eq 3 ] && grep -q "3 of 3 cells ok" "$out/resume.log"

for s in AC AB; do
	./zbench compare --sides $s -o "$out/cmp-$s" "$out/run" >/dev/null 2>"$out/compare-$s.err"
	check "zbench compare --sides $s exits 0 and pairs the cell" \
		[ $? -eq 0 ] && grep -q "1 cells in both" "$out/cmp-$s/compare.md"
done
check "the comparison of A and C shows what C set" \
	grep -qF '| side sets | ? | {"disks\[0\].throttle.iops":45} |' "$out/cmp-AC/compare.md"

./zbench run -o "$out/two" -i "$img" -i "./$img" tests/integration/sides.json >/dev/null \
	2>"$out/two.log"
check "two -i for three sides are refused before anything is created" \
	[ $? -ne 0 -a ! -e "$out/two" ] && grep -q "2 images (-i) for the 3 sides" "$out/two.log"

echo "sides: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; fi
[ "$failed" -eq 0 ]
