#!/bin/sh
# Integration test: the libvirt backend (builder/vm/vm_libvirt.c, docs/libvirt.md). Runs
# matrices/quick.json (2 cells) on the QEMU backend and on the libvirt backend (the embedded
# driver, no daemon), checks that the records of the same cell agree on everything but timings,
# and validates every generated domain.xml with virt-xml-validate (package libvirt-clients).
# Prints "libvirt: N passed, N failed". ZBENCH_IT_ACCEL (default auto) is passed as --accel.
set -u
cd "$(dirname "$0")/../.." || exit 1
ZBENCH=./zbench
MATRIX=${ZBENCH_IT_MATRIX:-matrices/quick.json}
ACCEL=${ZBENCH_IT_ACCEL:-auto}
out=$(mktemp -d /tmp/zbench-lv.XXXXXX)
passed=0 failed=0

check() { # check "what" command...
	what=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "  ok   $what"
	else failed=$((failed + 1)); echo "  FAIL $what"; fi
}

# What must agree between the backends, per cell: everything the guest reports about itself
# and the pool, nothing that measures time or I/O rates (or ids ZFS makes up per pool).
project() {
	jq -S -c '{cell, outcome, accel, image, config,
		ashift: .effective.pool.ashift.value,
		recordsize: .effective.target.recordsize.value,
		sync: .effective.target.sync.value,
		primarycache: .effective.target.primarycache.value,
		zfs_version: .effective.zfs_version, kernel: .guest.kernel, agent: .guest.agent,
		module_params: .effective.module_params,
		job_options: [.fio.jobs[]."job options"]}' "$1/cells.jsonl" | sort
}

$ZBENCH image build images/debian12-zfs.json >/dev/null || {
	echo "libvirt: 0 passed, 1 failed"; exit 1; }

for b in qemu libvirt; do
	start=$(date +%s)
	$ZBENCH run --backend $b --accel "$ACCEL" -o "$out/$b" "$MATRIX" >/dev/null 2>"$out/$b.err"
	rc=$?
	echo "  $b: run took $(( $(date +%s) - start ))s, exit status $rc"
	check "$b: zbench run exits 0" [ "$rc" -eq 0 ]
	check "$b: the manifest and every record name the backend" \
		[ "$(jq -r .backend "$out/$b/manifest.json" 2>/dev/null)$(jq -r .backend "$out/$b/cells.jsonl" 2>/dev/null | sort -u)" = "$b$b" ]
	check "$b: every record is ok" \
		[ "$(jq -r .outcome "$out/$b/cells.jsonl" 2>/dev/null | sort -u)" = ok ]
	check "$b: a console log per cell, no disk image left" \
		[ "$(ls "$out/$b"/cells/*/console.log 2>/dev/null | wc -l)" -eq "$(wc -l < "$out/$b/cells.jsonl")" \
		  -a -z "$(ls "$out/$b"/cells/*/*.img 2>/dev/null)" ]
done
[ "$(wc -l < "$out/libvirt/cells.jsonl" 2>/dev/null || echo 0)" -gt 0 ] || tail -5 "$out/libvirt.err"

check "same cell ids on both backends" \
	[ "$(jq -r .cell "$out/qemu/cells.jsonl" | sort)" = "$(jq -r .cell "$out/libvirt/cells.jsonl" | sort)" ]
check "the records agree on everything but timings (config, accel, ashift, recordsize, versions, ...)" \
	[ "$(project "$out/qemu")" = "$(project "$out/libvirt")" ]
check "the effective ashift is the cell's" \
	[ "$(jq '(.config.pool.properties.ashift | tostring) == .effective.pool.ashift.value' "$out/libvirt/cells.jsonl" | sort -u)" = true ]

n=0 bad=0
for x in "$out"/libvirt/cells/*/domain.xml; do
	[ -e "$x" ] || continue
	n=$((n + 1))
	virt-xml-validate "$x" domain >/dev/null 2>"$out/validate.err" || { bad=$((bad + 1)); cat "$out/validate.err"; }
done
check "every domain.xml ($n) passes virt-xml-validate" [ "$n" -gt 0 -a "$bad" -eq 0 ]
check "QEMU's command line and log kept per cell (qemu.log)" \
	[ "$(grep -l -- '-bios\|-kernel' "$out"/libvirt/cells/*/qemu.log 2>/dev/null | wc -l)" -eq "$n" ]
check "no QEMU process left running for the run" \
	[ -z "$(pgrep -f "qemu-system.*$out/libvirt/" 2>/dev/null)" ]

echo "libvirt: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  run directories kept: $out"; fi
[ "$failed" -eq 0 ]
