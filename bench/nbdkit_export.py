"""One nbdkit export for the host benches (bench/disk-models.sh, bench/filter-cost.sh): a sparse
1 GiB disk file TMP/TAG.img served on the unix socket TMP/TAG.sock by nbdkit's file plug-in with
64 threads (the queue depth a model can see), through the zbench-diskmodel filter SO when a
model is named. nbdkit's pid is written to TMP/TAG.pid for the scripts' exit traps."""
import os
import subprocess
import sys
import time


def start(tmp, tag, so=None, model=None, args=()):
    img, sock = f"{tmp}/{tag}.img", f"{tmp}/{tag}.sock"
    with open(img, "wb") as f:
        f.truncate(1 << 30)
    log = open(f"{tmp}/{tag}.log", "w")
    filt = [f"--filter={so}"] if model else []
    params = [f"dm_model={model}", *args] if model else []
    p = subprocess.Popen(["nbdkit", "--foreground", "--unix", sock, "--pidfile",
                          f"{tmp}/{tag}.nbdpid", "--threads", "64"] + filt +
                         ["file", f"file={img}"] + params, stdout=log, stderr=log)
    open(f"{tmp}/{tag}.pid", "w").write(str(p.pid))
    for _ in range(100):
        # the socket exists a moment before nbdkit accepts on it; the pidfile once it does
        if os.path.exists(f"{tmp}/{tag}.nbdpid"):
            return p, sock
        time.sleep(0.05)
    sys.exit(f"nbdkit for {model or 'the plain file'} did not start: "
             f"{open(f'{tmp}/{tag}.log').read()}")
