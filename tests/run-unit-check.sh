#!/bin/sh
# tests/run-unit.sh's verdicts can fail: fake unit binaries that pass, fail a check, crash, and
# pass their checks but exit non-zero as a sanitizer's report at exit makes them (a leak found by
# LeakSanitizer: exit 23 after the summary line). Prints "run-unit: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
. tests/check.inc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fake NAME SUMMARY RC: a binary that prints SUMMARY (none if empty) and exits RC
fake() {
	{
		echo '#!/bin/sh'
		[ -n "$2" ] && echo "echo '$1: $2'"
		echo "exit $3"
	} >"$tmp/$1" && chmod +x "$tmp/$1"
}
fake good '3 passed, 0 failed' 0
fake bad '2 passed, 1 failed' 1
fake crash '' 139
fake leaky '3 passed, 0 failed' 23

verdict() { tests/run-unit.sh "$@" >"$tmp/out" 2>&1; }
check "all passing: green" verdict "$tmp/good"
check "a failed check: red" sh -c '! tests/run-unit.sh "$1" >/dev/null 2>&1' - "$tmp/bad"
check "a crash without a summary: red" sh -c '! tests/run-unit.sh "$1" >/dev/null 2>&1' - "$tmp/crash"
check "a leak report after a clean summary: red" \
	sh -c '! tests/run-unit.sh "$1" "$2" >/dev/null 2>&1' - "$tmp/good" "$tmp/leaky"
tests/run-unit.sh "$tmp/good" "$tmp/leaky" >"$tmp/out" 2>&1
check "the leak is named and counted" \
	sh -c 'grep -q "leaky: exited 23 with no failed check" "$1" && grep -qx "unit: 6 passed, 1 failed" "$1"' - "$tmp/out"
echo "run-unit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
