#!/bin/sh
# The disk-model filter on the host, no VM: nbdkit with build/zbench-diskmodel.so over a sparse
# file, fio's nbd engine against it. The completion waits (builder/diskmodel/nbdkit_filter.c: a
# deadline-ordered list whose first sleeps on the timer and releases everyone due; short waits
# spin) must never answer before the model's deadline: fio's smallest latency is at
# least the model's smallest service time, at queue depth 1 and 32, on the timer path (reads of
# 300 us) and the spin path (writes of 20 us). (An answer early by less than the host's own round
# trip, some 20 us, hides in it.) And dm_spin_us takes only 0 to 1000.
# Prints "diskmodel-filter: N passed, N failed"; skips (passes) without fio or nbdkit.
set -u
cd "$(dirname "$0")/.."
SO=${SO:-$PWD/build/zbench-diskmodel.so}
if ! command -v fio >/dev/null 2>&1 || ! command -v nbdkit >/dev/null 2>&1 ||
	! command -v jq >/dev/null 2>&1; then
	echo "diskmodel-filter: fio, nbdkit or jq not installed, skipped"
	echo "diskmodel-filter: 0 passed, 0 failed"
	exit 0
fi
. tests/check.inc
dir=$(mktemp -d /tmp/zbench-dmfilter.XXXXXX) || exit 1
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT INT TERM
truncate -s 1G "$dir/img"

# serve ARGS...: nbdkit with the filter in the background ($pid), ready when its pidfile is
serve() {
	rm -f "$dir/sock" "$dir/pid"
	nbdkit --foreground --unix "$dir/sock" --pidfile "$dir/pid" --threads 64 --filter="$SO" \
		file file="$dir/img" dm_model=sata-ssd "$@" >"$dir/log" 2>&1 &
	pid=$!
	i=0
	while [ ! -s "$dir/pid" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}

stop() {
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
}

# minlat RW QD: fio's smallest latency (submission to completion: lat, not clat, whose least
# is not always right with the nbd engine) in us over a second of 4k random I/O
minlat() {
	timeout 60 fio --name=f --ioengine=nbd --uri="nbd+unix:///?socket=$dir/sock" --size=1G \
		--runtime=1 --time_based --rw="$1" --bs=4k --iodepth="$2" --output-format=json \
		--output="$dir/fio.json" >/dev/null 2>&1 || {
		echo 0
		return
	}
	side=read
	[ "$1" = randwrite ] && side=write
	jq -r ".jobs[0].$side | if .total_ios > 0 then .lat_ns.min / 1000 | floor else 0 end" \
		"$dir/fio.json"
}

# a 4k read: cmd_us 10 + read_us 300 + 4096 B over 550 MB/s (7.4 us); a 4k write into the
# cache: cmd_us 10 + the link 7.4 + write_us 20 (under dm_spin_us 30: it spins)
serve dm_read_us=300 dm_write_us=20
for qd in 1 32; do
	l=$(minlat randread $qd)
	check "reads at QD$qd (timer path): no answer before the model's 317 us (fio's least: $l us)" \
		[ "$l" -ge 317 ]
	l=$(minlat randwrite $qd)
	check "writes at QD$qd (spin path): no answer before the model's 37 us (fio's least: $l us)" \
		[ "$l" -ge 37 ]
done
stop
serve dm_read_us=300 dm_spin_us=0
l=$(minlat randread 32)
check "dm_spin_us=0 (every wait on the timer list): reads no sooner than 317 us ($l us)" \
	[ "$l" -ge 317 ]
stop
# refused VALUE: nbdkit exits non-zero, naming the key and the value
refused() {
	serve dm_spin_us="$1"
	wait "$pid" 2>/dev/null
	rc=$?
	pid=
	[ "$rc" -ne 0 ] && grep -q "dm_spin_us: '$1'" "$dir/log"
}
for bad in abc -1 1001 30us; do
	check "dm_spin_us=$bad refused" refused "$bad"
done
echo "diskmodel-filter: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
