#!/bin/bash
# Run the same jobs with fio and with zbench-engine (build/zbench-engine-host) in one run, on a
# tmpfs file and on a loop device, and print per job: both IOPS, the ratio (ours / fio), and the
# CPU time per I/O of each (the job processes' user + system time, from the usr_cpu/sys_cpu
# and runtime both report, over the I/Os done). Checks the two claims of docs/engine.md: psync 4k randread from tmpfs with 1 and 2
# jobs at ratio >= 1.0, and a device-bound sync write job within 5% of fio.
#
#   bench/engine-vs-fio.sh [-k FILTER]      RUNTIME=3 REPEAT=1 LOOPDIR=/var/tmp
#
# Each tool runs REPEAT times per job, alternating (ABBA), and the best run counts (CPU-bound jobs:
# interference only ever slows a run down); the device-bound sync job runs 4 * REPEAT times and
# the means count (a shared disk drifts both ways).
#
# Needs root (losetup), fio and jq. Exit status 1 if a check fails.
set -euo pipefail

cd "$(dirname "$0")/.."
ENGINE=${ENGINE:-build/zbench-engine-host}
RUNTIME=${RUNTIME:-3}
REPEAT=${REPEAT:-1}
LOOPDIR=${LOOPDIR:-/var/tmp}
FILTER=${1:-}
[ "$FILTER" = -k ] && FILTER=${2:-}

for t in fio jq losetup; do
	command -v "$t" >/dev/null || { echo "engine-vs-fio: '$t' is missing" >&2; exit 2; }
done
[ -x "$ENGINE" ] || { echo "engine-vs-fio: '$ENGINE' missing: make build/zbench-engine-host" >&2; exit 2; }

work=$(mktemp -d /dev/shm/zbench-bench.XXXXXX)
backing="$LOOPDIR/zbench-bench-loop.$$"
loopdev=""
cleanup() {
	[ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null || true
	rm -f "$backing"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The tmpfs file: laid out once, read by both tools (no layout inside the timed runs).
tmpfile="$work/data"
head -c 64M /dev/urandom >"$tmpfile"
# The loop device: a sparse 1 GiB file on a real disk, opened with direct I/O by the loop driver
# so synchronous writes reach the disk.
truncate -s 1G "$backing"
loopdev=$(losetup --find --show --direct-io=on "$backing")
# write the first 256 MiB so reads are not holes
dd if=/dev/urandom of="$loopdev" bs=1M count=256 oflag=direct status=none

# name | target | options common to both tools
JOBS=(
	"tmpfs psync randread 4k nj=1|tmpfs|--ioengine=psync --rw=randread --bs=4k --numjobs=1"
	"tmpfs psync randread 4k nj=2|tmpfs|--ioengine=psync --rw=randread --bs=4k --numjobs=2"
	"tmpfs psync randwrite 4k nj=1|tmpfs|--ioengine=psync --rw=randwrite --bs=4k --numjobs=1"
	"tmpfs psync randrw70 4k nj=2|tmpfs|--ioengine=psync --rw=randrw --rwmixread=70 --bs=4k --numjobs=2"
	"tmpfs libaio randread 4k qd16|tmpfs|--ioengine=libaio --iodepth=16 --rw=randread --bs=4k"
	"tmpfs io_uring randread 4k qd16|tmpfs|--ioengine=io_uring --iodepth=16 --rw=randread --bs=4k"
	"loop psync randread 4k direct|loop|--ioengine=psync --rw=randread --bs=4k --direct=1"
	"loop libaio randread 4k qd16 direct|loop|--ioengine=libaio --iodepth=16 --rw=randread --bs=4k --direct=1"
	"loop io_uring randread 4k qd16 direct|loop|--ioengine=io_uring --iodepth=16 --rw=randread --bs=4k --direct=1"
	"loop io_uring write 128k qd8 direct|loop|--ioengine=io_uring --iodepth=8 --rw=write --bs=128k --direct=1"
	"loop psync randwrite 4k sync=1 direct|loop|--ioengine=psync --rw=randwrite --bs=4k --direct=1 --sync=1"
)

# run TOOL OPTIONS...: prints "iops ios cpu_seconds". CPU is the workers' own (getrusage in each
# job process, as both tools report it): with group_reporting job_runtime is the summed runtime
# of the jobs and usr_cpu/sys_cpu are over it, so seconds = (usr + sys) / 100 * job_runtime.
run_one() {
	local tool=$1 out="$work/out.json"
	shift
	"$tool" --name=bench --output-format=json --output="$out" \
		--time_based --runtime="$RUNTIME" --group_reporting "$@" >/dev/null 2>"$work/err" || {
		echo "engine-vs-fio: $tool failed:" >&2
		cat "$work/err" >&2
		return 1
	}
	jq -r '.jobs[0] | "\(.read.iops + .write.iops) \(.read.total_ios +
		.write.total_ios) \((.usr_cpu + .sys_cpu) / 100 * .job_runtime / 1000)"' "$out"
}

# pick MODE LINES: "best" (highest IOPS: CPU-bound jobs, where interference only slows) or
# "mean" (device-bound jobs, where the device's speed drifts both ways)
pick() {
	local mode=$1
	shift
	printf '%s\n' "$@" | awk -v mode="$mode" '
		{ n++; i += $1; o += $2; c += $3; if ($1 > bi) { bi = $1; bo = $2; bc = $3 } }
		END { if (mode == "best") print bi, bo, bc; else print i / n, o / n, c / n }'
}

status=0
printf '%-40s %12s %12s %7s %11s %11s\n' job "fio IOPS" "zbench IOPS" ratio "fio us/IO" "zb us/IO"
printf '%-40s %12s %12s %7s %11s %11s\n' "" "" "" "zb/fio" "(CPU)" "(CPU)"
for j in "${JOBS[@]}"; do
	IFS='|' read -r name target opts <<<"$j"
	[ -n "$FILTER" ] && [[ "$name" != *"$FILTER"* ]] && continue
	if [ "$target" = tmpfs ]; then
		where=(--filename="$tmpfile" --size=64M)
	else
		where=(--filename="$loopdev" --size=256M)
	fi
	# alternate the tools, so drift of the host or the device hits both alike
	mode=best reps=$REPEAT fio_runs=() zb_runs=()
	case "$name" in *"sync=1"*) mode=mean reps=$((REPEAT * 4)) ;; esac
	for r in $(seq "$reps"); do
		# ABBA order: a device that speeds up or slows down over time biases neither tool
		for tool in fio "$ENGINE"; do
			[ $((r % 2)) = 0 ] && tool=$([ "$tool" = fio ] && echo "$ENGINE" || echo fio)
			# shellcheck disable=SC2086
			line=$(run_one "$tool" "${where[@]}" $opts)
			if [ "$tool" = fio ]; then fio_runs+=("$line"); else zb_runs+=("$line"); fi
		done
	done
	read -r fio_iops fio_ios fio_cpu <<<"$(pick $mode "${fio_runs[@]}")"
	read -r zb_iops zb_ios zb_cpu <<<"$(pick $mode "${zb_runs[@]}")"
	awk -v n="$name" -v fi="$fio_iops" -v fn="$fio_ios" -v fc="$fio_cpu" \
		-v zi="$zb_iops" -v zn="$zb_ios" -v zc="$zb_cpu" 'BEGIN {
		printf "%-40s %12.0f %12.0f %7.3f %11.3f %11.3f\n", n, fi, zi, (fi > 0 ? zi / fi : 0),
			(fn > 0 ? 1e6 * fc / fn : 0), (zn > 0 ? 1e6 * zc / zn : 0) }'
	ratio=$(awk -v a="$zb_iops" -v b="$fio_iops" 'BEGIN{print (b > 0 ? a / b : 0)}')
	case "$name" in
	"tmpfs psync randread 4k nj=1" | "tmpfs psync randread 4k nj=2")
		awk -v r="$ratio" 'BEGIN{exit !(r >= 1.0)}' ||
			{ echo "  CHECK FAILED: ratio < 1.0 (noisy host? try REPEAT=3)"; status=1; } ;;
	*"sync=1"*)
		awk -v r="$ratio" 'BEGIN{exit !(r >= 0.95 && r <= 1.05)}' ||
			{ echo "  CHECK FAILED: not within 5% of fio"; status=1; } ;;
	esac
done
exit $status
