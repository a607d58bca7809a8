#!/bin/sh
# Repeatable disk-bound cells (issue 14 item 6, issue 28 item 7): the coefficient of variation of
# repeated cells against the measured window, from one run. Layouts of three MODEL disks
# (hdd-7200: a modelled 7200 rpm drive), 4k random writes with sync=always and 4k random reads of prefilled files (primarycache=metadata),
# REPEATS repeats each, every setting in one shuffled run so they see the same host:
#   before  a 1 s ramp and a 4 s measured window (what most matrices use)
#   txg     "window": "txg": the window rounded up to whole TXG intervals (5 s), a ramp of one
#   txg30   "window": "txg" and runtime 30s: six whole TXG intervals
# Prints per cell the mean IOPS, the CV over repeats and each repeat's disk use in the measured
# phase. On a modelled disk (a built-in MODEL, docs/disks.md) that is the share of the measured
# window the model was busy (the record's disk_model.d0.busy_ns over the seconds from the
# guest's limits request to its result); on a throttled one (a matrix's own model, or
# THROTTLE=N on top) the disks' mean IOPS that carried data (reads, and writes without the
# flushes' empty ones: w_data_iops) as a share of their limit (the record's throttle.iops). A
# cell is disk-bound when every repeat is at 0.9 or more (below, it waited on the emulator's
# CPU, and neither a model nor a throttle makes it repeat). Then per
# layout and workload the CV of each setting, and the load average at the start and the end
# (other VMs on the host's cores move TCG cells: say so beside any figure).
#   bench/cv.sh [RUNDIR]    REPEATS=3  LAYOUTS="stripe mirror"  RWS="randwrite randread"
#                           MODEL=hdd-7200 (a slower one, hdd-5400, asks less of the guest's CPU)
#                           CASES="before txg txg30" (the settings above to run)
#                           WRITE_CACHE=on|off (the drives' write cache; default: the model's)
#                           SIZE=8M (per job)  NUMJOBS=4  DISK_SIZE=256M (each of the three disks)
set -u
cd "$(dirname "$0")/.."
dir=${1:-runs/cv-$(date -u +%Y%m%dT%H%M%S)}
repeats=${REPEATS:-3}
layouts=${LAYOUTS:-stripe mirror}
rws=${RWS:-randwrite randread}
model=${MODEL:-hdd-7200}
size=${SIZE:-8M}
numjobs=${NUMJOBS:-4}
disk_size=${DISK_SIZE:-256M}
case ${WRITE_CACHE:-} in
'') wc= ;;
on) wc=', "write_cache": true' ;;
off) wc=', "write_cache": false' ;;
*) echo "bench/cv.sh: WRITE_CACHE is on or off, not '$WRITE_CACHE'" >&2; exit 2 ;;
esac
m=$(mktemp /tmp/zbench-cv.XXXXXX.json)
trap 'rm -f "$m"' EXIT
lv=$(for l in $layouts; do printf '[{"type":"%s","disks":["d0","d1","d2"]}],' "$l"; done)
rv=$(for r in $rws; do printf '"%s",' "$r"; done)
cases=${CASES:-before txg txg30}
cv=$(for c in $cases; do
	case $c in
	before) printf '{ "name": "before", "set": {} },' ;;
	txg) printf '{ "name": "txg", "set": { "workload.window": "txg" } },' ;;
	txg30) printf '{ "name": "txg30", "set": { "workload.window": "txg", "workload.runtime": "30s" } },' ;;
	*) echo "bench/cv.sh: unknown case '$c' (before, txg, txg30)" >&2; exit 2 ;;
	esac
done) || exit 2
cat >"$m" <<JSON
{ "zbench": 1, "name": "cv",
  "description": "bench/cv.sh: CV of repeated disk-bound cells against the measured window",
  "base": { "vm": { "memory": "512M", "cpus": 1 },
    "disks": [ { "name": "d0", "size": "$disk_size", "model": "$model"$wc },
               { "name": "d1", "size": "$disk_size", "model": "$model"$wc },
               { "name": "d2", "size": "$disk_size", "model": "$model"$wc } ],
    "pool": { "vdevs": [ { "type": "stripe", "disks": ["d0", "d1", "d2"] } ], "properties": { "ashift": 12 } },
    "datasets": [ { "name": "ds", "properties": { "recordsize": "4k", "compression": "off",
                    "primarycache": "metadata", "sync": "always" } } ],
    "workload": { "target": "ds", "rw": "randwrite", "bs": "4k", "size": "$size", "numjobs": $numjobs,
                  "group_reporting": true, "ramp_time": "1s", "runtime": "4s", "time_based": true,
                  "phases": [ { "name": "fill", "prefill": true }, { "name": "measure" } ] } },
  "axes": [ { "name": "layout", "path": "pool.vdevs", "values": [ ${lv%,} ] },
            { "name": "rw", "path": "workload.rw", "values": [ ${rv%,} ] } ],
  "cases": [ ${cv%,} ],
  "order": "shuffled",
  "repeats": $repeats }
JSON
load0=$(cut -d' ' -f1-3 /proc/loadavg)
./zbench run -o "$dir" "$m" >/dev/null 2>&1
load1=$(cut -d' ' -f1-3 /proc/loadavg)
jq -rs '
  map(select(.outcome == "ok")) | group_by(.summary) | map({
    cell: .[0].summary,
    iops: map([.fio.jobs[] | .read.iops + .write.iops] | add),
    busy: map(if .disk_model then
                ([.disk_model[] | .busy_ns] | add / length / 1e9) / (.phases.result - .phases.limits)
              else .config.disks[0].throttle.iops as $limit
                | [(.phase_results // [.])[] | select(.measured != false) | .telemetry_summary.disks[]
                   | (.r_iops + (.w_data_iops // .w_iops))] | (add / length / $limit) end) })
  | map(. + { mean: (.iops | add / length) })
  | map(. + { sd: ((.iops | map(. * .) | add / length) - .mean * .mean | if . < 0 then 0 else . end | sqrt) })
  | map(. + { cv: (if .mean > 0 then 100 * .sd / .mean else 0 end),
              bound: (.busy | all(. >= 0.9)) }) as $c
  | ($c[] | "\(.cell): n=\(.iops | length) mean=\(.mean * 10 | round / 10) cv=\(.cv * 10 | round / 10)% iops=\(.iops | map(. * 10 | round / 10)) disk_busy=\(.busy | map(. * 100 | round / 100))\(if .bound then " disk-bound" else "" end)"),
    ($c | map(. + { key: (.cell | sub("case=[a-z0-9]+,?"; "")), case: (.cell | capture("case=(?<c>[a-z0-9]+)").c) })
     | group_by(.key)[]
     | "\(.[0].key): " + (map("\(.case) cv \(.cv * 10 | round / 10)%\(if .bound then " (disk-bound)" else "" end)") | join(", ")))
  ' "$dir/cells.jsonl"
echo "disks: $model; load average: start $load0, end $load1 (2 cores); run directory $dir"
