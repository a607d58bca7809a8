#!/bin/sh
# Integration test: SIGKILL zbench in the middle of a 4-cell matrix, resume, and check that the
# run ends with 4 ok records, no duplicates, no QEMU process and no disk image left behind.
# Prints "resume: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-resume.XXXXXX)
run="$out/run"
passed=0 failed=0
check() {
	what=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "  ok   $what"
	else failed=$((failed + 1)); echo "  FAIL $what"; fi
}
qemus() { pgrep -f "qemu-system.*$run/cells" | wc -l; }

./zbench run -o "$run" tests/integration/resume.json >/dev/null 2>"$out/first.log" &
pid=$!
# Wait until one cell is recorded and the second one's VM is running, then kill -9.
for _ in $(seq 1 300); do
	n=$(cat "$run/cells.jsonl" 2>/dev/null | wc -l)
	[ "$n" -ge 1 ] && [ "$(qemus)" -ge 1 ] && break
	sleep 0.5
done
sleep 3
kill -9 "$pid"
wait "$pid" 2>/dev/null
before=$(wc -l < "$run/cells.jsonl")
check "killed mid-run: 1 to 3 records before resume" [ "$before" -ge 1 -a "$before" -le 3 ]
check "the killed run left a QEMU process behind" [ "$(qemus)" -ge 1 ]

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
check "manifest: complete, resumed once" \
	[ "$(jq -r '[.status, (.resumed | length)] | join(",")' "$run/manifest.json")" = "complete,1" ]

echo "resume: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; fi
[ "$failed" -eq 0 ]
