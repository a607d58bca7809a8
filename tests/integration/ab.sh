#!/bin/sh
# Integration test: several images in one run (docs/compare.md). An A/A run, the cached
# debian12-zfs image named twice (-i images/X -i ./images/X), on a 1-cell matrix with 2
# repeats: 4 VMs, A B in repeat 0 and B A in repeat 1, every record naming its image and side;
# a resume of the finished run runs nothing; `zbench compare RUNDIR` compares the two sides.
# The matrix's "images" key is checked where it is refused (no VM). Uses only the cached
# image (never builds). Prints "ab: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-ab.XXXXXX)
. tests/check.inc
img=images/debian12-zfs.json
need_cached_image ab "$img"

./zbench run -o "$out/run" -i "$img" -i "./$img" tests/integration/ab.json >/dev/null 2>"$out/run.log"
rc=$?
cells="$out/run/cells.jsonl"
check "zbench run -i A -i B exits 0" [ "$rc" -eq 0 ]
check "4 ok records (1 cell x 2 repeats x 2 images)" \
	[ "$(jq -r .outcome "$cells" | grep -c '^ok$')" -eq 4 -a "$(wc -l < "$cells")" -eq 4 ]
check "one cell id for both images" [ "$(jq -r .cell "$cells" | sort -u | wc -l)" -eq 1 ]
order=$(jq -r '"\(.repeat)\(.side)"' "$cells" | tr '\n' ' ')
check "alternation: repeat 0 A then B, repeat 1 B then A ($order)" [ "$order" = "0A 0B 1B 1A " ]
check "each record names its image (hash, recipe as given, side)" \
	[ "$(jq -r '"\(.side) \(.image_recipe) \(.image | length)"' "$cells" | sort -u | tr '\n' ,)" = \
	  "A $img 64,B ./$img 64," ]
check "the manifest lists both images" \
	[ "$(jq -r '.images | map("\(.side)=\(.recipe)") | join(" ")' "$out/run/manifest.json")" = \
	  "A=$img B=./$img" ]
check "cell directories carry the side" [ "$(ls "$out/run/cells" | grep -c -- '-r[01]-[AB]$')" -eq 4 ]
check "progress lines name the image" grep -q "image B" "$out/run.log"

./zbench run --resume "$out/run" >/dev/null 2>"$out/resume.log"
check "a resume of the finished run runs nothing (done map keyed by side)" \
	[ $? -eq 0 -a "$(wc -l < "$cells")" -eq 4 ] && grep -q "4 of 4 cells ok" "$out/resume.log"

./zbench compare "$out/run" >"$out/compare.out" 2>"$out/compare.err"
check "zbench compare RUNDIR exits 0" [ $? -eq 0 -a -s "$out/run/compare.md" ]
check "the comparison lists the cell, A and B each from its side" \
	grep -q "1 cells in both" "$out/run/compare.md"
check "the comparison names both sides" grep -qF "run \\[A\\]', B is '$out/run \\[B\\]" "$out/run/compare.md"

# the matrix's key: refused before anything is created (no VM boots)
jq --arg i "$img" '.image = $i | .images = [$i, $i]' tests/integration/ab.json > "$out/both.json"
./zbench run -o "$out/both" "$out/both.json" >/dev/null 2>"$out/both.log"
check "a matrix naming \"image\" and \"images\" is refused" \
	[ $? -ne 0 -a ! -e "$out/both" ] && grep -q 'both "image" and "images"' "$out/both.log"
jq '.images = ["images/debian12-zfs.json", "images/no-such-image.json"]' tests/integration/ab.json \
	> "$out/missing.json"
./zbench run -o "$out/missing" "$out/missing.json" >/dev/null 2>"$out/missing.log"
check "a missing image of \"images\" is refused before any cell" \
	[ $? -ne 0 -a ! -e "$out/missing" ] && grep -q "image B" "$out/missing.log"

echo "ab: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; fi
[ "$failed" -eq 0 ]
