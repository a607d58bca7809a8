#!/bin/sh
# Integration test: one cell on each class of disk model (tests/integration/diskmodels.json): an
# HDD with its write cache on, the same with it off, and a mirror of a SATA SSD and a USB 2.0
# stick (capped by a throttle on top). Each modelled disk is served by its own nbdkit with the
# disk-model filter; the record's disk_model says what each did over the measured window, and
# nothing of the servers is left afterwards. Prints "diskmodels: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
out=$(mktemp -d /tmp/zbench-diskmodels.XXXXXX)
run="$out/run"
. tests/check.inc
field() { # field CASE JQ-EXPR
	jq -r --arg s "case=$1" "select(.summary == \$s) | $2" "$run/cells.jsonl"
}

./zbench run -o "$run" tests/integration/diskmodels.json >/dev/null 2>"$out/run.log"
rc=$?
check "zbench run exits 0" [ "$rc" -eq 0 ] || sed 's/^/    /' "$out/run.log"
check "three ok records" [ "$(jq -r .outcome "$run/cells.jsonl" 2>/dev/null | grep -c '^ok$')" -eq 3 ]
check "every cell restored from the warm snapshot (its modelled disks hot-plugged)" \
	[ "$(jq -r .boot "$run/cells.jsonl" | sort -u)" = restored ]
check "the resolved disk carries every figure of its model" \
	[ "$(field hdd '.config.disks[0].model_params | has("rpm") and has("seek_avg_ms") and has("cache_mb")')" = true ]
check "the geometry comes from the model row (512e, 7200 rpm, virtio-scsi)" \
	[ "$(field hdd '.config.disks[0] | "\(.bus) \(.physical_block_size) \(.rotation_rate)"')" = "virtio-scsi 4096 7200" ]
check "no throttle stands in for the model" [ "$(field hdd '.config.disks[0].throttle')" = null ]
check "hdd: the model served the window's reads and writes" \
	[ "$(field hdd '.disk_model.d0 | .reads > 0 and .writes > 0')" = true ]
check "hdd: random reads seek (seeks and a mean seek distance > 0)" \
	[ "$(field hdd '.disk_model.d0 | .seeks > 0 and .mean_seek_distance > 0')" = true ]
check "hdd: the write cache absorbed writes and flushes paid for them" \
	[ "$(field hdd '.disk_model.d0 | .write_cache_absorbed > 0 and .flushes > 0 and .flush_ns_sum > 0')" = true ]
check "hdd without write cache: nothing absorbed" \
	[ "$(field hdd-nowc '.disk_model.d0.write_cache_absorbed')" = 0 ]
on=$(field hdd '.disk_model.d0.flush_ns_sum')
off=$(field hdd-nowc '.disk_model.d0.flush_ns_sum')
echo "    flush cost over the window: write cache on ${on} ns, off ${off} ns"
check "flush cost: higher with write cache on than off" [ "${on:-0}" -gt "${off:-0}" ]
check "totals cover at least the window" \
	[ "$(field hdd '.disk_model.d0 | .total.reads >= .reads and .total.writes >= .writes')" = true ]
check "ssd: no seeks, requests served" \
	[ "$(field flash '.disk_model.d0 | .seeks == 0 and .writes > 0 and .model == "sata-ssd"')" = true ]
check "usb2 stick: small random writes rewrite erase blocks" \
	[ "$(field flash '.disk_model.d1 | .rmw > 0 and .model == "usb2-stick"')" = true ]
check "usb2 stick: one command at a time, so a request waits (mean service > 1 ms)" \
	[ "$(field flash '.disk_model.d1.mean_service_us > 1000')" = true ]
check "usb2 stick: the throttle stays on top of the model" \
	[ "$(field flash '.config.disks[1].throttle.iops')" = 5000 ]
echo "    mean service: ssd $(field flash .disk_model.d0.mean_service_us) us, usb2 stick $(field flash .disk_model.d1.mean_service_us) us"
check "ssd serves a request faster than the usb stick" \
	[ "$(field flash '.disk_model.d0.mean_service_us < .disk_model.d1.mean_service_us')" = true ]
check "the report judged both claims on disk_model metrics, and both held" \
	[ "$(jq -r '[.claims[] | select(.metric | startswith("disk_model.")) | .held] | "\(length) \(all)"' "$run/report.json" 2>/dev/null)" = "2 true" ]
check "each server's log kept" [ "$(ls "$run"/cells/*/d0.nbdkit.log 2>/dev/null | wc -l)" -eq 3 ]
check "no disk image or counters file left" [ -z "$(ls "$run"/cells/*/*.img "$run"/cells/*/*.dmstats 2>/dev/null)" ]
check "no nbdkit left" [ -z "$(pgrep -f "nbdkit.*$run/cells")" ]

echo "diskmodels: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  run directory kept: $run"; fi
[ "$failed" -eq 0 ]
