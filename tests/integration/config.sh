#!/bin/sh
# Integration test of the configuration space (docs/disks.md, docs/matrix.md): real guests build
# the pools, zvols, module parameters and disks a matrix asks for, and report them back.
#   1. raidz2 + zvol (volblocksize=16k) as the target + zfs_arc_max; mirror x2 + SLOG + L2ARC;
#      a disk with 4096-byte physical sectors and write cache off; telemetry (%util per disk)
#   2. passthrough of a loop device: each refusal (no boot; the pool label is the one section 1's
#      guest wrote), then one allowed device in a pool
#   3. seed 000's SLOG finding: a throttled 5400 rpm HDD model with sync=always gets clearly
#      more IOPS with an unthrottled SSD-model SLOG; the HDD's limit lifted while the pool is
#      made and back, and held, while it is measured
# Five cells of 2-3 s workloads: about two minutes under TCG. Prints "config: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
ZBENCH=./zbench
out=$(mktemp -d /tmp/zbench-config.XXXXXX)
passed=0 failed=0
loop=""

check() { # check "what" command...
	what=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "  ok   $what"
	else failed=$((failed + 1)); echo "  FAIL $what"; fi
}
cleanup() {
	[ -n "$loop" ] && { umount "$out/mnt" 2>/dev/null; losetup -d "$loop" 2>/dev/null; }
	[ -n "${holder:-}" ] && kill "$holder" 2>/dev/null
}
trap cleanup EXIT

$ZBENCH image build images/debian12-zfs.json >/dev/null || { echo "config: 0 passed, 1 failed"; exit 1; }

# ---- 1. layouts, zvol, module parameters, disk geometry, telemetry --------------------------
cat >"$out/layouts.json" <<'JSON'
{
  "zbench": 1,
  "name": "config-layouts",
  "base": {
    "vm": { "memory": "1G", "cpus": 1 },
    "disks": [ { "name": "d0", "size": "128M", "bus": "virtio-scsi", "physical_block_size": 4096, "write_cache": false },
               { "name": "d1", "size": "128M" }, { "name": "d2", "size": "128M" }, { "name": "d3", "size": "128M" },
               { "name": "l0", "size": "128M", "model": "sata-ssd" }, { "name": "c0", "size": "128M", "bus": "nvme" } ],
    "pool": { "vdevs": [ { "type": "raidz2", "disks": ["d0", "d1", "d2", "d3"] } ] },
    "datasets": [ { "name": "fs", "properties": { "sync": "always" } } ],
    "zvols": [ { "name": "vol", "size": "64M", "properties": { "volblocksize": "16k" } } ],
    "module_params": { "zfs": { "zfs_arc_max": 100663296, "zfs_txg_timeout": 3 } },
    "workload": { "target": "vol", "rw": "randwrite", "bs": "16k", "size": "16M", "runtime": "2s", "time_based": true, "direct": true }
  },
  "cases": [
    { "name": "raidz2-zvol", "set": {} },
    { "name": "mirrors-slog-l2arc", "set": {
        "pool.vdevs": [ { "type": "mirror", "disks": ["d0", "d1"] }, { "type": "mirror", "disks": ["d2", "d3"] } ],
        "pool.log": [ { "type": "stripe", "disks": ["l0"] } ], "pool.cache": ["c0"], "workload.target": "fs",
        "workload.runtime": "4s" } }
  ]
}
JSON
# --keep-disks: section 2 uses a disk with the pool the guest made on it
$ZBENCH run --keep-disks -o "$out/layouts" "$out/layouts.json" >/dev/null 2>&1
c="$out/layouts/cells.jsonl"
z='select(.summary == "case=raidz2-zvol")'
m='select(.summary == "case=mirrors-slog-l2arc")'
check "both layout cells ok" [ "$(jq -r .outcome "$c" 2>/dev/null | sort -u)" = ok ]
check "raidz2 of 4 disks reported" \
	[ "$(jq -r "$z | .effective.zpool_status" "$c" | grep -c -e 'raidz2-0' -e 'zb-d[0-3]-part1')" -eq 5 ]
check "zvol volblocksize=16k is the target" \
	[ "$(jq -r "$z | [.effective.target.volblocksize.value, .effective.target_path] | join(\" \")" "$c")" = "16384 /dev/zvol/tank/vol" ]
check "zfs_arc_max applied (reported = requested)" \
	[ "$(jq -r "$z | .effective.module_params.zfs.zfs_arc_max" "$c")" = 100663296 ]
# Both parameters can be written at run time, so both cells start from the warm snapshot and get
# them through /sys/module after the wake; a cell booted cold (--cold, or no snapshot possible)
# gets them on the kernel command line with zfs loaded from boot. Each cell is checked on the
# path its record says it took.
params_on_path() {
	jq -r '"\(.dir) \(.boot)"' "$c" | while read -r dir boot; do
		d=$out/layouts/cells/$dir
		case $boot in
		restored)
			grep -aq 'woken from a warm snapshot' "$d/console.log" || return 1 ;;
		cold)
			[ "$(grep -oE -e 'zbench\.preload=zfs' -e 'zfs\.zfs_arc_max=100663296\b' \
				-e 'zfs\.zfs_txg_timeout=3\b' "$d/qemu.cmdline" | wc -l)" -eq 3 ] &&
				grep -aq 'zfs loaded in the background' "$d/console.log" || return 1 ;;
		*) return 1 ;;
		esac
	done
}
check "both cells restored (their parameters are writable at run time)" \
	[ "$(jq -r .boot "$c" | sort | uniq -c | tr -s ' ')" = " 2 restored" ]
check "module parameters: on the kernel command line if cold, after the wake if restored" params_on_path
check "two mirrors + log + cache reported" \
	[ "$(jq -r "$m | .effective.zpool_status" "$c" | grep -cE '^\s+(mirror-0|mirror-1|logs|cache)')" -eq 4 ]
check "SLOG and L2ARC are the asked disks" \
	[ "$(jq -r "$m | .effective.zpool_status" "$c" | grep -A1 -E '^\s+(logs|cache)' | grep -cE 'zb-l0-part1|QEMU_NVMe_Ctrl_zb-c0-part1')" -eq 2 ]
check "guest sees 4096-byte physical sectors on d0" \
	[ "$(jq -r "$z | .effective.disks.d0.physical_block_size" "$c")" = 4096 ]
check "guest sees d0's write cache off, d1's on" \
	[ "$(jq -r "$z | [.effective.disks.d0.write_cache, .effective.disks.d1.write_cache] | join(\",\")" "$c")" = "write through,write back" ]
check "SSD model is non-rotational, virtio-blk rotational" \
	[ "$(jq -r "$m | [.effective.disks.l0.rotational, .effective.disks.d1.rotational] | join(\",\")" "$c")" = "0,1" ]
check "per-disk %util over the workload in every record" \
	[ "$(jq '[.telemetry_summary.disks[] | .util_pct | type] | unique == ["number"]' "$c" | sort -u)" = true ]
check "some pool disk was busy (%util > 0)" \
	[ "$(jq "$z | [.telemetry_summary.disks[] | .util_pct] | max > 0" "$c")" = true ]
check "telemetry sampled about once a second" \
	[ "$(jq "$z | (.telemetry | length) >= 2 and ([.telemetry[].interval] | max) < 1.5" "$c")" = true ]
# zpool iostat per vdev: the samples name the pool's vdevs by class, leaves by the matrix's disk
check "per-vdev samples name mirror-0, the log and the cache device" \
	[ "$(jq -c "$m | [.telemetry[] | select(.vdevs) | .vdevs | [.[\"mirror-0\"].class, .d0.parent, .l0.class, .c0.class]] | unique" "$c")" = '[["data","mirror-0","log","cache"]]' ]
check "per-vdev write ops on the data vdevs during the write workload" \
	[ "$(jq "$m | [.telemetry[].vdevs // empty | .[\"mirror-0\"].w_iops, .[\"mirror-1\"].w_iops] | length > 0 and min >= 0 and add > 0" "$c")" = true ]
check "per-vdev summary: mean write ops of mirror-1 and d3 > 0, sampler CPU time recorded" \
	[ "$(jq "$m | .telemetry_summary | .vdevs[\"mirror-1\"].w_iops > 0 and .vdevs.d3.w_iops > 0 and (.vdev_sampler.cpu_s | type) == \"number\"" "$c")" = true ]

# ---- 2. passthrough -------------------------------------------------------------------------
if [ "$(id -u)" -eq 0 ] && command -v losetup >/dev/null && command -v mkfs.ext4 >/dev/null; then
	truncate -s 256M "$out/loop.img"
	loop=$(losetup -f --show "$out/loop.img")
	cat >"$out/pt.json" <<JSON
{ "zbench": 1, "name": "config-passthrough",
  "base": { "vm": { "memory": "1G", "cpus": 1 },
    "disks": [ { "name": "p0", "device": "$loop" } ],
    "pool": { "vdevs": [ { "type": "stripe", "disks": ["p0"] } ] },
    "datasets": [ { "name": "fs" } ],
    "workload": { "target": "fs", "rw": "randwrite", "bs": "4k", "size": "8M", "runtime": "2s", "time_based": true } } }
JSON
	refused() { # refused N PATTERN [run options]: the run fails with PATTERN in its error
		n=$1 pat=$2; shift 2
		$ZBENCH run "$@" -o "$out/pt-$n" "$out/pt.json" 2>&1 >/dev/null | tee "$out/pt-$n.err" |
			grep -q "$pat"
	}
	check "refused when not named in --allow-device" refused 1 "must be named with --allow-device"
	mkfs.ext4 -q -F "$loop"
	check "refused: file system signature" refused 2 "carries a signature of type ext4"
	mkdir -p "$out/mnt" && mount "$loop" "$out/mnt"
	check "refused even when allowed: mounted" refused 3 "it is mounted" --allow-device "$loop"
	umount "$out/mnt"
	python3 -c "import os,sys,time; os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
open(sys.argv[2], 'w').close(); time.sleep(60)" "$loop" "$out/held" &
	holder=$!
	i=0; while [ ! -e "$out/held" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	check "refused even when allowed: opened exclusively by someone else" \
		refused 4 "cannot be opened exclusively" --allow-device "$loop"
	kill "$holder"; wait "$holder" 2>/dev/null; holder=""
	# a real ZFS label: the disk of section 1's guest pool "tank" (zpool made partition 1)
	losetup -d "$loop"
	cp --sparse=always "$(ls "$out"/layouts/cells/*/d0.img | head -n1)" "$out/loop.img"
	loop=$(losetup -f --show "$out/loop.img")
	sed -i "s|/dev/loop[0-9]*|$loop|" "$out/pt.json"
	check "refused: ZFS pool label (pool 'tank', partition 1)" \
		refused 5 "ZFS pool label found (pool 'tank', partition 1, possibly imported"
	$ZBENCH run --allow-device "$loop" -o "$out/pt-ok" "$out/pt.json" >/dev/null 2>&1
	check "allowed device (with an old pool's label) used for a real pool" \
		[ "$(jq -r '[.outcome, (.effective.zpool_status | test("virtio-zb-p0-part1"))] | join(" ")' "$out/pt-ok/cells.jsonl" 2>/dev/null)" = "ok true" ]
	check "passthrough device wiped after the cell" sh -c "! blkid -p '$loop' >/dev/null 2>&1"
	losetup -d "$loop"; loop=""
else
	echo "  skip passthrough (needs root, losetup and mkfs.ext4)"
fi

# ---- 3. SLOG on a throttled HDD model -------------------------------------------------------
ZBENCH_SLOG_RUNTIME=3s bench/slog.sh "$out/slog" >"$out/slog.txt" 2>&1
sed 's/^/  | /' "$out/slog.txt"
check "HDD pool with an SSD SLOG: at least 1.5x the sync write IOPS" \
	grep -q '^ratio .* ok$' "$out/slog.txt"
# the HDD's limit was off while the pool was made and back before the workload (docs/disks.md):
# each record says when, and the HDD did no more than its 30 IOPS while measured
check "throttled disks: limits lifted for the setup, given back before the workload" \
	[ "$(jq -s 'length == 2 and all(.disk_limits.setup == "lifted" and .disk_limits.set_s > 0 and .disk_limits.set_s < .phases.workload + 1)' "$out/slog/cells.jsonl")" = true ]
check "throttled disks: the HDD held its 30 IOPS while measured" \
	[ "$(jq -s 'all(.telemetry_summary.disks.h0 | .r_iops + .w_data_iops <= 33)' "$out/slog/cells.jsonl")" = true ]

echo "config: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; fi
[ "$failed" -eq 0 ]
