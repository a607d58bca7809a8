#!/bin/sh
# Hostile run directories given to `zbench export` (docs/security.md, "Run directories"): export
# must never write outside its output directory, never follow a symlink out of the run directory
# or into one planted in the output directory, survive oversized, broken and ill-typed records,
# and never make a file name of record text. No VM boots. Prints "export-sec: N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
. tests/check.inc
ZBENCH=${ZBENCH:-./zbench}
case $ZBENCH in /*) ;; *) ZBENCH=$(pwd)/$ZBENCH ;; esac
FIX=$(pwd)/tests/golden/export/fixture/rundir
T=$(mktemp -d /tmp/zbench-sec-export-XXXXXX)
trap 'rm -rf "$T"' EXIT

fresh() { # fresh NAME: a copy of the fixture run directory at $T/NAME
	rm -rf "$T/$1" && cp -r "$FIX" "$T/$1"
}
untouched() { # untouched DIR: DIR is still empty
	[ -z "$(ls -A "$1")" ]
}

# 1. the default output, RUNDIR/export, planted as a symlink to a directory outside
fresh r1
mkdir "$T/outside1"
ln -s "$T/outside1" "$T/r1/export"
check "a planted RUNDIR/export symlink is refused (exit 2)" sh -c "'$ZBENCH' export '$T/r1' -f fio >'$T/o1' 2>&1; [ \$? -eq 2 ]"
check "... naming it, and nothing is written where it points" sh -c "grep -q 'export' '$T/o1' && [ -z \"\$(ls -A '$T/outside1')\" ]"

# 2. cells.jsonl a symlink to a file outside the run directory
fresh r2
mv "$T/r2/cells.jsonl" "$T/outside2.jsonl"
ln -s "$T/outside2.jsonl" "$T/r2/cells.jsonl"
check "a symlinked cells.jsonl is not read (exit 2)" sh -c "'$ZBENCH' export '$T/r2' -f csv -o '$T/out2' >'$T/o2' 2>&1; [ \$? -eq 2 ] && [ ! -e '$T/out2/cells.csv' ]"

# 3. a FIFO as cells.jsonl: refused without blocking
fresh r3
rm "$T/r3/cells.jsonl" && mkfifo "$T/r3/cells.jsonl"
check "a FIFO cells.jsonl is refused at once" sh -c "timeout 10 '$ZBENCH' export '$T/r3' -f csv -o '$T/out3' >/dev/null 2>&1; [ \$? -eq 2 ]"

# 4. a group directory planted in -o as a symlink to a directory outside
fresh r4
mkdir -p "$T/out4" "$T/outside4"
ln -s "$T/outside4" "$T/out4/002-00000000000000e1-r0"
check "a planted group-directory symlink in -o is refused (exit 2)" sh -c "'$ZBENCH' export '$T/r4' -f fio -o '$T/out4' >'$T/o4' 2>&1; [ \$? -eq 2 ]"
check "... and nothing is written where it points" untouched "$T/outside4"

# 5. cells.csv planted in -o as a symlink to a file outside: replaced, the file kept
fresh r5
mkdir -p "$T/out5" && echo precious >"$T/precious5"
ln -s "$T/precious5" "$T/out5/cells.csv"
check "a planted cells.csv symlink is replaced, never written through" sh -c "'$ZBENCH' export '$T/r5' -f csv -o '$T/out5' >/dev/null 2>&1 && [ \"\$(cat '$T/precious5')\" = precious ] && [ ! -L '$T/out5/cells.csv' ] && grep -q '^cell,' '$T/out5/cells.csv'"

# 6. broken, oversized and ill-typed records: skipped or ignored, the rest exported
fresh r6
{
	echo 'not json at all'
	echo '[1, 2, 3]'
	head -c 67108870 /dev/zero | tr '\0' ' '
	echo
	# ill-typed fio: strings for numbers, bins with junk keys and counts, jobs not objects
	jq -c '.fio.jobs[0].read.iops = "x" | .fio.jobs[0].read.clat_ns.bins = {"-1": -5, "x": "y", "99999999999999999999999": 1} | .fio.jobs += [7] | .cell = "ill-typed" | .index = 7' "$FIX/cells.jsonl" | sed -n 2p
	# rw, iodepth, numjobs that would be path components
	jq -c '.config.workload.iodepth = "1/../../../x" | .cell = "evil-depth" | .index = 8' "$FIX/cells.jsonl" | sed -n 3p
	jq -c '.config.workload.numjobs = 1e300 | .cell = "huge-jobs" | .index = 9' "$FIX/cells.jsonl" | sed -n 3p
	# a phase name with a path in it
	jq -c '.phase_results[1].name = "../../../escape" | .cell = "evil-phase" | .index = 10' "$FIX/cells.jsonl" | sed -n 1p
} >>"$T/r6/cells.jsonl"
check "bad records are skipped with warnings, the rest exported" sh -c "'$ZBENCH' export '$T/r6' -f fio -o '$T/out6' >'$T/o6' 2>&1 && grep -q 'line 8' '$T/o6' && grep -q 'longer than' '$T/o6'"
check "... every file is inside -o, one level of directories, names of [A-Za-z0-9+-._]" sh -c "[ -z \"\$(find '$T/out6' -mindepth 1 \\( -type l -o -path '$T/out6/*/*/*' -o ! -name '[A-Za-z0-9+._-]*' -o -name '*[!A-Za-z0-9+._-]*' \\))\" ] && [ -z \"\$(ls -A '$T' | grep -v '^r[0-9]\$\\|^out[0-9]\$\\|^o[0-9]\$\\|^outside\\|^precious')\" ]"
check "... the phase named with a path stays one name" sh -c "ls '$T/out6' | grep -q '^010-evil-phase-.*escape-r0\$'"
check "... csv and json survive them too" sh -c "'$ZBENCH' export '$T/r6' -f csv -o '$T/out6c' >/dev/null 2>&1 && '$ZBENCH' export '$T/r6' -f json -o '$T/out6j' >/dev/null 2>&1 && jq -e '.rows | length > 7' '$T/out6j/cells.json' >/dev/null"

echo "export-sec: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
