#!/bin/sh
# A worker killed under a running engine (as the guest's OOM killer would) must not hang the
# parent: it stops the others and exits 1 naming the worker and the signal. Runs the host build
# against /dev/shm in fio mode and in both iozone modes; takes a few seconds.
#   bench/engine-kill-worker.sh [ENGINE]      (default build/zbench-engine-host)
set -u
ENGINE=${1:-build/zbench-engine-host}
dir=$(mktemp -d /dev/shm/zb-kill.XXXXXX) || exit 1
trap 'rm -rf "$dir"' EXIT INT TERM
fail=0

# run NTH NAME ARGS...: start the engine, kill -9 its NTH worker after 1 s, check the outcome.
run() {
	nth=$1; shift
	name=$1; shift
	"$ENGINE" --directory="$dir" --output="$dir/out.json" "$@" 2>"$dir/err" &
	pid=$!
	sleep 1
	victim=$(pgrep -P "$pid" | sed -n "${nth}p")
	if [ -z "$victim" ]; then
		echo "FAIL $name: no worker $nth under pid $pid"; fail=1; kill "$pid"; wait "$pid"
		return
	fi
	kill -9 "$victim"
	t0=$(date +%s)
	# the parent must be gone within 10 s (the fio job would run 60 s)
	while kill -0 "$pid" 2>/dev/null && [ $(( $(date +%s) - t0 )) -lt 10 ]; do sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		echo "FAIL $name: engine still running 10 s after worker $victim was killed"
		kill -9 "$pid"; wait "$pid"; fail=1; return
	fi
	wait "$pid"; rc=$?
	left=$(pgrep -P "$pid" | wc -l)
	if [ "$rc" -eq 1 ] && grep -q "pid $victim) was killed by signal 9" "$dir/err" &&
	   [ "$left" -eq 0 ]; then
		echo "ok   $name: exit $rc after $(( $(date +%s) - t0 )) s: $(cat "$dir/err")"
	else
		echo "FAIL $name: exit $rc, $left workers left, stderr: $(cat "$dir/err")"; fail=1
	fi
}

run 2 fio --name=kill --rw=randread --bs=4k --size=16m --numjobs=3 --time_based --runtime=60
# iozone throughput: random reads of 8 x 512M-in-4k-records would take far longer than 1 s
run 2 iozone-throughput --name=kill --mode=iozone --children=3 --size=256m --bs=4k --stonewall=0
run 1 iozone-auto --name=kill --mode=iozone --min_file_size=256m --max_file_size=256m \
	--min_record_size=4k --max_record_size=4k --all_record_sizes
exit $fail
