#!/usr/bin/env python3
"""Write the run directories of the tiers-* and count-* golden cases (docs/compare.md
"Verdicts"): one cell, 10 repeats a side (enough for the
permutation test at the alpha `compare --adaptive --max-repeats 12` tests each look at: 9 pairs), from the first record of fail/a. Run from this folder;
the output is committed, so this only reruns when the cases change."""
import copy, json, os, shutil

here = os.path.dirname(os.path.abspath(__file__))
base = json.loads(open(os.path.join(here, "fail/a/cells.jsonl")).readline())
# small deterministic noise, the same sequence on both sides' draws
NOISE = [0.004, -0.006, 0.002, 0.007, -0.003, -0.005, 0.006, -0.002, 0.001, -0.004]
WIDE = [0.25, -0.30, 0.10, -0.20, 0.30, -0.15, 0.20, -0.25, 0.15, -0.10]


def record(rep, read_f, write_f, counts, model=None):
    r = copy.deepcopy(base)
    r["repeat"] = rep
    r["dir"] = "000-%s-r%d" % (r["cell"], rep)
    for job in r["fio"]["jobs"]:
        job["read"]["iops"] = round(100 * read_f, 6)
        job["read"]["bw"] = round(400 * read_f, 6)
        job["read"]["io_bytes"] = 2048000
        job["write"]["iops"] = round(50 * write_f, 6)
        job["write"]["bw"] = round(200 * write_f, 6)
        job["write"]["io_bytes"] = 1024000
        job["write"]["total_ios"] = 250
    disks = {}
    for d in ("d0", "d1"):
        disks[d] = {"dev": "vd" + d[1], "counts": {k: v // 2 for k, v in counts.items()}}
    r["telemetry_summary"] = {
        "interval": 5.0, "disks": disks,
        "arc": {"hits": 1000, "misses": 100, "l2_hits": 0, "l2_misses": 0},
        "txg": {"committed": 3, "last": 12},
        "zil": {"commits": 500, "itxs": 500, "bytes": 2048000},
    }
    if model:
        r["disk_model"] = {d: dict(model, model="hdd-7200") for d in ("d0", "d1")}
    return r


def counts(flush_f=1.0, bytes_f=1.0):
    return {"r_ios": 1000, "w_ios": 1500 + int(500 * flush_f), "w_data_ios": 1500,
            "flushes": int(500 * flush_f), "r_bytes": 4096000,
            "w_bytes": int(6144000 * bytes_f)}


def write_case(name, args, comment, a_f, b_f, cnt_a, cnt_b, model_a=None, model_b=None):
    d = os.path.join(here, name)
    for side, fs, cnt, model in (("a", a_f, cnt_a, model_a), ("b", b_f, cnt_b, model_b)):
        os.makedirs(os.path.join(d, side), exist_ok=True)
        shutil.copy(os.path.join(here, "fail", side, "manifest.json"), os.path.join(d, side))
        with open(os.path.join(d, side, "cells.jsonl"), "w") as f:
            for rep in range(10):
                f.write(json.dumps(record(rep, fs[rep][0], fs[rep][1], cnt, model), sort_keys=True,
                                   separators=(",", ":")) + "\n")
    with open(os.path.join(d, "args.sh"), "w") as f:
        f.write("# %s\n%s\n" % (comment, args))


one = [(1 + n, 1 + n) for n in NOISE]
cmd = '"$ZBENCH" compare %s --json --junit out/junit.xml --summary out/summary.md a b -o out'
write_case("tiers-fail", cmd % "--fail-if 'read_iops > 10%' --fail-if 'write_iops < -5%'",
           "10 pairs, B's read IOPS +20%: the first gate is different (failed, exit 3); write IOPS "
           "within 1%: the second is the same (passed)",
           one, [(1.2 * (1 + n / 2), 1 + n / 2) for n in NOISE[::-1]], counts(), counts())
write_case("tiers-pass", cmd % "--fail-if 'read_iops < -5%' --fail-if 'disk_write_bytes > 5%'",
           "10 pairs, B within 1% of A and the disk bytes +0.1%: both gates pass (exit 0)",
           one, [(1.005 * (1 + n / 2), 1 + n / 2) for n in NOISE[::-1]], counts(),
           counts(bytes_f=1.001))
write_case("tiers-undecided", cmd % "--fail-if 'read_iops < -5%'",
           "10 pairs spread +-30%: the test can tell neither a fall beyond 5% nor its absence "
           "(undecided, exit 4)",
           one, [(1 + n, 1 + n) for n in WIDE], counts(), counts())
write_case("count-fail", cmd % "--fail-if 'disk_flushes > 5%' --fail-if 'disk_write_bytes > 5%'",
           "B flushes 20% more for the same bytes: the count gate fails with no statistics "
           "(exit 3); the bytes gate passes",
           one, one, counts(), counts(flush_f=1.2))

# a modelled HDD (builder/diskmodel/: the record's disk_model) under both disks: 500 engine I/Os a
# repeat (the writes of two jobs; their reads carry no total_ios)
hdd = {"seeks": 600, "flushes": 250, "rmw": 0, "seek_distance_sum": 600 << 24}
write_case("model-seeks", cmd % "--fail-if 'model_seeks_per_io > 5%' --fail-if 'model_flushes_per_io > 5%'",
           "on a modelled HDD B seeks 30% more per I/O (its allocation spreads), its timings "
           "the same within noise: the seek gate fails with no statistics (exit 3); the flush "
           "gate passes", one, one, counts(), counts(), hdd, dict(hdd, seeks=780))
write_case("model-same", cmd % "--fail-if 'model_seeks_per_io > 5%'",
           "on a modelled HDD B seeks as A does while its IOPS spread +-30%: the seek gate "
           "passes (exit 0), whatever the timing tier cannot yet say",
           one, [(1 + n, 1 + n) for n in WIDE], counts(), counts(), hdd, hdd)

# the same records, 3 repeats, as the report's and compare's view of counts (report/counts,
# compare/counts: the Counts table, count rows in Verdicts and Changes)
for dst, side in (("../report/counts/rundir", "a"), ("../compare/counts/a", "a"),
                  ("../compare/counts/b", "b")):
    out = os.path.join(here, dst)
    os.makedirs(out, exist_ok=True)
    shutil.copy(os.path.join(here, "model-seeks", side, "manifest.json"), out)
    lines = open(os.path.join(here, "model-seeks", side, "cells.jsonl")).readlines()[:3]
    with open(os.path.join(out, "cells.jsonl"), "w") as f:
        f.writelines(lines)
