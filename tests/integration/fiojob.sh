#!/bin/sh
# Integration test: a fio job file run as it is (`zbench run FILE.fio`, docs/matrix.md, "fio job
# files") in a real guest, then exported for fio's tools (docs/export.md): its two jobs (the
# second with stonewall) ran as two phases, each a fio JSON of one job whose clat_ns.bins
# fio_jsonplus_clat2csv validates. RUNDIR=DIR checks an existing run instead of running.
# Prints "fiojob: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-fiojob.XXXXXX)
. tests/check.inc
run=${RUNDIR:-$out/run}
if [ -z "${RUNDIR:-}" ]; then
	./zbench run -o "$run" tests/integration/jobs/two-phases.fio >/dev/null 2>"$out/log"
	check "run exits 0 (1 ok cell)" [ $? -eq 0 ]
fi
rec() { jq -r "$1" "$run/cells.jsonl"; }
check "the jobs ran as phases write then read" [ "$(rec '[.phase_results[].name] | join(",")')" = "write,read" ]
check "the read phase read (IOPS > 0)" [ "$(rec '.phase_results[1].fio.jobs[0].read.iops > 0')" = true ]
check "the manifest keeps the options, not the file's name" \
	[ "$(jq -c '.matrix.content.base.workload | (has("job_file") | not) and (.phases | length == 2)' "$run/manifest.json")" = true ]
./zbench export "$run" -f fio -o "$out/fio" >/dev/null 2>&1
f=$(ls "$out"/fio/*-read-r0/randread-1-1.json 2>/dev/null)
check "export: the read phase as randread-1-1.json" [ -n "$f" ]
if [ -z "${RUNDIR:-}" ]; then
	check "the record keeps clat_ns.bins (json+)" [ "$(rec '.phase_results[1].fio.jobs[0].read.clat_ns | has("bins")')" = true ]
	check "fio_jsonplus_clat2csv validates the exported bins" \
		sh -c "cd '$out' && fio_jsonplus_clat2csv '$f' clat.csv >/dev/null && fio_jsonplus_clat2csv --validate '$f' clat.csv | grep -q validated"
	# a 16M file just written is read from the ARC: the end of the run says so, with the fix
	check "the end of the run names the read phase: the ARC answered its reads" \
		grep -q 'not measured on the disks: cell [0-9a-f]* ([^)]*), read: [0-9]*% of its reads reached the disks: the ARC answered them.*primarycache=metadata' "$out/log"
	check "the report says so at its top" grep -q '^## Not measured on the disks' "$run/report.md"
	./zbench run --resume "$run" --no-report >/dev/null 2>&1
	check "a finished run resumed exits 0 without --strict" [ $? -eq 0 ]
	./zbench run --resume "$run" --no-report --strict >/dev/null 2>"$out/log2"
	check "--strict: exits 1" [ $? -eq 1 ]
	check "--strict says why" grep -q 'strict: some measured phases did not measure the disks' "$out/log2"
fi
rm -rf "$out"
echo "fiojob: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
