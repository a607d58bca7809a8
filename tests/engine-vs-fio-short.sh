#!/bin/sh
# The short form of bench/engine-vs-fio.sh (issue 31's six jobs against fio, with floors that
# catch a 2x regression; see the script's header), then the failing case of its instruction
# budget: the fsync=4 job with dedupe_percentage=50, which regenerates each 16 KiB write buffer
# (2048 random words a write where the engine writes 4), must fail its budget.
# Prints "engine-vs-fio-short: N passed, N failed"; the script itself skips without fio or jq.
set -u
cd "$(dirname "$0")/.."
ENGINE=${ENGINE:-build/zbench-engine-host}
export ENGINE
passed=0 failed=0
out=$(mktemp) || exit 1
trap 'rm -f "$out"' EXIT

if bench/engine-vs-fio.sh short; then
	passed=$((passed + 1))
else
	echo "engine-vs-fio-short: the short form failed"
	failed=$((failed + 1))
fi
if ! command -v fio >/dev/null 2>&1 || ! command -v jq >/dev/null 2>&1 ||
	! command -v valgrind >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
	echo "engine-vs-fio-short: no fio, jq, valgrind or root: the failing budget case is skipped"
elif SHORT_ENGINE_OPTS=--dedupe_percentage=50 bench/engine-vs-fio.sh short -k fsync >"$out" 2>&1; then
	cat "$out"
	echo "engine-vs-fio-short: a buffer regenerated per write passed the instruction budget"
	failed=$((failed + 1))
elif grep -q '^instructions per I/O, psync randwrite 16k fsync=4 direct: [0-9]* (budget [0-9]*): FAIL$' "$out"; then
	echo "engine-vs-fio-short: failing case: $(grep '^instructions per I/O' "$out")"
	passed=$((passed + 1))
else
	cat "$out"
	echo "engine-vs-fio-short: the failing case failed for another reason"
	failed=$((failed + 1))
fi
echo "engine-vs-fio-short: $passed passed, $failed failed"
[ "$failed" = 0 ]
