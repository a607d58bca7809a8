#!/bin/sh
# Runs integration test scripts (each boots its own VMs), JOBS of them at a time (default 1),
# printing each one's output in one piece when it ends, with its wall time and the load average,
# and at the end a table of them, longest first: the tests are most of a CI run's length, and the
# table says where it goes. Exits non-zero if any test failed (with JOBS > 1: failed again when
# run alone, see below); a failed test does not stop the rest.
#   JOBS=N tests/run-integration.sh TEST...
# With JOBS=2 on 2 cores most of a test's VM time is one guest CPU's emulation, so two tests side
# by side take little longer than one. Tests must then not assume they are alone: each works in
# its own mktemp folder and daemons of its own; the image and snapshot caches are shared under
# their locks. The tests are taken in the order given (put the long ones first).
JOBS=${JOBS:-1}
case $JOBS in '' | *[!0-9]* | 0) echo "run-integration: JOBS must be a positive number, not '$JOBS'" >&2; exit 2 ;; esac
work=$(mktemp -d /tmp/zbench-integration.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
printf '%s\n' "$@" >"$work/queue"
: >"$work/times"
start=$(date +%s)

# next: the first test left in the queue (empty when none), taken under the queue's lock (a
# file of its own: sed -i replaces the queue's inode)
next() {
	flock "$work/queue.lock" sh -c 't=$(head -n1 "$1"); sed -i 1d "$1"; printf "%s" "$t"' - "$work/queue"
}

# run_test TEST LOG: runs TEST with its output in LOG; sets r (ok or FAILED) and dt (seconds)
run_test() {
	t0=$(date +%s)
	if "$1" >"$2" 2>&1 </dev/null; then r=ok; else r=FAILED; fi
	dt=$(($(date +%s) - t0))
}

# show TEST LOG RESULT SECONDS: the test's output, whole, then its result line
show() {
	echo "== $1"
	cat "$2"
	echo "== $1: $3 in $4 s (load $(cut -d' ' -f1-3 /proc/loadavg))"
}

worker() { # N
	while t=$(next) && [ -n "$t" ]; do
		run_test "$t" "$work/log.$1"
		# one test's output at a time, then its line in the table
		{
			flock 9
			show "$t" "$work/log.$1" "$r" "$dt"
			echo "$dt $r $t" >>"$work/times"
		} 9>"$work/out.lock"
	done
}

i=1
while [ "$i" -le "$JOBS" ]; do
	worker "$i" &
	i=$((i + 1))
done
wait

# A test that failed beside another runs once more, alone: two tests at a time load the cores
# (a cold boot under TCG then takes longer), and one failure under load is reported, not hidden,
# but does not fail the suite when the test passes alone. A test that fails alone fails.
if [ "$JOBS" -gt 1 ]; then
	for t in $(awk '$2 == "FAILED" { print $3 }' "$work/times"); do
		echo "== $t: FAILED beside another test; once more, alone"
		run_test "$t" "$work/log.alone"
		[ "$r" = ok ] && r=ok-alone
		show "$t" "$work/log.alone" "$r" "$dt"
		awk -v t="$t" -v r="$r" -v dt="$dt" '$3 == t { $1 = $1 "+" dt; $2 = (r == "ok-alone" ? "FLAKY" : "FAILED") } { print }' \
			"$work/times" >"$work/times.new" && mv "$work/times.new" "$work/times"
	done
fi
echo "== integration: $(($(date +%s) - start)) s in all, $JOBS at a time; the longest first:"
sort -rn "$work/times" | awk '{ printf "   %7s s  %-6s %s\n", $1, $2, $3 }'
n=$(wc -l <"$work/times")
[ "$n" -eq "$#" ] || { echo "run-integration: $n of $# tests reported" >&2; exit 1; }
if grep -q ' FLAKY ' "$work/times"; then
	echo "run-integration: FLAKY: failed beside another test, passed alone (its first output is above)"
fi
! grep -q ' FAILED ' "$work/times"
