#!/bin/sh
# make test's sanitize lane: the tests that boot no VM (unit, golden, fuzz-corpus, security),
# built with AddressSanitizer and UBSan, in TREE, a copy of this source tree (made anew here: the
# files git does not ignore, and a git repository of its own so that tests listing the tracked
# files, tests/reproducible.sh, see the same), so that its sanitized ./zbench and objects never
# replace the ones the integration tests beside it run. At the lowest CPU priority: it takes the
# CPU time their TCG guests leave. Lines are prefixed "sanitize: "; the exit status is the
# tests'.
#   tests/sanitize.sh TREE      (make test-sanitize: TREE is build/sanitize)
set -u
cd "$(dirname "$0")/.."
tree=${1:?usage: tests/sanitize.sh TREE}
case $tree in /*) ;; *) tree=$PWD/$tree ;; esac
. tests/lane.inc

# the copy, then the sanitized build and tests in it
sanitize() {
	rm -rf "$tree" && mkdir -p "$tree" &&
		tar --exclude=./build --exclude=./.git --exclude=./runs --exclude=./zbench \
			--exclude=./guest/zbench-agent --exclude=./guest/zbench-engine -cf - . |
		tar -C "$tree" -xf - &&
		git -C "$tree" init -q && git -C "$tree" add -A &&
		nice -n 19 make -C "$tree" --no-print-directory SANITIZE=address,undefined all &&
		nice -n 19 make -C "$tree" --no-print-directory SANITIZE=address,undefined test-host
}

t0=$(date +%s)
lane_run sanitize sanitize
echo "sanitize: the host tests under ASan and UBSan: $([ "$lane_rc" = 0 ] && echo ok || echo FAILED) in $(($(date +%s) - t0)) s"
exit "$lane_rc"
