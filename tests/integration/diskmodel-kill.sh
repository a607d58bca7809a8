#!/bin/sh
# Integration test: the disk-model server (nbdkit) of a modelled disk dies mid-cell. The cell
# must end host-error with the server's log tail, its VM stopped, and the next cell must run; no
# nbdkit, QEMU, disk image or counters file may be left, after that run and after a zbench
# killed with SIGKILL mid-cell and resumed (the resume reaper).
# Prints "diskmodel-kill: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-dmkill.XXXXXX)
run="$out/run"
. tests/check.inc
servers() { pgrep -f "nbdkit.*$1/cells" | wc -l; }
qemus() { pgrep -f "qemu-system.*$1/cells" | wc -l; }
leftovers() { ls "$1"/cells/*/*.img "$1"/cells/*/*.dmstats 2>/dev/null; }
field() { # field CASE JQ-EXPR
	jq -r --arg s "case=$1" "select(.summary == \$s) | $2" "$run/cells.jsonl"
}
# wait_busy DIR: until a cell of DIR has its disk server and its VM up (then its guest boots
# and sets up on the modelled disk: mid-cell); 0, or 1 after 150 s
wait_busy() {
	for _ in $(seq 1 300); do
		if [ "$(servers "$1")" -ge 1 ] && [ "$(qemus "$1")" -ge 1 ] &&
			[ -n "$(ls "$1"/cells/*/*.dmstats 2>/dev/null)" ]; then
			return 0
		fi
		sleep 0.5
	done
	return 1
}

# 0. a server that cannot start (a filter that does not exist): each cell ends host-error with
# nbdkit's own words, before any VM boots, and the run goes on to the next
run0="$out/run0"
ZBENCH_DISKMODEL=/nonexistent/zbench-diskmodel.so ./zbench run -o "$run0" \
	tests/integration/diskmodel-kill.json >/dev/null 2>"$out/run0.log"
rc=$?
check "no server: zbench run exits 1 (cells failed), not 2" [ "$rc" -eq 1 ] || sed 's/^/    /' "$out/run0.log"
check "no server: both cells host-error" \
	[ "$(jq -r .outcome "$run0/cells.jsonl" | sort | uniq -c | awk '{print $1, $2}')" = "2 host-error" ]
check "no server: the detail has nbdkit's log tail (the missing filter)" \
	[ "$(jq -r 'select(.index == 0) | .detail | test("starting the disk models: disk .d0.*nbdkit exited before serving.*nonexistent")' "$run0/cells.jsonl")" = true ]
echo "    detail: $(jq -r 'select(.index == 0) | .detail' "$run0/cells.jsonl" | cut -c1-220)"
check "no server: no VM was started" [ -z "$(ls "$run0"/cells/*/qemu.cmdline 2>/dev/null)" ]
check "no server: nothing left" [ "$(servers "$run0")" -eq 0 -a -z "$(leftovers "$run0")" ]

# 1. kill the first cell's nbdkit while its workload runs
./zbench run -o "$run" tests/integration/diskmodel-kill.json >/dev/null 2>"$out/run.log" &
pid=$!
wait_busy "$run"
sleep 3
pkill -KILL -f "nbdkit.*$run/cells/000-"
wait "$pid"
rc=$?
check "zbench run exits 1 (a cell failed), not an error" [ "$rc" -eq 1 ] || sed 's/^/    /' "$out/run.log"
check "two records" [ "$(wc -l < "$run/cells.jsonl")" -eq 2 ]
check "killed: host-error" [ "$(field killed .outcome)" = host-error ]
check "killed: the detail names the disk, the signal and nbdkit's log" \
	[ "$(field killed '.detail | test("disk .d0.*nbdkit.*signal 9.*log")')" = true ]
echo "    detail: $(field killed .detail | cut -c1-200)"
check "killed: its VM was stopped at once (well before its boot deadline)" \
	[ "$(field killed '.wall_seconds < 50')" = true ]
check "the next cell ran ok" [ "$(field after .outcome)" = ok ]
check "no nbdkit left" [ "$(servers "$run")" -eq 0 ]
check "no QEMU left" [ "$(qemus "$run")" -eq 0 ]
check "no disk image or counters file left" [ -z "$(leftovers "$run")" ]

# 2. SIGKILL zbench mid-cell: the QEMU it leaves (its own process group) keeps its disk's nbdkit
# (which exits on its parent's death only once its connection closes); the resume reaps both,
# removes the files and runs the cells
run2="$out/run2"
./zbench run -o "$run2" tests/integration/diskmodel-kill.json >/dev/null 2>"$out/run2.log" &
pid=$!
wait_busy "$run2"
sleep 2
kill -9 "$pid"
wait "$pid" 2>/dev/null
sleep 1
check "SIGKILL: an nbdkit is left only beside its QEMU" \
	[ "$(servers "$run2")" -eq 0 -o "$(qemus "$run2")" -ge 1 ]
./zbench run --resume "$run2" >/dev/null 2>"$out/resume.log"
rc=$?
check "resume exits 0" [ "$rc" -eq 0 ] || sed 's/^/    /' "$out/resume.log"
check "resume: two ok records" [ "$(jq -r .outcome "$run2/cells.jsonl" | grep -c '^ok$')" -eq 2 ]
check "resume: no nbdkit or QEMU left" [ "$(servers "$run2")" -eq 0 -a "$(qemus "$run2")" -eq 0 ]
check "resume: no disk image or counters file left" [ -z "$(leftovers "$run2")" ]

echo "diskmodel-kill: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  run directory kept: $out"; fi
[ "$failed" -eq 0 ]
