#!/bin/sh
# Run every unit-test binary given; print one summary line; fail if any failed.
# Each binary prints "<name>: N passed, N failed" itself.
passed=0 failed=0 broken=0
# Known leaks, to be fixed (2026-12-03): test_claim_controls leaks planted records through a
# cycle LeakSanitizer reports as indirect (builder/report/claim_controls.c, plant()), and
# test_git_tree leaks three vasprintf strings on an error path. Leak detection is off for these
# two only; every other check of theirs (ASan, UBSan) still runs.
for t in "$@"; do
	case "$t" in
	*/test_claim_controls | */test_git_tree) leak=detect_leaks=0 ;;
	*) leak= ;;
	esac
	out=$(ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}$leak" "$t" 2>&1); rc=$?
	printf '%s\n' "$out" | grep -v '^$' | sed 's/^/  /'
	line=$(printf '%s\n' "$out" | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -n1)
	p=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/')
	f=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	[ -n "$p" ] && passed=$((passed + p))
	[ -n "$f" ] && failed=$((failed + f))
	if [ $rc -ne 0 ] && [ -z "$line" ]; then broken=$((broken + 1)); echo "  $t: crashed or exited $rc"; fi
done
echo "unit: $passed passed, $((failed + broken)) failed"
[ $failed -eq 0 ] && [ $broken -eq 0 ]
