#!/bin/sh
# Integration test (slow: OpenZFS built from source; `make integration-slow`): `zbench bisect`
# over a local git history of 8 commits on top of Debian's zfs-linux source (the one
# images/debian12-zfs-src.json builds), one of which (the 5th) plants a regression a throttled
# cell sees: the defaults of zfs_vdev_aggregation_limit(_non_rotating) lowered to 16 KiB, so
# matrices/ab-aggregation.json's 1 MiB writes to an IOPS-throttled disk lose most of their
# bandwidth. The other commits each add a comment to module/zfs/vdev_queue.c (a rebuild, no
# effect). bisect must name the 5th commit after 3 tests and at most 4 builds (the good end
# and 3 midpoints), log each step, and a second invocation must resume from its state file:
# the same answer, no test, no build.
#
# Source: $ZBENCH_BISECT_DSC, else the .dsc in the image cache's src/ (an earlier build of
# debian12-zfs-src), else `apt-get source --download-only` (needs the deb-src entry
# builder/install-deps.sh adds). Image cache: $ZBENCH_CACHE_DIR or the default; a cold cache
# builds the root too. Prints "bisect: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/check.inc
ZBENCH=${ZBENCH:-./zbench}
version=2.1.11-1+deb12u1
tmp=$(mktemp -d /var/tmp/zbench-bisect.XXXXXX)
cache=${ZBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zbench}
dsc=${ZBENCH_BISECT_DSC:-$cache/src/zfs-linux_$version.dsc}
if [ ! -f "$dsc" ]; then
	mkdir -p "$tmp/dl"
	(cd "$tmp/dl" && apt-get source --download-only -q "zfs-linux=$version") >"$tmp/dl.log" 2>&1
	dsc=$tmp/dl/zfs-linux_$version.dsc
fi
if [ ! -f "$dsc" ]; then
	echo "bisect: no zfs-linux $version source (see $tmp/dl.log)"
	echo "bisect: 0 passed, 1 failed"
	exit 1
fi

# The history: the source as Debian ships it (its patches applied), then 8 commits.
repo=$tmp/repo
dpkg-source -x "$dsc" "$repo" >"$tmp/extract.log" 2>&1 || {
	echo "bisect: dpkg-source -x failed (see $tmp/extract.log)"
	echo "bisect: 0 passed, 1 failed"
	exit 1
}
# A fixed author, committer and date make every commit's id the same on every run, so a rerun
# finds the good end's build tree (keyed by its commit, docs/images.md) and the images cached
# instead of building OpenZFS cold again.
export GIT_AUTHOR_DATE="1796159604 +0000" GIT_COMMITTER_DATE="1796159604 +0000"
g() { git -C "$repo" -c user.name=zbench -c user.email=zbench@invalid "$@"; }
g init -q && g add -A && g commit -qm "zfs-linux $version" || exit 1
f=module/zfs/vdev_queue.c
for i in 1 2 3 4 5 6 7 8; do
	if [ "$i" -eq 5 ]; then
		sed -i -e 's/^int zfs_vdev_aggregation_limit = 1 << 20;/int zfs_vdev_aggregation_limit = 1 << 14;/' \
			-e 's/^int zfs_vdev_aggregation_limit_non_rotating = SPA_OLD_MAXBLOCKSIZE;/int zfs_vdev_aggregation_limit_non_rotating = 1 << 14;/' \
			"$repo/$f"
		msg="vdev_queue: aggregate at most 16 KiB (the planted regression)"
	else
		echo "/* zbench bisect test: harmless change $i */" >>"$repo/$f"
		msg="vdev_queue: harmless change $i"
	fi
	g commit -qam "$msg" || exit 1
done
planted=$(g rev-parse HEAD~3)
check "the history: 8 commits after the base, the 5th changes the defaults" \
	[ "$(g rev-list --count HEAD)" -eq 9 ] && g show "$planted" | grep -q '^+int zfs_vdev_aggregation_limit = 1 << 14;'

out=$tmp/out
args="--repo $repo --good HEAD~8 --bad HEAD --metric write_bw --threshold -20% -o $out"
start=$(date +%s)
# shellcheck disable=SC2086 # args holds no spaces (mktemp path)
nice -n 10 "$ZBENCH" bisect $args matrices/ab-aggregation.json >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
echo "  bisect took $(($(date +%s) - start)) s; its log:"
sed 's/^/    /' "$out/bisect.log" 2>/dev/null
check "zbench bisect exits 0 (status $rc)" [ "$rc" -eq 0 ]
check "it names the planted commit on stdout" [ "$(cat "$tmp/stdout")" = "$planted" ]
check "result.json: found, the planted commit" \
	[ "$(jq -r '"\(.status) \(.first_bad)"' "$out/result.json" 2>/dev/null)" = "found $planted" ]
check "3 tests (8 commits: log2 8), at most 4 builds (the good end and 3 midpoints)" \
	[ "$(jq -r .tests "$out/result.json")" -eq 3 -a "$(jq -r .builds "$out/result.json")" -le 4 ]
check "bisect.log has each test's verdict and the answer" \
	[ "$(grep -c 'test [0-9]*: [0-9a-f]* is \(good\|bad\): ' "$out/bisect.log")" -eq 3 ] &&
	grep -q "first bad commit: $planted" "$out/bisect.log"
check "the planted commit was tested and judged bad, the one before it good" \
	[ "$(jq -r --arg c "$planted" '.tested[$c]' "$out/result.json")" = bad -a \
	  "$(jq -r --arg c "$(g rev-parse HEAD~4)" '.tested[$c]' "$out/result.json")" = good ]
check "each test's run directory has its comparison" [ "$(ls "$out"/steps/*/compare.md | wc -l)" -eq 3 ]

# again: resumed from bisect.json, nothing left to test or build
# shellcheck disable=SC2086
"$ZBENCH" bisect $args matrices/ab-aggregation.json >"$tmp/stdout2" 2>"$tmp/stderr2"
check "a second invocation resumes: the same answer, no new test or build" \
	[ $? -eq 0 -a "$(cat "$tmp/stdout2")" = "$planted" -a "$(ls "$out/steps" | wc -l)" -eq 3 ] &&
	grep -q "resuming from" "$tmp/stderr2" && ! grep -q "build [0-9]" "$tmp/stderr2"

echo "bisect: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$tmp"; else echo "  kept: $tmp"; fi
[ "$failed" -eq 0 ]
