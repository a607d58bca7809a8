#!/bin/sh
# A run manifest's matrix copy opens no file (docs/security.md, "Run directories"): replay and
# --resume load the manifest's matrix content, and a base.workload.job_file in it would be read
# relative to the manifest's matrix.path (/etc/x.json + "shadow" read /etc/shadow as root, its
# first line printed in the error and, on resume, written into the run's manifest.json). Here
# the "shadow" is a secret of our own. Also: a job file's error quotes at most a short,
# sanitised token of it, even beside the user's own matrix. Prints "manifest: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/check.inc
ZBENCH=${ZBENCH:-$(pwd)/zbench}
t=$(mktemp -d /tmp/zbench-sec-manifest.XXXXXX)
trap 'rm -rf "$t"' EXIT
export ZBENCH_CACHE_DIR="$t/cache"
mkdir -p "$t/etc"
printf 'root:SECRETHASHabcdefghijklmnop:19000:0:99999:7:::\n' >"$t/etc/shadow"
secret() { grep -rq SECRET "$@"; }

# DIR: a run directory whose manifest's matrix names job_file "shadow" beside $t/etc/x.json
rundir() {
	mkdir -p "$1" && : >"$1/cells.jsonl"
	jq -n --slurpfile m matrices/quick.json --arg p "$t/etc/x.json" \
		'{zbench: "x", status: "interrupted", matrix: {path: $p, sha256: "0",
		  content: ($m[0] | .base.workload = {job_file: "shadow"})},
		  image: {recipe: "images/no-such-recipe.json", hash: "0"}}' >"$1/manifest.json"
}
rundir "$t/r1"
timeout 60 "$ZBENCH" replay -o "$t/out1" "$t/r1/manifest.json" >"$t/o1" 2>"$t/e1"
check "replay: a stored matrix's job_file is refused" grep -q "job_file.*opens no file" "$t/e1"
check "...and the secret is in no message" eval '! secret "$t/e1" "$t/o1"'
check "...nor in a new run directory" eval '! { [ -d "$t/out1" ] && secret "$t/out1"; }'
rundir "$t/r2"
timeout 60 "$ZBENCH" run --resume "$t/r2" >"$t/o2" 2>"$t/e2"
check "--resume: a stored matrix's job_file is refused" grep -q "job_file.*opens no file" "$t/e2"
check "...the secret is in no message" eval '! secret "$t/e2" "$t/o2"'
check "...and not written into the run's manifest" eval '! secret "$t/r2"'

# the user's own matrix beside a job file that is not one: the error names the file and line
# and quotes a short token at most
cp "$t/etc/shadow" "$t/etc/job.fio"
jq '.base.workload = {job_file: "job.fio"}' matrices/quick.json >"$t/etc/m.json"
"$ZBENCH" matrix check "$t/etc/m.json" >/dev/null 2>"$t/e3"
check "a job file that is not one is refused at its line" grep -q "job.fio:1:" "$t/e3"
check "...quoting no more than a short token of it" eval '! secret "$t/e3"'

echo "manifest: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
