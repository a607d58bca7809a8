#!/usr/bin/env python3
"""Write the run directory of the sides-* golden cases (docs/compare.md "Sides that differ"):
one run of three interleaved sides of one image, as a matrix's "sides" makes it, 10 repeats
each: A and B the same configuration (an A/A pair), C the planted one (its disk's rpm 10% lower
in its records' config and side_set, its write IOPS 10% lower). Run from this folder; the output
is committed, so this only reruns when the cases change."""
import copy, json, os

here = os.path.dirname(os.path.abspath(__file__))
base = json.loads(open(os.path.join(here, "fail/a/cells.jsonl")).readline())
man = json.load(open(os.path.join(here, "fail/a/manifest.json")))
NOISE = [0.004, -0.006, 0.002, 0.007, -0.003, -0.005, 0.006, -0.002, 0.001, -0.004]
PLANT = {"disks[0].model_params.rpm": 6480}
SIDES = "ABC"


def record(rep, side, f):
    r = copy.deepcopy(base)
    r["repeat"] = rep
    r["side"] = side
    r["dir"] = "000-%s-r%d-%s" % (r["cell"], rep, side)
    for job in r["fio"]["jobs"]:
        job["write"]["iops"] = round(50 * f, 6)
        job["write"]["bw"] = round(200 * f, 6)
    r["config"]["disks"] = [{"name": "d0", "model": "hdd-7200", "model_params": {"rpm": 7200}}]
    if side == "C":
        r["side_set"] = PLANT
        r["config"]["disks"][0]["model_params"]["rpm"] = 6480
    return r


out = os.path.join(here, "sides-planted", "rundir")
os.makedirs(out, exist_ok=True)
image = man["image"]
man["images"] = [dict(image, side=s, **({"set": PLANT} if s == "C" else {})) for s in SIDES]
with open(os.path.join(out, "manifest.json"), "w") as f:
    json.dump(man, f, sort_keys=True, indent=1)
with open(os.path.join(out, "cells.jsonl"), "w") as f:
    for rep in range(10):
        order = SIDES[rep % 3:] + SIDES[:rep % 3]  # the order turns by one each repeat
        for s in order:
            n = NOISE[rep] if s != "B" else NOISE[::-1][rep]
            f.write(json.dumps(record(rep, s, (0.9 if s == "C" else 1.0) * (1 + n)),
                               sort_keys=True, separators=(",", ":")) + "\n")
cmd = ('"$ZBENCH" compare --sides %s --fail-if \'write_iops < -5%%\' --json --junit '
       'out/junit.xml --summary out/summary.md ../sides-planted/rundir -o out')
for name, sides, comment in (
        ("sides-planted", "AC", "side C (its disk 10% slower) against A, 10 pairs: the planted "
         "-10% is different (failed, exit 3)"),
        ("sides-aa", "AB", "side B (the same as A) against A in the same run, 10 pairs: within "
         "1%, the same (passed, exit 0)")):
    os.makedirs(os.path.join(here, name), exist_ok=True)
    with open(os.path.join(here, name, "args.sh"), "w") as f:
        f.write("# %s\n%s\n" % (comment, cmd % sides))
