#!/bin/sh
# The count metrics repeat (issue 29 item 1, docs/compare.md "Count metrics"): one size-bound,
# single-threaded cell (bench/count-cv.json: 4k random read/write, 4 MiB, numjobs 1,
# sync=always, primarycache=metadata, after a prefill) run REPEATS times (default the matrix's
# 10), then each count metric's mean and coefficient of variation over the repeats of the
# measured phase, and the same for write IOPS (a timing metric) beside them. The load average
# at the start and the end is printed too: timing moves with it, counts should not.
#   bench/count-cv.sh [RUNDIR]        (boots REPEATS VMs, one at a time; an existing
#                                      RUNDIR is analysed again, no VM)
#   NUMJOBS=4 bench/count-cv.sh       the same with 4 threads
#   TXG_TIMEOUT=120 bench/count-cv.sh  zfs_txg_timeout 120 s: no TXG is synced on a timer
#                                      while the phase runs (docs/compare.md: what moves)
set -u
cd "$(dirname "$0")/.."
dir=${1:-runs/count-cv-$(date -u +%Y%m%dT%H%M%S)}
m=$(mktemp /tmp/zbench-count-cv.XXXXXX.json)
trap 'rm -f "$m"' EXIT
jq --argjson j "${NUMJOBS:-1}" --argjson r "${REPEATS:-10}" --arg t "${TXG_TIMEOUT:-}" \
	'.repeats = $r | .base.workload.numjobs = $j
	 | if $t != "" then .base.module_params = { "zfs": { "zfs_txg_timeout": ($t | tonumber) } } else . end' \
	bench/count-cv.json >"$m"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
if [ ! -s "$dir/cells.jsonl" ]; then # an existing run directory is analysed again
	./zbench run -o "$dir" "$m" >/dev/null 2>"$dir.log" || { echo "run failed: $dir.log"; exit 1; }
fi
load1=$(cut -d' ' -f1-3 /proc/loadavg)
./zbench export -f csv -o "$dir/export" "$dir" >/dev/null || exit 1
# cell,index,side,repeat,phase,summary,metric,unit,value: the measured phase's rows
awk -F, 'NR > 1 && $5 == "measure" { n[$7]++; s[$7] += $NF; ss[$7] += $NF * $NF }
	END {
		for (k in n) {
			mean = s[k] / n[k]
			var = n[k] > 1 ? (ss[k] - n[k] * mean * mean) / (n[k] - 1) : 0
			if (var < 0) var = 0
			cv = "n/a"
			if (mean > 0) cv = sprintf("%.2f%%", 100 * sqrt(var) / mean)
			printf "| %s | %d | %.6g | %s |\n", k, n[k], mean, cv
		}
	}' "$dir/export/cells.csv" | sort -t'|' -k2,2 | { printf '| metric | n | mean | CV |\n|---|---|---|---|\n'; cat; }
echo "numjobs ${NUMJOBS:-1}, zfs_txg_timeout ${TXG_TIMEOUT:-5 (default)}; load average: start $load0, end $load1 ($(nproc) cores); run directory $dir"
