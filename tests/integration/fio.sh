#!/bin/sh
# Integration test: "engine": "fio" runs Debian's fio in the guest, on a dataset and on a zvol;
# its JSON comes back as fio printed it and the record says which engine ran, with fio's
# version. Prints "fio: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-fio.XXXXXX)
. tests/check.inc
field() { jq -r --arg s "case=$1" "select(.summary == \$s) | $2" "$out/run/cells.jsonl"; }

./zbench run -o "$out/run" tests/integration/fio.json >/dev/null 2>"$out/log"
check "run exits 0 (2 ok cells)" [ $? -eq 0 ]
for c in dataset zvol; do
	check "$c: the record says engine fio with fio's version" \
		[ "$(field $c '(.engine.name == "fio") and (.engine.version | test("^fio-[0-9]"))')" = true ]
	check "$c: fio's own JSON (\"fio version\", fio's job options), read and write IOPS > 0" \
		[ "$(field $c '(.fio["fio version"] | startswith("fio-")) and (.fio.jobs[0]["job options"].fallocate == "none") and ([.fio.jobs[].read.iops] | add > 0) and ([.fio.jobs[].write.iops] | add > 0)')" = true ]
	check "$c: fio's status documents relayed as samples" \
		[ "$(field $c '[.samples[]? | select(.read_ios > 0)] | length >= 1')" = true ]
done
check "zvol: fio ran libaio on the zvol device" \
	[ "$(field zvol '(.fio.jobs[0]["job options"].ioengine == "libaio") and (.fio.jobs[0]["job options"].filename | startswith("/dev/zvol/"))')" = true ]
echo "fio: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; fi
[ "$failed" -eq 0 ]
