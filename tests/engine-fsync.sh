#!/bin/sh
# fsync=N / fdatasync=N / end_fsync of zbench-engine (build/zbench-engine-host) against fio on
# the host, size-bound 4k random writes to a file in $FSYNC_DIR (default /var/tmp):
#  - counts from each tool's JSON: write total_ios, sync total_ios (fio counts fsyncs there,
#    not fdatasyncs) and sync lat_ns N (every sync); with strace, the fsync and fdatasync system
#    calls too (end_fsync's is a call outside the statistics; not for io_uring, where fio
#    syncs through the ring);
#  - at iodepth 1 (psync, libaio, io_uring) both must agree exactly;
#  - at iodepth 4 and 64 fio 3.33's count depends on completion timing (it re-arms a sync when a
#    write COMPLETES after the last sync: libaio 193 and io_uring 257-318 for 256 writes at depth
#    64 on this host), so ours must be fio's rule, one sync after every N issued writes that
#    another I/O follows: 255 for N=1, 63 for N=4; fio's figure is printed.
# Prints "engine-fsync: N passed, N failed"; skips (passes) without fio.
set -u
cd "$(dirname "$0")/.."
ENGINE=${ENGINE:-build/zbench-engine-host}
FIO=${FIO:-fio}
if ! command -v "$FIO" >/dev/null 2>&1 || ! command -v jq >/dev/null 2>&1; then
	echo "engine-fsync: fio or jq not installed, skipped"
	echo "engine-fsync: 0 passed, 0 failed"
	exit 0
fi
dir=$(mktemp -d "${FSYNC_DIR:-/var/tmp}/engine-fsync.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
passed=0 failed=0
STRACE=
command -v strace >/dev/null 2>&1 && STRACE=strace

# counts TOOL ARGS...: "writes fsyncs(json) syncs(json N) fsync-calls fdatasync-calls"
counts() {
	tool=$1
	shift
	rm -f "$dir/f"
	if [ -n "$STRACE" ]; then
		$STRACE -f -c -e trace=fsync,fdatasync -o "$dir/st" "$tool" --name=j --filename="$dir/f" \
			--bs=4k --rw=randwrite --size=1M --output-format=json "$@" >"$dir/o.json" 2>/dev/null
	else
		"$tool" --name=j --filename="$dir/f" --bs=4k --rw=randwrite --size=1M \
			--output-format=json "$@" >"$dir/o.json" 2>/dev/null
		: >"$dir/st"
	fi
	j=$(jq -r '.jobs[0] | "\(.write.total_ios) \(.sync.total_ios) \(.sync.lat_ns.N // 0)"' \
		"$dir/o.json" 2>/dev/null) || j="error"
	fs=$(awk '$NF == "fsync" { print $4 }' "$dir/st")
	fds=$(awk '$NF == "fdatasync" { print $4 }' "$dir/st")
	echo "$j ${fs:-0} ${fds:-0}"
}

check() {
	if [ "$2" = "$3" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "  FAIL $1: ours '$2', want '$3'"
	fi
}

for eng in psync libaio io_uring; do
	for sy in fsync=1 fsync=4 fdatasync=1 "fsync=8 --end_fsync=1"; do
		# shellcheck disable=SC2086
		ours=$(counts "$ENGINE" --ioengine=$eng --iodepth=1 --$sy)
		# shellcheck disable=SC2086
		theirs=$(counts "$FIO" --ioengine=$eng --iodepth=1 --$sy)
		if [ $eng = io_uring ]; then # fio syncs through the ring (IORING_OP_FSYNC): no calls
			ours=$(echo "$ours" | cut -d' ' -f1-3)
			theirs=$(echo "$theirs" | cut -d' ' -f1-3)
		fi
		echo "$eng iodepth=1 $sy: ours $ours, fio $theirs (writes fsyncs syncs fsync() fdatasync())"
		check "$eng iodepth=1 $sy" "$ours" "$theirs"
	done
	[ $eng = psync ] && continue
	for d in 4 64; do
		for sy in fsync=1 fsync=4 fdatasync=1; do
			n=${sy#*=}
			want=$((255 / n))
			case $sy in
			fsync*) want="256 $want $want" ;;
			*) want="256 0 $want" ;;
			esac
			ours=$(counts "$ENGINE" --ioengine=$eng --iodepth=$d --$sy | cut -d' ' -f1-3)
			theirs=$(counts "$FIO" --ioengine=$eng --iodepth=$d --$sy | cut -d' ' -f1-3)
			echo "$eng iodepth=$d $sy: ours $ours, fio $theirs (writes fsyncs syncs)"
			check "$eng iodepth=$d $sy" "$ours" "$want"
		done
	done
done
echo "engine-fsync: $passed passed, $failed failed"
[ $failed -eq 0 ]
