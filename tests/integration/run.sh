#!/bin/sh
# Integration test: boot real VMs for matrices/quick.json (2 cells, ashift 9 vs 12) and check
# what came back. Builds or reuses the image (cached outside the repo; the first build takes
# about 10 minutes). Prints "integration: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
ZBENCH=./zbench
MATRIX=${ZBENCH_IT_MATRIX:-matrices/quick.json}
out=$(mktemp -d /tmp/zbench-it.XXXXXX)
passed=0 failed=0

check() { # check "what" command...
	what=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "  ok   $what"
	else failed=$((failed + 1)); echo "  FAIL $what"; fi
}

$ZBENCH image build images/debian12-zfs.json || { echo "integration: 0 passed, 1 failed"; exit 1; }

start=$(date +%s)
$ZBENCH run -o "$out/run" "$MATRIX"
rc=$?
echo "  run took $(( $(date +%s) - start ))s, exit status $rc"
cells="$out/run/cells.jsonl"

check "zbench run exits 0" [ "$rc" -eq 0 ]
check "manifest says complete" [ "$(jq -r .status "$out/run/manifest.json" 2>/dev/null)" = complete ]
check "one record per cell (2)" [ "$(wc -l < "$cells" 2>/dev/null)" -eq 2 ]
check "every record is ok" [ "$(jq -r .outcome "$cells" | sort -u)" = ok ]
check "read and write IOPS > 0 in every record" \
	[ "$(jq '(([.fio.jobs[].read.iops] | add) > 0) and (([.fio.jobs[].write.iops] | add) > 0)' "$cells" | sort -u)" = true ]
check "the guest's ashift equals the cell's" \
	[ "$(jq '(.config.pool.properties.ashift | tostring) == .effective.pool.ashift.value' "$cells" | sort -u)" = true ]
check "ashift 9 and 12 both ran" \
	[ "$(jq -r .effective.pool.ashift.value "$cells" | sort -n | tr '\n' ' ')" = "9 12 " ]
check "dataset properties reached the guest" \
	[ "$(jq -r '[.effective.target.recordsize.value, .effective.target.sync.value, .effective.target.primarycache.value] | join(",")' "$cells" | sort -u)" = "4096,always,none" ]
check "accel recorded (kvm or tcg)" \
	[ "$(jq -r '.accel | test("^(kvm|tcg)$")' "$cells" | sort -u)" = true ]
check "OpenZFS and kernel versions recorded" \
	[ "$(jq -r '(.effective.zfs_version | length > 0) and (.guest.kernel | length > 0)' "$cells" | sort -u)" = true ]
check "no guest stream hit its budget (no 'truncated')" \
	[ "$(jq 'has("truncated")' "$cells" | sort -u)" = false ]
check "console logs kept, disk images removed" \
	[ "$(ls "$out"/run/cells/*/console.log | wc -l)" -eq 2 -a -z "$(ls "$out"/run/cells/*/*.img 2>/dev/null)" ]
check "the run wrote its report (md, html, json with 2 cells)" \
	[ -f "$out/run/report.md" -a -f "$out/run/report.html" -a "$(jq '.cells | length' "$out/run/report.json" 2>/dev/null)" = 2 ]
check "a page per cell, with IOPS and telemetry over time" \
	[ "$(ls "$out"/run/report-cells/*.html | wc -l)" -eq 2 -a "$(ls "$out"/run/report-cells/*-plots/iops.svg "$out"/run/report-cells/*-plots/util.svg 2>/dev/null | wc -l)" -eq 4 ]

echo "integration: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  run directory kept: $out/run"; fi
[ "$failed" -eq 0 ]
