#!/usr/bin/env python3
"""The gate's error rates by resampling measured repeats (docs/compare.md, "Error rates").

Fresh A/A runs cost 4-24 VMs each (bench/error-rates.sh); this asks the same question of
repeats already measured: from the ok records of one cell in RUNDIR (e.g. bench/count-cv.sh's
10 repeats), each trial draws n pairs (A, B) of records at random (with replacement, A and B
independently) and writes them as an interleaved run of two sides; `zbench compare --adaptive`'s
rule is replayed by adding one pair at a time from 2 until the gates decide or MAX_PAIRS. A/A
trials use the records as they are; planted trials scale side B (timing: write IOPS and
bandwidth times 1 - PLANT, as a disk that much slower; count: disk bytes written times
1 + PLANT). It runs the real `zbench compare` on every step, so what is measured is zbench's
decision on this host's real noise; what it cannot see is drift between repeats (they are
drawn independently) and the interleaving.

    bench/gate-resample.py RUNDIR [TRIALS=40] [PLANT=0.10] [MAX_PAIRS=12] [SEED=29]
"""
import json, os, random, shutil, subprocess, sys, tempfile

rundir = sys.argv[1]
trials = int(sys.argv[2]) if len(sys.argv) > 2 else 40
plant = float(sys.argv[3]) if len(sys.argv) > 3 else 0.10
max_pairs = int(sys.argv[4]) if len(sys.argv) > 4 else 12
rng = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 29)
zbench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "zbench")
here = os.path.dirname(os.path.abspath(__file__))
manifest = json.load(open(os.path.join(here, "..", "tests/golden/compare-gate/run-fail/rundir/manifest.json")))
recs = [json.loads(l) for l in open(os.path.join(rundir, "cells.jsonl"))]
recs = [r for r in recs if r.get("outcome") == "ok"]
if not recs:
    sys.exit("no ok records in " + rundir)

ALPHA = float(os.environ.get("ALPHA", "0.05"))  # ALPHA=... : what each look is split from
GATES = {"timing": "write_iops < -5%", "count": "disk_write_bytes > 5%"}


def scaled(rec, kind, f):
    r = json.loads(json.dumps(rec))
    results = [r] + [p for p in r.get("phase_results", []) if p.get("measured", True)]
    for res in results:
        if kind == "timing":
            for j in res.get("fio", {}).get("jobs", []):
                for d in ("read", "write"):
                    if d in j:
                        j[d]["iops"] = j[d].get("iops", 0) * f
                        j[d]["bw"] = j[d].get("bw", 0) * f
        else:
            for disk in res.get("telemetry_summary", {}).get("disks", {}).values():
                if "counts" in disk:
                    disk["counts"]["w_bytes"] = int(disk["counts"]["w_bytes"] * f)
    return r


def decide(pairs, kind, tmp):
    d = os.path.join(tmp, "run")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    json.dump(manifest, open(os.path.join(d, "manifest.json"), "w"))
    with open(os.path.join(d, "cells.jsonl"), "w") as f:
        for i, (a, b) in enumerate(pairs):
            for side, r in (("A", a), ("B", b)):
                r = dict(r, side=side, repeat=i, attempt=1)
                f.write(json.dumps(r) + "\n")
    # the alpha `compare --adaptive --max-repeats MAX_PAIRS` tests each look at
    p = subprocess.run([zbench, "compare", "-o", os.path.join(tmp, "out"), "--alpha",
                        repr(ALPHA / (max_pairs - 1)), "--fail-if", GATES[kind], d],
                       capture_output=True, text=True)
    return p.returncode


def trial(kind, planted, tmp):
    pairs = []
    for n in range(2, max_pairs + 1):
        while len(pairs) < n:
            a, b = rng.choice(recs), rng.choice(recs)
            if planted:
                b = scaled(b, kind, 1 - plant if kind == "timing" else 1 + plant)
            pairs.append((a, b))
        rc = decide(pairs, kind, tmp)
        if rc != 4:
            return rc, n
    return 4, max_pairs


tmp = tempfile.mkdtemp(prefix="zbench-resample.")
try:
    print("| gate | trials | failed (A/A: false positives; planted: detected) | passed | undecided | mean pairs |")
    print("|---|---|---|---|---|---|")
    for kind in ("timing", "count"):
        for planted in (False, True):
            out = [trial(kind, planted, tmp) for _ in range(trials)]
            fails = sum(rc == 3 for rc, _ in out)
            print("| `%s`, %s | %d | %d | %d | %d | %.1f |" % (
                GATES[kind], "planted %+.0f%%" % (100 * (-plant if kind == "timing" else plant))
                if planted else "A/A", trials, fails, sum(rc == 0 for rc, _ in out),
                sum(rc == 4 for rc, _ in out), sum(n for _, n in out) / len(out)))
            sys.stdout.flush()
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("records: %d ok of one cell in %s; at most %d pairs a trial" % (len(recs), rundir, max_pairs))
