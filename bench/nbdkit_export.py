"""One nbdkit export for the host benches (bench/disk-models.sh, bench/filter-cost.sh): a sparse
1 GiB disk file TMP/TAG.img served on the unix socket TMP/TAG.sock by nbdkit's file plug-in with
64 threads (the queue depth a model can see), through the zbench-diskmodel filter SO when a
model is named. nbdkit's pid is written to TMP/TAG.pid for the scripts' exit traps.

Its CPU (cpu_us) comes from a cgroup of its own where the host has one to give (cgroup v1's
cpuacct.usage or v2's cpu.stat: nanoseconds or microseconds, the exited threads included),
else from /proc/PID/stat (a clock tick's resolution, 10 ms here: too coarse for a few hundred
requests). stop() ends nbdkit and removes its cgroup (zbench-bench-TMP's name-TAG); the scripts' exit
traps remove what a crash left."""
import os
import subprocess
import sys
import time

CGROUP_ROOTS = [("/sys/fs/cgroup/cpuacct", "cpuacct.usage", 1e-3),
                ("/sys/fs/cgroup/unified", "cpu.stat", None),
                ("/sys/fs/cgroup", "cpu.stat", None)]
_cgroups = {}  # pid: (directory, file, scale to us)


def _cgroup(tmp, tag, pid):
    for root, name, scale in CGROUP_ROOTS:
        if not os.path.exists(f"{root}/{name}") and not os.path.exists(f"{root}/cgroup.procs"):
            continue
        d = f"{root}/zbench-bench-{os.path.basename(tmp)}-{tag}"
        try:
            os.mkdir(d)
            with open(f"{d}/cgroup.procs", "w") as f:
                f.write(str(pid))
            if os.path.exists(f"{d}/{name}"):
                _cgroups[pid] = (d, name, scale)
                return
            os.rmdir(d)
        except OSError:
            try:
                os.rmdir(d)
            except OSError:
                pass


def cpu_us(p):
    """nbdkit's CPU so far (all its threads, the exited ones too), in us"""
    if p.pid in _cgroups:
        d, name, scale = _cgroups[p.pid]
        text = open(f"{d}/{name}").read()
        if scale:
            return int(text) * scale
        return float(dict(l.split() for l in text.splitlines())["usage_usec"])
    f = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1e6 / os.sysconf("SC_CLK_TCK")


def precise(p):
    """whether cpu_us(p) is finer than a clock tick"""
    return p.pid in _cgroups


def connection_cpu(tmp, p, sock):
    """nbdkit's CPU us for a connection that reads one 4k block: what a connection costs whatever
    its requests (nbdkit starts its 64 worker threads when a client connects and ends them when
    it leaves), to be left out of a run's CPU per request: over the few hundred requests of a
    2 s HDD or stick run it weighs like a request's whole cost. Two such connections, the
    second counted: the first is dearer (the threads' stacks are new; later connections reuse
    them), and the run it stands for comes after both."""
    def one():
        c0 = cpu_us(p)
        subprocess.run(["fio", "--name=conn", "--ioengine=nbd",
                        f"--uri=nbd+unix:///?socket={sock}", "--size=4k", "--rw=read", "--bs=4k",
                        "--output-format=json", f"--output={tmp}/fio-conn.json"],
                       stdout=subprocess.DEVNULL, check=True)
        return cpu_us(p) - c0
    one()
    return one()


def stop(p):
    p.terminate()
    p.wait()
    d = _cgroups.pop(p.pid, (None,))[0]
    if d:
        try:
            os.rmdir(d)
        except OSError:
            pass


def start(tmp, tag, so=None, model=None, args=(), no_flush=False):
    """no_flush (the plain export only): nbdkit's fua filter with fuamode=discard drops FLUSHes and
    FUA as the model's filter does (it answers them from the model, the host's disk is never
    synced), so a plain export does the same work as a modelled one, less the model"""
    img, sock = f"{tmp}/{tag}.img", f"{tmp}/{tag}.sock"
    with open(img, "wb") as f:
        f.truncate(1 << 30)
    log = open(f"{tmp}/{tag}.log", "w")
    filt = [f"--filter={so}"] if model else ["--filter=fua"] if no_flush else []
    params = [f"dm_model={model}", *args] if model else ["fuamode=discard"] if no_flush else []
    p = subprocess.Popen(["nbdkit", "--foreground", "--unix", sock, "--pidfile",
                          f"{tmp}/{tag}.nbdpid", "--threads", "64"] + filt +
                         ["file", f"file={img}"] + params, stdout=log, stderr=log)
    open(f"{tmp}/{tag}.pid", "w").write(str(p.pid))
    _cgroup(tmp, tag, p.pid)
    for _ in range(100):
        # the socket exists a moment before nbdkit accepts on it; the pidfile once it does
        if os.path.exists(f"{tmp}/{tag}.nbdpid"):
            return p, sock
        time.sleep(0.05)
    sys.exit(f"nbdkit for {model or 'the plain file'} did not start: "
             f"{open(f'{tmp}/{tag}.log').read()}")
