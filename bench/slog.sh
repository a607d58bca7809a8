#!/bin/sh
# Seed 000's SLOG finding on emulated disks: a pool of one throttled 5400 rpm HDD (disk model
# hdd-5400, its IOPS limit lowered from 60 to 30 here) with sync=always, 4k random writes, with
# and without an SSD-model SLOG (sata-ssd, above what TCG reaches: in effect unthrottled). The
# SLOG case is bound by the emulator's CPU, so on a busy 2-core host it slows down; the lower HDD
# limit keeps the comparison clear there (with 60 IOPS: 2.26x on an idle host, 1.33x on a loaded
# one). Prints the write IOPS of both and their ratio; "ok" when the SLOG gives at least 1.5x.
#   bench/slog.sh [RUNDIR]      ZBENCH_SLOG_RUNTIME=10s for a longer run (default 5s)
set -u
cd "$(dirname "$0")/.."
dir=${1:-runs/slog-$(date -u +%Y%m%dT%H%M%S)}
m=$(mktemp /tmp/zbench-slog.XXXXXX.json)
trap 'rm -f "$m"' EXIT
cat >"$m" <<JSON
{ "zbench": 1, "name": "slog",
  "description": "seed 000: 5400 rpm HDD, sync=always, with and without an SSD SLOG",
  "base": { "vm": { "memory": "1G", "cpus": 1 },
    "disks": [ { "name": "h0", "size": "512M", "model": "hdd-5400", "throttle": { "iops": 30 } },
               { "name": "s0", "size": "256M", "model": "sata-ssd" } ],
    "pool": { "vdevs": [ { "type": "stripe", "disks": ["h0"] } ], "properties": { "ashift": 12 } },
    "datasets": [ { "name": "bench", "properties": { "recordsize": "4k", "sync": "always", "primarycache": "none" } } ],
    "workload": { "target": "bench", "rw": "randwrite", "bs": "4k", "size": "16M", "numjobs": 2,
                  "runtime": "${ZBENCH_SLOG_RUNTIME:-5s}", "time_based": true, "group_reporting": true } },
  "cases": [ { "name": "hdd", "set": {} },
             { "name": "hdd-slog", "set": { "pool.log": [ { "type": "stripe", "disks": ["s0"] } ] } } ] }
JSON
./zbench run -o "$dir" "$m" >/dev/null 2>&1
jq -r '[.summary, .outcome, ([.fio.jobs[].write.iops] | add | . * 10 | round / 10),
        (.telemetry_summary.disks.h0.util_pct // 0 | round)] | "\(.[0]) \(.[1]) write_iops=\(.[2]) hdd_util=\(.[3])%"' \
	"$dir/cells.jsonl"
jq -rs 'map({key: .summary, value: ([.fio.jobs[].write.iops] | add)}) | from_entries
	| (.["case=hdd-slog"] / .["case=hdd"]) as $r
	| "ratio \($r * 100 | round / 100) \(if $r >= 1.5 then "ok" else "LOW" end)"' "$dir/cells.jsonl"
