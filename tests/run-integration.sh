#!/bin/sh
# Runs integration test scripts one after another (each boots its own VMs), printing each one's
# wall time and, at the end, a table of them: the tests are most of a CI run's length, and the
# table says where it goes. Exits non-zero if any test failed; a failed test does not stop the rest.
#   tests/run-integration.sh TEST...
rc=0
times=""
start=$(date +%s)
for t in "$@"; do
	echo "== $t"
	t0=$(date +%s)
	if "$t"; then r=ok; else r=FAILED; rc=1; fi
	dt=$(($(date +%s) - t0))
	echo "== $t: $r in ${dt} s (load $(cut -d' ' -f1-3 /proc/loadavg))"
	times="$times$dt $r $t
"
done
echo "== integration: $(($(date +%s) - start)) s in all; the longest first:"
printf '%s' "$times" | sort -rn | awk '{ printf "   %5d s  %-6s %s\n", $1, $2, $3 }'
exit $rc
