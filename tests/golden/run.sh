#!/bin/sh
# Golden-file tests. Each case is a folder tests/golden/<suite>/<case>/ holding its input files and
# `expected`: the exact stdout and stderr of the suite's command, run from inside that folder (so
# file names in messages are relative). To add a suite, add a line to suite_command below.
#
#   tests/golden/run.sh [SUITE/CASE...]     run every case, or only those named
#   UPDATE=1 tests/golden/run.sh ...        rewrite `expected` from the current output (review
#                                           the diff before committing)
#   ZBENCH=/path/to/zbench                  the binary under test (default: ./zbench)
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ZBENCH=${ZBENCH:-$root/zbench}
case "$ZBENCH" in /*) ;; *) ZBENCH=$(pwd)/$ZBENCH ;; esac
VM_GOLDEN=${VM_GOLDEN:-$root/build/tests/vm-golden}
case "$VM_GOLDEN" in /*) ;; *) VM_GOLDEN=$(pwd)/$VM_GOLDEN ;; esac

# The command each suite runs inside a case folder.
suite_command() {
	case "$1" in
	matrix | invalid-matrices) echo "\"$ZBENCH\" matrix check matrix.json" ;;
	ledger) echo "\"$ZBENCH\" matrix ledger ledger.json; echo \"exit \$?\"" ;;
	report) echo "\"$ZBENCH\" report rundir -o out --junit out/junit.xml --json; echo \"exit \$?\"; cat out/report.md out/junit.xml out/report.json; for p in out/report-cells/*.md; do echo \"== \$p\"; cat \"\$p\"; done; ls out/report-cells/*-plots; rm -rf out" ;;
	vm) echo "\"$VM_GOLDEN\" matrix.json" ;;
	compare) echo "\"$ZBENCH\" compare a b -o out; echo \"exit \$?\"; cat out/compare.md 2>/dev/null; rm -rf out" ;;
	compare-gate) echo "ZBENCH=\"$ZBENCH\" sh ./args.sh; echo \"exit \$?\"; cat out/junit.xml out/summary.md 2>/dev/null; rm -rf out" ;;
	export) echo "\"$ZBENCH\" export rundir -f csv -o out; echo \"exit \$?\"; cat out/cells.csv; rm -rf out" ;;
	compare-run) echo "\"$ZBENCH\" compare rundir -o out; echo \"exit \$?\"; cat out/compare.md 2>/dev/null; rm -rf out" ;;
	*) return 1 ;;
	esac
}

if [ ! -x "$ZBENCH" ]; then
	echo "golden: $ZBENCH is missing: build it first (make zbench)" >&2
	exit 2
fi

passed=0
failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

if [ $# -gt 0 ]; then
	cases=$(for c in "$@"; do echo "$here/${c%/}/"; done)
else
	cases=$(ls -d "$here"/*/*/ 2>/dev/null | sort)
fi

for dir in $cases; do
	dir=${dir%/}
	case_name=${dir#"$here"/}
	suite=${case_name%%/*}
	if ! cmd=$(suite_command "$suite"); then
		echo "FAIL $case_name: no command for suite '$suite' in $0"
		failed=$((failed + 1))
		continue
	fi
	(cd "$dir" && eval "$cmd") >"$out" 2>&1
	if [ "${UPDATE:-}" = 1 ]; then
		cp "$out" "$dir/expected"
	fi
	if [ -f "$dir/expected" ] && cmp -s "$out" "$dir/expected"; then
		passed=$((passed + 1))
	else
		echo "FAIL $case_name"
		if [ -f "$dir/expected" ]; then
			diff -u "$dir/expected" "$out" | sed 's/^/    /'
		else
			echo "    no expected file; output was:"
			sed 's/^/    /' "$out"
		fi
		failed=$((failed + 1))
	fi
done

echo "golden: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
