#!/bin/sh
# `zbench export` of a record with hostile latency bins (docs/security.md, "Run directories"):
# 160k bins once took 9 s (an insertion sort); bin counts near INT64_MAX overflowed a signed sum
# (negative counts in the output); a percentile key of 1e300 or -5 was cast out of range. The
# export must stay fast, saturate the sums and clamp the percentiles. Prints
# "export-bins: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/check.inc
ZBENCH=${ZBENCH:-$(pwd)/zbench}
FIX=tests/golden/export/fixture/rundir
t=$(mktemp -d /tmp/zbench-sec-export-bins.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$t"' EXIT
mkdir -p "$t/r" && cp "$FIX/manifest.json" "$t/r/"
# the first record with fio jobs, its read clat_ns given BINS, duplicated into two jobs
python3 - "$FIX/cells.jsonl" "$t/r/cells.jsonl" <<'PY'
import json, sys
src, dst = sys.argv[1:]
for line in open(src):
    r = json.loads(line)
    if r.get("fio", {}).get("jobs"):
        break
def hostile(fio):
    job = fio["jobs"][0]
    clat = job["read"].setdefault("clat_ns", {})
    bins = {str(160999 - i): 1 for i in range(160000)}  # descending: the worst order
    bins["500"] = 2**63 - 1  # summed over two jobs: past INT64_MAX
    clat["bins"] = bins
    clat["N"] = 160001
    clat["percentile"] = {"1e300": 1, "-5.0": 1, "50.000000": 1, "99.000000": 1}
    fio["jobs"] = [job, json.loads(json.dumps(job))]
hostile(r["fio"])
for ph in r.get("phase_results", []):
    if ph.get("fio", {}).get("jobs"):
        hostile(ph["fio"])
open(dst, "w").write(json.dumps(r) + "\n")
PY
/usr/bin/time -f %U -o "$t/cpu" timeout 60 "$ZBENCH" export "$t/r" -f fio -o "$t/out" >/dev/null 2>"$t/err"
rc=$?
cpu=$(cat "$t/cpu" 2>/dev/null || echo 99)
check "export of 2 x 160k bins exits 0" [ "$rc" -eq 0 ]
check "...in under 6 s of CPU (took $cpu s; load $(cut -d' ' -f1 /proc/loadavg))" [ "$(echo "$cpu < 6" | bc)" -eq 1 ]
out=$(find "$t/out" -name 'randread-*.json' | head -1)
check "...one fio JSON written" [ -n "$out" ]
check "...no bin count negative (the sum saturates)" \
	[ "$(jq '[.jobs[0].read.clat_ns.bins[] | select(. < 0)] | length' "$out" 2>/dev/null)" = 0 ]
check "...the saturated bin is INT64_MAX" grep -q '"500": *9223372036854775807' "$out"
check "...percentile 1e300 is clamped to the largest bin, -5 to the smallest" \
	[ "$(jq -r '.jobs[0].read.clat_ns.percentile | "\(.["1e300"]) \(.["-5.0"])"' "$out" 2>/dev/null)" = "160999 500" ]
echo "export-bins: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
