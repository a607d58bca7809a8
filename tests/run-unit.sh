#!/bin/sh
# Run every unit-test binary given; print one summary line; fail if any failed.
# Each binary prints "<name>: N passed, N failed" itself. A binary that exits non-zero with no
# failed check counts as failed too: that is how a sanitizer's report at exit shows (LeakSanitizer
# exits 23 after the summary line). tests/run-unit-check.sh shows each verdict can fail.
passed=0 failed=0 broken=0
for t in "$@"; do
	out=$("$t" 2>&1); rc=$?
	printf '%s\n' "$out" | grep -v '^$' | sed 's/^/  /'
	line=$(printf '%s\n' "$out" | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -n1)
	p=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/')
	f=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	[ -n "$p" ] && passed=$((passed + p))
	[ -n "$f" ] && failed=$((failed + f))
	if [ $rc -ne 0 ] && [ -z "$line" ]; then
		broken=$((broken + 1)); echo "  $t: crashed or exited $rc"
	elif [ $rc -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
		broken=$((broken + 1)); echo "  $t: exited $rc with no failed check (a sanitizer's report?)"
	fi
done
echo "unit: $passed passed, $((failed + broken)) failed"
[ $failed -eq 0 ] && [ $broken -eq 0 ]
