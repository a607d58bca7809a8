#!/bin/sh
# zbench export on the fixture run directory tests/golden/export/fixture/rundir (a real VM run of a
# converted two-phase job file, and cells whose results came from the engine with json+ bins,
# a repeat, a failed cell and hostile record text), read back by the tools the formats are for:
# fio's fio_jsonplus_clat2csv (--validate: its CSV holds exactly the bins) and fio2gnuplot from
# Debian's fio package, and fio-plot's importer rules (one job per file, "job options" with rw,
# bs, iodepth and numjobs, files named <rw>-<iodepth>-<numjobs>.json; fio-plot itself with
# FIO_PLOT=DIR, a checkout of it); Bencher's metric format and github-action-benchmark's custom
# JSON against their documented schemas (tests/schemas/). Prints "export: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
. tests/check.inc
ZBENCH=${ZBENCH:-./zbench}
case $ZBENCH in /*) ;; *) ZBENCH=$(pwd)/$ZBENCH ;; esac
RUN=$(pwd)/tests/golden/export/fixture/rundir
SCHEMAS=$(pwd)/tests/schemas
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check "export --format fio" sh -c "'$ZBENCH' export '$RUN' --format fio -o '$tmp/fio' >'$tmp/fio.out' 2>'$tmp/fio.err'"
check "6 results: 2 phases of the VM run, 4 engine cells; not the failed cell, not the skipped one" grep -qx "$tmp/fio: 6 results" "$tmp/fio.out"
check "the cell whose rw fio-plot cannot name is skipped with a warning" grep -q "cell 00000000000000f5: rw, iodepth or numjobs not as fio-plot names files: skipped" "$tmp/fio.err"
check "cells differing only in iodepth share a directory" test -f "$tmp/fio/002-00000000000000e1-r0/randread-4-1.json" -a -f "$tmp/fio/002-00000000000000e1-r0/randread-8-1.json"
check "a phase gets its own directory" test -f "$tmp/fio/000-a6c76c914efc4ba0-write-r0/write-1-1.json" -a -f "$tmp/fio/000-a6c76c914efc4ba0-read-r0/randread-1-1.json"
check "a repeat gets its own directory" test -f "$tmp/fio/001-00000000000000e0-r1/randrw-1-2.json"
check "the ../ cell id's file stays in its group's directory under -o" test -f "$tmp/fio/002-00000000000000e1-r0/randread-8-1.json"
check "nothing written outside -o" sh -c "[ -z \"\$(find '$tmp' -mindepth 1 ! -path '$tmp/fio*' ! -name fio.out ! -name fio.err)\" ]"

# fio-plot's importer, as its rules say (fio_plot/fiolib/jsonimport.py, jsonparsing.py)
fioplot() {
	python3 - "$tmp/fio" <<'PY'
import json, os, sys
n = 0
for d, _, files in os.walk(sys.argv[1]):
    for f in files:
        if not f.endswith(".json"):
            continue
        rw, depth, jobs = f.split(".")[0].split("-")
        doc = json.load(open(os.path.join(d, f)))
        assert doc["fio version"], f
        assert len(doc["jobs"]) == 1, (f, "jobs", len(doc["jobs"]))
        o = doc["jobs"][0]["job options"]
        assert o["rw"] == rw and int(o["iodepth"]) == int(depth) and int(o["numjobs"]) == int(jobs), (f, o)
        assert o["bs"], f
        mode = {"randread": "read", "read": "read", "randwrite": "write", "write": "write"}.get(rw, "read")
        j = doc["jobs"][0]
        for k in ("bw", "iops", "iops_stddev"):
            float(j[mode][k])
        float(j[mode]["lat_ns"]["mean"]); float(j[mode]["lat_ns"]["stddev"])
        for k in ("latency_ms", "latency_us", "latency_ns", "usr_cpu", "sys_cpu"):
            j[k]
        n += 1
assert n == 6, n
PY
}
check "every file passes fio-plot's importer rules" fioplot
# fio-plot itself, when a checkout is named (FIO_PLOT=DIR; it needs matplotlib, Pillow, rich)
if [ -n "${FIO_PLOT:-}" ]; then
	real_fioplot() {
		cd "$tmp" && PYTHONPATH=$FIO_PLOT timeout 300 /usr/bin/python3 -m fio_plot \
			-i "$tmp/fio/002-00000000000000e1-r0" -T export -l -r randread -d 4 8 -n 1 \
			>"$tmp/fioplot.out" 2>&1 && ls "$tmp"/export_*.png >/dev/null 2>&1
	}
	check "fio-plot (FIO_PLOT) draws the iodepth 4 and 8 files of one directory" real_fioplot
fi

# the threads of the randrw cell merged into one job: sums and bins of both
merged() {
	python3 - "$RUN/cells.jsonl" "$tmp/fio/001-00000000000000e0-r0/randrw-1-2.json" <<'PY'
import json, sys
rec = [json.loads(l) for l in open(sys.argv[1])][1]
src = rec["fio"]["jobs"]
out = json.load(open(sys.argv[2]))["jobs"][0]
assert len(src) == 2
for d in ("read", "write"):
    assert out[d]["total_ios"] == sum(j[d]["total_ios"] for j in src)
    assert abs(out[d]["iops"] - sum(j[d]["iops"] for j in src)) < 1e-6
    bins = {}
    for j in src:
        for k, v in j[d]["clat_ns"]["bins"].items():
            bins[k] = bins.get(k, 0) + v
    assert out[d]["clat_ns"]["bins"] == bins
    assert out[d]["clat_ns"]["N"] == sum(bins.values())
    mean = sum(j[d]["clat_ns"]["mean"] * j[d]["clat_ns"]["N"] for j in src) / out[d]["clat_ns"]["N"]
    assert abs(out[d]["clat_ns"]["mean"] - mean) < 1e-6 * mean
    # the p99 again from the merged bins: between the jobs' smallest and largest p99
    p = [j[d]["clat_ns"]["percentile"]["99.000000"] for j in src]
    assert min(p) <= out[d]["clat_ns"]["percentile"]["99.000000"] <= max(p), (p, out[d]["clat_ns"]["percentile"]["99.000000"])
PY
}
check "two threads merged: I/O and IOPS summed, bins summed, N and mean pooled, p99 from the bins" merged

# fio's own clat tool on the bins
clat() {
	cd "$tmp" && fio_jsonplus_clat2csv fio/001-00000000000000e0-r0/randrw-1-2.json clat.csv >/dev/null &&
		fio_jsonplus_clat2csv --validate fio/001-00000000000000e0-r0/randrw-1-2.json clat.csv | grep -q "clat_job0.csv validated" &&
		[ "$(wc -l <clat_job0.csv)" -gt 100 ]
}
check "fio_jsonplus_clat2csv converts the bins and --validate finds its CSV equal to them" clat
gnuplot_logs() {
	mkdir -p "$tmp/gp" && cd "$tmp/fio/002-00000000000000e1-r0" &&
		fio2gnuplot -i -g -k -d "$tmp/gp/" >"$tmp/gp.out" 2>&1 &&
		grep -q "2 files Selected with pattern '\*_iops.log'" "$tmp/gp.out" &&
		test -s "$tmp/gp/randread-4-1_iops-2Draw.png" &&
		grep -q "^avg=1[0-9][0-9]\." "$tmp/gp/result.global"
}
check "fio2gnuplot plots the IOPS logs (2 files, the mean about 150 IOPS as the samples say)" gnuplot_logs
check "a read-only job's logs have no write lines (as fio writes them)" sh -c "! grep -q ', 1, ' '$tmp/fio/002-00000000000000e1-r0/randread-4-1_iops.log'"

# csv: one row per cell, repeat, phase and metric
check "export --format csv" sh -c "'$ZBENCH' export '$RUN' -f csv -o '$tmp/csv' >/dev/null 2>&1"
csv() {
	python3 - "$tmp/csv/cells.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
keys = {(r["cell"], r["repeat"], r["phase"], r["metric"]) for r in rows}
assert len(keys) == len(rows), "one row per cell, repeat, phase and metric"
assert {r["cell"] for r in rows} == {"a6c76c914efc4ba0", "00000000000000e0", "00000000000000e1", "../../../tmp/x", "00000000000000f5"}
assert {r["repeat"] for r in rows if r["cell"] == "00000000000000e0"} == {"0", "1"}
assert {r["phase"] for r in rows if r["cell"] == "a6c76c914efc4ba0"} == {"write", "read"}
hostile = [r for r in rows if r["cell"] == "../../../tmp/x"][0]["summary"]
assert hostile.startswith("'="), hostile
assert "\x1b" not in open(sys.argv[1]).read()
for r in rows:
    float(r["value"])
PY
}
check "csv: unique rows, repeats and phases, a formula summary defused, no escape bytes" csv
check "export --format json" sh -c "'$ZBENCH' export '$RUN' -f json -o '$tmp/json' >/dev/null 2>&1 && jq -e '.rows | length == 7 and (map(.metrics.read_iops) | all(. != null))' '$tmp/json/cells.json' >/dev/null"
check "default -o is RUNDIR/export" sh -c "cp -r '$RUN' '$tmp/run' && '$ZBENCH' export '$tmp/run' -f csv >/dev/null 2>&1 && test -f '$tmp/run/export/cells.csv'"
# the dashboards' formats against their documented schemas (tests/schemas/, written from
# Bencher's and github-action-benchmark's docs), and a schema check that must fail
schema() { # SCHEMA FILE
	python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' "$@" 2>"$tmp/schema.err" || { sed "s/^/    /" "$tmp/schema.err" | tail -3; false; }
}
check "export --format bmf" sh -c "'$ZBENCH' export '$RUN' -f bmf -o '$tmp/bmf' >'$tmp/bmf.out' 2>/dev/null"
check "bmf.json is Bencher's metric format" schema "$SCHEMAS"/bmf.schema.json "$tmp/bmf/bmf.json"
check "bmf: a benchmark per cell and phase (6), each with its metrics, lower <= value <= upper" \
	jq -e 'length == 6 and (.[] | .write_iops // .read_iops | .lower_value <= .value and .value <= .upper_value)' "$tmp/bmf/bmf.json"
check "bmf: the repeated cell is one benchmark (its two repeats, alike, give one value)" \
	jq -e '[to_entries[] | select(.key | test("00000000000000e0")) | .value.read_iops | .lower_value == .upper_value] == [true]' "$tmp/bmf/bmf.json"
check "the BMF schema refuses a metric without a value (the check can fail)" \
	sh -c "echo '{\"b\": {\"m\": {\"lower_value\": 1}}}' > '$tmp/bad.json'; ! python3 -c 'import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[2])), json.load(open(sys.argv[1])))' '$SCHEMAS/bmf.schema.json' '$tmp/bad.json' 2>/dev/null"
check "export --format gab" sh -c "'$ZBENCH' export '$RUN' -f gab -o '$tmp/gab' >/dev/null 2>&1"
check "gab-bigger.json is github-action-benchmark's custom format" schema "$SCHEMAS"/gab-custom.schema.json "$tmp/gab/gab-bigger.json"
check "gab-smaller.json is github-action-benchmark's custom format" schema "$SCHEMAS"/gab-custom.schema.json "$tmp/gab/gab-smaller.json"
check "gab: IOPS and bandwidth bigger-is-better, latencies smaller-is-better" sh -c \
	"jq -e 'map(.name) | any(test(\" read_iops\$\")) and (any(test(\"lat\")) | not)' '$tmp/gab/gab-bigger.json' >/dev/null &&
	 jq -e 'map(.name) | any(test(\" write_lat_p99\$\")) and (any(test(\"_iops\$\")) | not)' '$tmp/gab/gab-smaller.json' >/dev/null"
check "gab: names are unique within a file (the action keys its charts by name)" sh -c \
	"jq -e 'map(.name) | length == (unique | length)' '$tmp/gab/gab-bigger.json' >/dev/null"
check "--format x is a usage error (2)" sh -c "'$ZBENCH' export '$RUN' -f x >/dev/null 2>&1; [ \$? -eq 2 ]"
echo "export: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
