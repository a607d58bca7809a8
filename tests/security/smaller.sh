#!/bin/sh
# The smaller holes of issue 27 (docs/security.md): a recipe's patches or tarball that is not a
# regular file (/dev/zero hung `image path`) or is too large; a job file's filename with '..';
# record text on the terminal through the one sanitiser (C1 controls and bidi overrides, not
# only C0 and DEL). (export's bins: tests/security/export-bins.sh.) No VM.
# Prints "smaller: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/check.inc
ZBENCH=${ZBENCH:-$(pwd)/zbench}
t=$(mktemp -d /tmp/zbench-sec-smaller.XXXXXX)
trap 'rm -rf "$t"' EXIT
export ZBENCH_CACHE_DIR="$t/cache"

# recipe files that are not regular, or too large: refused at once
truncate -s 65M "$t/big.patch" && truncate -s 1100M "$t/big.tar"
for c in 'kind: "tarball", path: "/dev/zero"|not a regular file' \
	'kind: "tarball", path: ($d + "/big.tar")|larger than' \
	'kind: "debian", version: "2.1.11-1+deb12u1", sha256: ("0" * 64), patches: ["/dev/zero"]|not a regular file' \
	'kind: "debian", version: "2.1.11-1+deb12u1", sha256: ("0" * 64), patches: [$d + "/big.patch"]|larger than'; do
	spec=${c%|*} msg=${c#*|}
	jq --arg d "$t" ".zfs_source = {$spec}" images/debian12-zfs-src.json >"$t/r.json"
	timeout 20 "$ZBENCH" image path "$t/r.json" >/dev/null 2>"$t/err"
	check "zfs_source {$(echo "$spec" | cut -c1-50)...}: refused at once ($msg)" \
		sh -c "[ \$? -ne 124 ] && grep -q '$msg' '$t/err'"
done

# a job file's filename with '..'
for f in ../../etc/passwd sub/../../x ..; do
	printf '[j]\nrw=read\nsize=1M\nfilename=%s\n' "$f" >"$t/j.fio"
	jq '.base.workload = {job_file: "j.fio"}' matrices/quick.json >"$t/m.json"
	"$ZBENCH" matrix check "$t/m.json" >/dev/null 2>"$t/err"
	check "job file filename=$f refused at its line" grep -q "j.fio:4:.*filename" "$t/err"
done

# record text with C1 controls (CSI as U+009B) and a bidi override, in a line that is not a
# record: the warning on stderr carries neither
mkdir -p "$t/run" && cp tests/golden/export/fixture/rundir/manifest.json "$t/run/"
cp tests/golden/export/fixture/rundir/cells.jsonl "$t/run/"
printf '{"x": \302\2332J\342\200\256evil\n' >>"$t/run/cells.jsonl"
"$ZBENCH" report "$t/run" >/dev/null 2>"$t/err"
check "the skipped line is reported" grep -q "not a record" "$t/err"
check "...without its C1 control (U+009B)" sh -c "! grep -q \"\$(printf '\302\233')\" '$t/err'"
check "...or its bidi override (U+202E)" sh -c "! grep -q \"\$(printf '\342\200\256')\" '$t/err'"

echo "smaller: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
