#!/bin/sh
# One exit-status convention across commands (docs/errors.md): 0 done, 1 "done, but the answer
# is no" (a cell not ok, doctor found something missing, image path: not cached), 2 usage or
# input error or zbench itself failed, 3 and 4 compare's failed and undecided gates. Every command is driven into each class it has, without
# booting anything. Prints "exit-status: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
ZBENCH=${ZBENCH:-./zbench}
. tests/check.inc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# status WANT CMD...: CMD exits with WANT (its output is kept in $tmp/out)
status() {
	want=$1
	shift
	"$@" >"$tmp/out" 2>&1
	got=$?
	[ "$got" -eq "$want" ] || { echo "    exit $got, want $want: $*" && sed 's/^/    | /' "$tmp/out"; false; }
}

bad=tests/golden/invalid-matrices/bad-size/matrix.json
good=matrices/quick.json
mkdir "$tmp/cache"
: >"$tmp/afile"

check "no command: 2" status 2 "$ZBENCH"
check "unknown command: 2" status 2 "$ZBENCH" frobnicate
check "--help: 0" status 0 "$ZBENCH" --help
check "-V: 0" status 0 "$ZBENCH" -V
check "-V prints 'zbench VERSION'" grep -Eq '^zbench [0-9]+\.[0-9]+\.[0-9]+' "$tmp/out"
check "--version: 0" status 0 "$ZBENCH" --version
check "--version prints 'zbench VERSION'" grep -Eq '^zbench [0-9]+\.[0-9]+\.[0-9]+' "$tmp/out"

check "matrix check good: 0" status 0 "$ZBENCH" matrix check "$good"
check "matrix check bad matrix: 2" status 2 "$ZBENCH" matrix check "$bad"
check "matrix expand bad matrix: 2" status 2 "$ZBENCH" matrix expand "$bad"
check "matrix check missing file: 2" status 2 "$ZBENCH" matrix check "$tmp/nope.json"
check "matrix unknown subcommand: 2" status 2 "$ZBENCH" matrix frob
check "matrix keys: 0" status 0 "$ZBENCH" matrix keys

check "run bad matrix: 2" status 2 "$ZBENCH" run -o "$tmp/run" "$bad"
check "run unknown option: 2" status 2 "$ZBENCH" run --frob "$good"
check "run no matrix: 2" status 2 "$ZBENCH" run
check "run --backend libvirt with a modelled disk: 2 (refused before anything exists)" \
	status 2 "$ZBENCH" run --backend libvirt -o "$tmp/lv" tests/integration/diskmodels.json
check "the refusal names the modelled disk and the backend" \
	grep -q "disk 'd0' of cell .* is modelled (disk model 'hdd-7200'): the libvirt backend" "$tmp/out"
check "the refused run created nothing" [ ! -e "$tmp/lv" ]
check "replay missing manifest: 2" status 2 "$ZBENCH" replay "$tmp/nope/manifest.json"
check "replay unknown option: 2" status 2 "$ZBENCH" replay --frob
check "merge missing shard: 2" status 2 "$ZBENCH" merge -o "$tmp/merged" "$tmp/nope"
check "merge unknown option: 2" status 2 "$ZBENCH" merge --frob
check "slurm --dry-run: 0" status 0 "$ZBENCH" slurm -n 2 --max-at-once 1 --dry-run -o "$tmp/sl" tests/integration/resume.json
check "slurm bad matrix: 2" status 2 "$ZBENCH" slurm -n 1 --dry-run -o "$tmp/sl2" "$bad"
check "slurm without sbatch: 2" status 2 env PATH=/nonexistent "$ZBENCH" slurm -n 1 -o "$tmp/sl3" tests/integration/resume.json
check "slurm unknown option: 2" status 2 "$ZBENCH" slurm --frob

check "report missing run: 2" status 2 "$ZBENCH" report "$tmp/nope"
check "report unknown option: 2" status 2 "$ZBENCH" report --frob x
check "report of a run with a failed cell: 1" status 1 "$ZBENCH" report -o "$tmp/rep" tests/golden/report/faults/rundir
check "compare missing runs: 2" status 2 "$ZBENCH" compare "$tmp/a" "$tmp/b"
check "compare unknown option: 2" status 2 "$ZBENCH" compare --frob a b
g=tests/golden/compare-gate
check "compare, every gate the same: 0" status 0 "$ZBENCH" compare -o "$tmp/cmp" \
	--fail-if 'read_iops < -5%' "$g/tiers-pass/a" "$g/tiers-pass/b"
check "compare, a gate different: 3" status 3 "$ZBENCH" compare -o "$tmp/cmp" \
	--fail-if 'read_iops > 10%' "$g/tiers-fail/a" "$g/tiers-fail/b"
check "compare, a gate undecided: 4" status 4 "$ZBENCH" compare -o "$tmp/cmp" \
	--fail-if 'read_iops < -5%' "$g/tiers-undecided/a" "$g/tiers-undecided/b"
check "compare --adaptive of two runs: 2" status 2 "$ZBENCH" compare --adaptive \
	--fail-if 'read_iops < -5%' "$g/tiers-undecided/a" "$g/tiers-undecided/b"
check "compare --noise without a number: 2" status 2 "$ZBENCH" compare --noise x% a b
check "export of a run: 0" status 0 "$ZBENCH" export -f csv -o "$tmp/export" tests/golden/export/fixture/rundir
check "export missing run: 2" status 2 "$ZBENCH" export -f csv -o "$tmp/export" "$tmp/nope"
check "export unknown format: 2" status 2 "$ZBENCH" export -f xml tests/golden/export/fixture/rundir
check "export unknown option: 2" status 2 "$ZBENCH" export --frob x

check "image unknown subcommand: 2" status 2 "$ZBENCH" image frob
check "image build unknown option: 2" status 2 "$ZBENCH" image build --frob images/debian12-zfs.json
check "image build missing recipe file: 2" status 2 "$ZBENCH" image build --cache-dir "$tmp/cache" "$tmp/nope.json"
check "image path not cached: 1" status 1 "$ZBENCH" image path --cache-dir "$tmp/cache" images/debian12-zfs.json
check "image path missing recipe file: 2" status 2 "$ZBENCH" image path --cache-dir "$tmp/cache" "$tmp/nope.json"
check "image list empty cache: 0" status 0 "$ZBENCH" image list --cache-dir "$tmp/cache"
check "image list unreadable cache: 2" status 2 "$ZBENCH" image list --cache-dir "$tmp/afile"
check "bisect unknown option: 2" status 2 "$ZBENCH" bisect --frob
check "bisect without --repo: 2" status 2 "$ZBENCH" bisect --good a --bad b --metric write_bw --threshold -5% "$good"
check "bisect of a directory that is no repository: 2" status 2 "$ZBENCH" bisect --repo "$tmp/cache" --good a --bad b --metric write_bw --threshold -5% -o "$tmp/bisect" "$good"
check "doctor unknown option: 2" status 2 "$ZBENCH" doctor --frob

echo "exit-status: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
