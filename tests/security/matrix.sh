#!/bin/sh
# Hostile matrices (docs/security.md; docs/matrix.md, "Limits"): a small file must not expand
# into work or memory out of proportion, and a cell that cannot be sent to its guest must be
# refused by `matrix check`, not after its VM has booted. Each bound is refused with its own
# message at FILE:LINE:COL; the checks that became linear (disk references, axis overlaps,
# claim values) still find what they found. No timings here (bench/matrix-load.sh has them).
# Prints "matrix: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
ZBENCH=${ZBENCH:-$(pwd)/zbench}
t=$(mktemp -d /tmp/zbench-sec-matrix.XXXXXX)
. tests/check.inc

# make NAME PYTHON: a matrix from quick.json, changed by PYTHON (m is the matrix, b its base)
make_matrix() {
	python3 - "$t/$1.json" "$2" <<'EOF'
import json, sys
out, code = sys.argv[1:]
m = json.load(open("matrices/quick.json"))
b = m["base"]
def disks(n):
    b["disks"] = [{"name": "d%d" % i, "size": "1G"} for i in range(n)]
    b["pool"]["vdevs"] = [{"type": "stripe", "disks": ["d%d" % i for i in range(n)]}]
exec(code)
s = json.dumps(m, separators=(",", ":"))
assert len(s) <= 4 << 20
open(out, "w").write(s)
EOF
}
# refused NAME REGEX: matrix check of NAME fails (exit 2) with one line matching REGEX
refused() {
	timeout 60 "$ZBENCH" matrix check "$t/$1.json" >/dev/null 2>"$t/$1.err"
	rc=$?
	[ "$rc" -eq 2 ] && [ "$(wc -l <"$t/$1.err")" -eq 1 ] && grep -q -- "$2" "$t/$1.err" ||
		{ echo "    exit $rc: $(cut -c1-300 "$t/$1.err")"; return 1; }
}
accepted() { # NAME CELLS
	timeout 60 "$ZBENCH" matrix check "$t/$1.json" >"$t/$1.out" 2>"$t/$1.err" &&
		head -1 "$t/$1.out" | grep -q ": $2 cells\?$" ||
		{ echo "    $(cut -c1-300 "$t/$1.err")"; return 1; }
}
F="$t/[a-z0-9-]*.json:[0-9]*:[0-9]*: "

# 1. a cell whose job frame would not fit the protocol's 1 MiB frame: refused by matrix check
make_matrix big-cell 'b["workload"]["description"] = "x" * (1100 * 1000); m["axes"] = []'
check "a 1.1 MB cell config: refused by matrix check (larger than a job frame)" \
	refused big-cell "^zbench: ${F}base: .*job frame"
make_matrix big-axis-value 'm["axes"] = [{"name": "d", "path": "workload.description", "values": ["a", "x" * (1100 * 1000)]}]'
check "an axis value that makes one cell too big: refused at that value" \
	refused big-axis-value "^zbench: ${F}axes\[0\]\.values\[1\]: .*cell 1 .*job frame"
make_matrix disks-20k 'disks(20000); m["axes"] = []'
check "20000 disks: refused (their entries in the job frame do not fit)" \
	refused disks-20k "^zbench: ${F}base: the base configuration.s job frame would be .*for 20000 disks"

# 2. the expansion: cells times their size
make_matrix string-10k 'b["workload"]["description"] = "x" * 380000; m["axes"] = [{"name": "i", "path": "workload.iodepth", "values": list(range(1, 101))}, {"name": "t", "path": "module_params.zfs.zfs_txg_timeout", "values": list(range(1, 101))}]'
check "10^4 cells of a 380 KB base: refused (bytes in all)" \
	refused string-10k "^zbench: ${F}axes: the matrix.s 10000 cells would hold more than 32 MiB of configuration"
make_matrix cells-10001 'm["axes"] = [{"name": "i", "path": "workload.iodepth", "values": list(range(1, 10002))}]'
check "10001 cells: refused" refused cells-10001 "^zbench: ${F}axes: the matrix expands to more than 10000 cells"
make_matrix cells-10000 'm["axes"] = [{"name": "i", "path": "workload.iodepth", "values": list(range(1, 101))}, {"name": "t", "path": "module_params.zfs.zfs_txg_timeout", "values": list(range(1, 101))}]'
check "10000 ordinary cells: accepted" accepted cells-10000 10000
make_matrix axes-65 'disks(65); m["axes"] = [{"name": "a%d" % i, "path": "disks[%d].size" % i, "values": ["1G"]} for i in range(65)]'
check "65 axes: refused at the 65th" refused axes-65 "^zbench: ${F}axes\[64\]: more than 64 axes"
make_matrix set-257 'disks(257); m["axes"] = []; m["cases"] = [{"name": "c", "set": {"disks[%d].size" % i: "2G" for i in range(257)}}]'
check "a case setting 257 paths: refused" refused set-257 "^zbench: ${F}cases\[0\]\.set: more than 256 paths"

# 3. values: a 4 MB file of zeros is refused before it becomes a tree, where its value past the
# limit starts; below the limit, an error deep in it is found at its key (no copy per value)
python3 - "$t" <<'EOF'
import sys
t = sys.argv[1]
n = ((4 << 20) - 700) // 2
open(t + "/zeros.json", "w").write('{"zbench":1,"name":"t","base":{"%s":{"%s":[%s]}}}' % ("k" * 250, "q" * 250, ",".join(["0"] * n)))
open(t + "/deep-keys.json", "w").write('{"zbench":1,"name":"t","base":{"%s":{"%s":[%s]}}}' % ("k" * 250, "q" * 250, ",".join(["0"] * 999000)))
EOF
check "4 MB of zeros (2M values): refused at the 1000001st value, before parsing" \
	refused zeros "^zbench: $t/zeros.json:1:2000528: more than 1000000 values in the file"
check "999000 values under long keys: refused at the key, line 1 column 32" \
	refused deep-keys "^zbench: $t/deep-keys.json:1:32: base.kkkk*: unknown key"
make_matrix too-many-values 'disks(2000); m["axes"] = [{"name": "i", "path": "workload.iodepth", "values": list(range(1, 51))}, {"name": "t", "path": "module_params.zfs.zfs_txg_timeout", "values": list(range(1, 51))}]'
check "2500 cells of 2000 disks: refused (values in all)" \
	refused too-many-values "^zbench: ${F}axes: the matrix.s 2500 cells would hold more than 1000000 values"

# 4. the checks made linear still find what they found
make_matrix disk-twice 'disks(3000); b["pool"]["vdevs"][0]["disks"].append("d17")'
check "3000 disks, one named twice: found" \
	refused disk-twice "^zbench: ${F}base.pool.vdevs\[0\].disks\[3000\]: disk \"d17\" is already used at pool.vdevs\[0\].disks\[17\]"
make_matrix disk-missing 'disks(3000); b["pool"]["vdevs"][0]["disks"][2999] = "nope"'
check "3000 disks, one missing: found" \
	refused disk-missing "^zbench: ${F}base.pool.vdevs\[0\].disks\[2999\]: no disk named \"nope\""
make_matrix sata-7 'disks(7); [d.update(bus="sata") for d in b["disks"]]'
check "7 disks on a 6-port bus: found at the 7th" \
	refused sata-7 "^zbench: ${F}base.disks\[6\].bus: bus \"sata\" takes at most 6 disks"
make_matrix overlap 'disks(60); m["axes"] = [{"name": "a%d" % i, "path": "disks[%d].size" % i, "values": ["1G"]} for i in range(60)] + [{"name": "x", "path": "disks[3]", "values": [{"name": "d3", "size": "2G"}]}]'
check "60 axes, the last overlapping the 4th: found" \
	refused overlap "^zbench: ${F}axes\[60\].path: \"disks\[3\]\" overlaps axes\[3\].path \"disks\[3\].size\""
make_matrix case-overlap 'disks(4); m["axes"] = [{"name": "s", "path": "disks[2].size", "values": ["1G", "2G"]}]; m["cases"] = [{"name": "c", "set": {"disks[2]": {"name": "d2", "size": "3G"}}}]'
check "a case key over an axis path: found" \
	refused case-overlap "^zbench: ${F}cases\[0\].set\[\"disks\[2\]\"\]: \"disks\[2\]\" overlaps axes\[0\].path \"disks\[2\].size\""
make_matrix ranking-twice 'v = list(range(1, 5001)); m["axes"] = [{"name": "r", "path": "workload.rate_iops", "values": v}]; m["expect"] = [{"claim": "c", "metric": "read_iops", "ranking": {"axis": "r", "order": "increasing", "values": v + [17]}}]'
check "a ranking of 5000 values, one listed twice: found" \
	refused ranking-twice "^zbench: ${F}expect\[0\].ranking.values\[5000\]: listed twice"
make_matrix ranking-foreign 'v = list(range(1, 5001)); m["axes"] = [{"name": "r", "path": "workload.rate_iops", "values": v}]; m["expect"] = [{"claim": "c", "metric": "read_iops", "ranking": {"axis": "r", "order": "increasing", "values": v[:10] + [1.0]}}]'
check "a ranking value of another type (1.0 for 1): not a value of the axis" \
	refused ranking-foreign "^zbench: ${F}expect\[0\].ranking.values\[10\]: 1.0 is not a value of axis \"r\""
make_matrix refs 'v = list(range(1, 10001)); m["axes"] = [{"name": "r", "path": "workload.rate_iops", "values": v}]; m["reference"] = [{"source": "s", "metric": "read_iops", "values": [{"match": {"r": 1 + i % 10000}, "value": 1} for i in range(20000)] + [{"match": {"r": 10001}, "value": 1}]}]'
check "20001 published values, the last not a value of the axis: found" \
	refused refs "^zbench: ${F}reference\[0\].values\[20000\].match.r: 10001 is not a value of axis \"r\""

make_matrix phases-many 'b["workload"]["phases"] = [{"name": "p%d" % i, "size": "1M"} for i in range(100000)]'
check "100000 phases in one workload: refused (at most 64), in linear time" \
	refused phases-many "^zbench: ${F}base.workload.phases: at most 64 phases, got 100000"
make_matrix phases-cells 'b["workload"]["phases"] = [{"name": "p%d" % i, "size": "1M"} for i in range(64)]; m["axes"] = [{"name": "r", "path": "workload.rate_iops", "values": list(range(1, 201))}]'
check "200 cells of 64 phases each: accepted" accepted phases-cells 200
make_matrix phases-name 'b["workload"]["phases"] = [{"name": "a\u001b[31m", "size": "1M"}]'
check "a phase name with a terminal escape: refused, no control character printed" \
	sh -c '"$1" matrix check "$2" 2>&1 >/dev/null | grep -q "expected 1 to 24 of" &&
		! "$1" matrix check "$2" 2>&1 >/dev/null | od -An -c | grep -q 033' - "$ZBENCH" "$t/phases-name.json"
# 3. "images": recipe paths only, and a bounded number of them (each is built or resolved
#    before the first cell)
make_matrix images-path 'm["images"] = ["images/debian12-zfs.json", "/etc/passwd"]'
check "\"images\" naming a file that is not a recipe: refused" \
	refused images-path "^zbench: ${F}images\[1\]: expected the path of an image recipe"
make_matrix images-9 'm["images"] = ["images/debian12-zfs.json"] * 9'
check "9 images: refused" refused images-9 "^zbench: ${F}images: expected 2 to 8 image recipes, got 9"

printf '{"zbench":1,"name":"e","base":{"x\\u001b]0;owned\\u0007\\u001b[31m":1}}' >"$t/escape.json"
check "a key with terminal escapes is named in the error with no control character left" \
	sh -c 'out=$("$1" matrix check "$2" 2>&1 >/dev/null); echo "$out" | grep -q "unknown key" &&
		! printf "%s" "$out" | od -An -c | grep -qE "033|007"' - "$ZBENCH" "$t/escape.json"

echo "matrix: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$t"; else echo "  kept: $t"; fi
[ "$failed" -eq 0 ]
