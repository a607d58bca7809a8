#!/bin/sh
# What `zbench matrix check` costs on hostile matrices of at most 4 MiB (issue 12, finding 9;
# docs/matrix.md, "Limits"): time and peak memory of each, from /usr/bin/time -v. The goal is
# under 2 s and 256 MB for any file up to 4 MiB. A timing, not a test: tests/security/matrix.sh
# checks the refusals.
#
#   bench/matrix-load.sh                 the ./zbench of this tree
#   ZBENCH=/other/zbench bench/matrix-load.sh   another build (before/after)
#   TIMEOUT=300                          seconds before a case is cut off (default 300)
#
# Cases (each file is at most 4 MiB):
#   string-10k-cells   a 380 KB string in the base, two 100-value axes: 10^4 cells
#   disks-20k          20000 disks in one stripe (pairwise disk checks)
#   disks-20k-cells    2000 disks, and 2 axes of 50 values: 2500 cells of 2000 disks
#   rejected-deep-keys a 4 MB array of zeros under two 250-byte keys (a position per value)
#   ranking-10k        an axis of 10^4 values and a ranking claim that lists them all
#   references-50k     50000 published values matched against a 10^4-value axis
#   axes-1-value       20000 disks, an axis of one value on each one's size (pairwise overlap
#                      checks, 20000 path_set and a long summary per cell)
#   cell-over-1mib     one cell whose config is 1.1 MB (larger than a job frame)
#   valid-10k-cells    10^4 ordinary cells (the floor)
set -u
cd "$(dirname "$0")/.." || exit 1
ZBENCH=${ZBENCH:-./zbench}
TIMEOUT=${TIMEOUT:-300}
t=$(mktemp -d /tmp/zbench-matrix-load.XXXXXX)
trap 'rm -rf "$t"' EXIT

python3 - "$t" <<'EOF'
import json, sys
t = sys.argv[1]
quick = json.load(open("matrices/quick.json"))

def base():
    return json.loads(json.dumps(quick))

def write(name, m):
    s = json.dumps(m, separators=(",", ":"))
    assert len(s) <= 4 << 20, (name, len(s))
    open("%s/%s.json" % (t, name), "w").write(s)

m = base()
m["base"]["workload"]["description"] = "x" * 380000
m["axes"] = [{"name": "iodepth", "path": "workload.iodepth", "values": list(range(1, 101))},
             {"name": "txg", "path": "module_params.zfs.zfs_txg_timeout", "values": list(range(1, 101))}]
write("string-10k-cells", m)

def disks(m, n):
    m["base"]["disks"] = [{"name": "d%d" % i, "size": "1G"} for i in range(n)]
    m["base"]["pool"]["vdevs"] = [{"type": "stripe", "disks": ["d%d" % i for i in range(n)]}]
    return m

m = disks(base(), 20000)
m["axes"] = []
write("disks-20k", m)

m = disks(base(), 2000)
m["axes"] = [{"name": "iodepth", "path": "workload.iodepth", "values": list(range(1, 51))},
             {"name": "txg", "path": "module_params.zfs.zfs_txg_timeout", "values": list(range(1, 51))}]
write("disks-20k-cells", m)

k1, k2 = "k" * 250, "q" * 250
n = ((4 << 20) - 700) // 2
s = '{"zbench":1,"name":"t","base":{"%s":{"%s":[%s]}}}' % (k1, k2, ",".join(["0"] * n))
open(t + "/rejected-deep-keys.json", "w").write(s[: 4 << 20] if len(s) <= 4 << 20 else s)

m = base()
vals = list(range(1, 10001))
m["axes"] = [{"name": "rate", "path": "workload.rate_iops", "values": vals}]
m["expect"] = [{"claim": "c", "metric": "read_iops", "ranking": {"axis": "rate", "order": "increasing", "values": vals}}]
write("ranking-10k", m)

m = base()
m["axes"] = [{"name": "rate", "path": "workload.rate_iops", "values": vals}]
m["reference"] = [{"source": "s", "metric": "read_iops",
                   "values": [{"match": {"rate": 10000 - (i % 10000)}, "value": 1} for i in range(50000)]}]
write("references-50k", m)

m = disks(base(), 20000)
m["axes"] = [{"name": "a%d" % i, "path": "disks[%d].size" % i, "values": ["1G"]}
             for i in range(20000)]
write("axes-1-value", m)

m = base()
m["base"]["workload"]["description"] = "x" * (1100 * 1000)
m["axes"] = []
write("cell-over-1mib", m)

m = base()
m["axes"] = [{"name": "iodepth", "path": "workload.iodepth", "values": list(range(1, 101))},
             {"name": "txg", "path": "module_params.zfs.zfs_txg_timeout", "values": list(range(1, 101))}]
write("valid-10k-cells", m)
EOF

# seconds: wall clock; cpu: user + system (the host is shared: cpu is the figure to compare)
printf '%-20s %9s %8s %6s %9s  %s\n' case bytes seconds cpu "max RSS" "zbench says"
for f in string-10k-cells disks-20k disks-20k-cells rejected-deep-keys ranking-10k \
	references-50k axes-1-value cell-over-1mib valid-10k-cells; do
	/usr/bin/time -v -o "$t/$f.time" timeout "$TIMEOUT" "$ZBENCH" matrix check "$t/$f.json" \
		>"$t/$f.out" 2>"$t/$f.err"
	rc=$?
	secs=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s }' "$t/$f.time")
	cpu=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$t/$f.time")
	rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.0f MB", $2 / 1024 }' "$t/$f.time")
	if [ "$rc" -eq 124 ]; then
		says="cut off after ${TIMEOUT}s"
	elif [ "$rc" -eq 0 ]; then
		says=$(head -1 "$t/$f.out" | sed "s|$t/||")
	else
		says=$(head -1 "$t/$f.err" | sed "s|$t/||" | cut -c1-110)
	fi
	printf '%-20s %9s %8s %6s %9s  %s\n' "$f" "$(wc -c <"$t/$f.json")" "$secs" "$cpu" "$rss" \
		"$says"
done
