#!/bin/sh
# Every study file under matrices/ (the seeds' full and CI variants, quick.json, ...) must load
# and expand without booting anything: `zbench matrix check` on each. Prints
# "matrices: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
ZBENCH=${ZBENCH:-./zbench}
passed=0 failed=0
for f in matrices/*.json; do
	if out=$("$ZBENCH" matrix check "$f" 2>&1); then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $f"
		echo "$out" | sed 's/^/    /'
	fi
done
# Each seed has a full study and a CI-scale variant.
for n in 000 001 002 003 004; do
	for v in "" -ci; do
		if ! ls matrices/seed$n-*$v.json >/dev/null 2>&1; then
			failed=$((failed + 1))
			echo "FAIL no matrices/seed$n-*$v.json"
		fi
	done
done
# A study says what it is in one line; why it is built so is docs/seeds-notes.md's.
for f in matrices/*.json; do
	d=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("description", ""))' "$f")
	if [ "${#d}" -le 160 ] && [ "$(printf '%s' "$d" | wc -l)" -eq 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $f: its description is ${#d} characters; keep one line (at most 160) and put the reasoning in docs/seeds-notes.md"
	fi
done
echo "matrices: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
