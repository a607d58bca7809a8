#!/bin/sh
# The disk-model filter's own host CPU per request (issue 28 item 3: under 50 us), measured as the
# nbdkit process's CPU (all its threads', from a cgroup of its own, else /proc/PID/stat; read
# before and after fio, less a one-block connection's cost: bench/nbdkit_export.py) over the
# requests fio completed, with the filter and without it (the file plugin alone),
# the two interleaved per load so that a change of the host's load hits both alike. The
# difference is what the filter costs: the model, its lock, the sleep until each deadline and
# the wake-up from it. Loads: 4k random read and write at QD1 and QD32 (fio's nbd engine).
#   bench/filter-cost.sh    SECS=3 (per run)  REPS=2  MODELS="sata-ssd nvme"  LOADS="rr1 rr32 rw1 rw32"
# SO="A.so B.so" measures those builds of the filter instead, interleaved with each other and the
# plain run (an A/B of two builds in one run; their cost columns side by side).
# PERF=1 also records a call-graph profile (perf record -g, cpu-clock) of the filtered nbdkit
# under each load into $PERFDIR (default /tmp/zbench-filter-perf) and prints its top symbols.
# CPU figures are steadier than IOPS on a busy host, but not immune: say the load average (printed
# at the start and the end) beside them.
set -u
cd "$(dirname "$0")/.."
if [ -z "${SO:-}" ]; then make -s build/zbench-diskmodel.so >/dev/null || exit 1; fi
tmp=$(mktemp -d /tmp/zbench-fc.XXXXXX)
# nbdkit's pids, then the cgroups bench/nbdkit_export.py made for their CPU figures
trap 'for p in "$tmp"/*.pid; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null; done; sleep 0.2
	rmdir /sys/fs/cgroup/cpuacct/zbench-bench-"${tmp##*/}"-* /sys/fs/cgroup/unified/zbench-bench-"${tmp##*/}"-* \
		/sys/fs/cgroup/zbench-bench-"${tmp##*/}"-* 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
SO=${SO:-$PWD/build/zbench-diskmodel.so} TMP=$tmp SECS=${SECS:-3} REPS=${REPS:-2} \
	MODELS=${MODELS:-sata-ssd nvme} LOADS=${LOADS:-rr1 rr32 rw1 rw32} PERF=${PERF:-} \
	PERFDIR=${PERFDIR:-/tmp/zbench-filter-perf} python3 - <<'PY'
import json, os, subprocess, sys, time
sys.path.insert(0, "bench")
import nbdkit_export  # one nbdkit export, shared by the host benches

tmp, sos, secs = os.environ["TMP"], os.environ["SO"].split(), os.environ["SECS"]
perf, perfdir = os.environ["PERF"], os.environ["PERFDIR"]
LOADS = {
    "rr1": "--rw=randread --bs=4k --iodepth=1",
    "rr32": "--rw=randread --bs=4k --iodepth=32",
    "rw1": "--rw=randwrite --bs=4k --iodepth=1",
    "rw32": "--rw=randwrite --bs=4k --iodepth=32",
}
if perf:
    os.makedirs(perfdir, exist_ok=True)

def start(model, tag, so):
    return nbdkit_export.start(tmp, tag, so, model)

def run(model, key, rep, v=0, m=""):
    tag = f"{model or 'plain'}-{m}-{v}-{key}-{rep}"
    p, sock = start(model, tag, sos[v] if model else None)
    rec = None
    if perf and model:
        rec = subprocess.Popen(["perf", "record", "-q", "-g", "-e", "cpu-clock", "-p",
                                str(p.pid), "-o", f"{perfdir}/{tag}.data"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)
    conn = nbdkit_export.connection_cpu(tmp, p, sock)
    t0 = nbdkit_export.cpu_us(p)
    out = f"{tmp}/fio.json"
    subprocess.run(["fio", "--name=fc", "--ioengine=nbd", f"--uri=nbd+unix:///?socket={sock}",
                    "--size=1G", f"--runtime={secs}", "--time_based", "--output-format=json",
                    f"--output={out}"] + LOADS[key].split(), stdout=subprocess.DEVNULL,
                   check=True)
    t1 = nbdkit_export.cpu_us(p) - conn
    if rec:
        rec.send_signal(2)
        rec.wait()
    nbdkit_export.stop(p)
    j = json.load(open(out))["jobs"][0]
    side = j["read"] if "read" in LOADS[key] else j["write"]
    n = side["total_ios"] or 1
    return side["iops"], (t1 - t0) / n

head = "| model | load | plain: IOPS | CPU us/req |"
for v in range(len(sos)):
    tag = f" {os.path.basename(sos[v])}:" if len(sos) > 1 else " filtered:"
    head += f"{tag} IOPS | CPU us/req | filter's cost us/req |"
print(head + "\n|" + "---|" * (4 + 3 * len(sos)))
mean = lambda xs, i: sum(x[i] for x in xs) / len(xs)
for m in os.environ["MODELS"].split():
    for key in os.environ["LOADS"].split():
        pl, fl = [], [[] for _ in sos]
        for rep in range(int(os.environ["REPS"])):
            pl.append(run(None, key, rep, m=m))
            for v in range(len(sos)):
                fl[v].append(run(m, key, rep, v))
        row = f"| {m} | {key} | {mean(pl, 0):.0f} | {mean(pl, 1):.1f} |"
        for f in fl:
            row += f" {mean(f, 0):.0f} | {mean(f, 1):.1f} | {mean(f, 1) - mean(pl, 1):.1f} |"
        print(row, flush=True)
PY
rc=$?
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
