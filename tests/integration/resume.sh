#!/bin/sh
# Integration test: stop zbench with SIGTERM (clean stop), resume, SIGKILL it in the middle of a
# cell, resume again, and check that the 4-cell run ends with 4 ok records, no duplicates, no
# QEMU process and no disk image left behind.
# Prints "resume: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-resume.XXXXXX)
run="$out/run"
. tests/check.inc
qemus() { pgrep -f "qemu-system.*$run/cells" | wc -l; }

# Wait until at least `1` record is there and a VM is running.
wait_busy() {
	for _ in $(seq 1 300); do
		n=$(cat "$run/cells.jsonl" 2>/dev/null | wc -l)
		[ "$n" -ge "$1" ] && [ "$(qemus)" -ge 1 ] && return 0
		sleep 0.5
	done
	return 1
}

# 1. SIGTERM (as Ctrl-C): a clean stop.
./zbench run -o "$run" tests/integration/resume.json >/dev/null 2>"$out/first.log" &
pid=$!
wait_busy 1
sleep 2
kill -TERM "$pid"
wait "$pid"
rc=$?
check "SIGTERM: exit status 130" [ "$rc" -eq 130 ]
check "SIGTERM: manifest says interrupted" [ "$(jq -r .status "$run/manifest.json")" = interrupted ]
check "SIGTERM: the running VM was ended" [ "$(qemus)" -eq 0 ]
check "SIGTERM: its disks were removed" [ -z "$(ls "$run"/cells/*/*.img 2>/dev/null)" ]
check "SIGTERM: the interrupted cell left no record" [ "$(jq -r .outcome "$run/cells.jsonl" | sort -u)" = ok ]
after_term=$(wc -l < "$run/cells.jsonl")

# 2. resume, then SIGKILL in the middle of a cell: nothing can clean up.
./zbench run --resume "$run" >/dev/null 2>"$out/second.log" &
pid=$!
wait_busy "$((after_term + 1))"
sleep 3
kill -9 "$pid"
wait "$pid" 2>/dev/null
before=$(wc -l < "$run/cells.jsonl")
check "killed mid-run: 2 or 3 records before the last resume" [ "$before" -ge 2 -a "$before" -le 3 ]
check "the killed run left a QEMU process behind" [ "$(qemus)" -ge 1 ]

# 3. resume to the end.
./zbench run --resume "$run" >/dev/null 2>"$out/resume.log"
rc=$?
cat "$out/resume.log" | sed 's/^/    /'
check "resume exits 0" [ "$rc" -eq 0 ]
check "4 records after resume" [ "$(wc -l < "$run/cells.jsonl")" -eq 4 ]
check "all ok" [ "$(jq -r .outcome "$run/cells.jsonl" | sort -u)" = ok ]
check "no duplicate cells" [ "$(jq -r .cell "$run/cells.jsonl" | sort -u | wc -l)" -eq 4 ]
check "every line is a whole record" [ "$(jq -c . "$run/cells.jsonl" 2>/dev/null | wc -l)" -eq 4 ]
check "no QEMU process left" [ "$(qemus)" -eq 0 ]
check "no disk image left" [ -z "$(ls "$run"/cells/*/*.img 2>/dev/null)" ]
check "manifest: complete, resumed twice" \
	[ "$(jq -r '[.status, (.resumed | length)] | join(",")' "$run/manifest.json")" = "complete,2" ]

echo "resume: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; fi
[ "$failed" -eq 0 ]
