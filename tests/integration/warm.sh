#!/bin/sh
# Integration test of warm snapshots (docs/performance.md, "Warm snapshots"): cells restored
# from the snapshot are pristine and configured as asked.
#   1. the same cell twice, restored: virtio-blk, nvme and virtio-scsi disks hot-plugged, a
#      runtime-writable zfs parameter set after the restore; both ok, both "restored", the same
#      effective configuration (every property with a source, the module parameters, the disks
#      as the guest sees them, kernel and ZFS versions)
#   2. nothing of one cell in the next: the same boot id in both (memory restored from the same
#      bytes), a different UUID drawn after the reseed, no pool known before the job, the
#      snapshot file unchanged by the cells (its SHA-256 before and after)
#   3. the cold path and why: vm.kernel_args, --cold
# Prints "warm: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
ZBENCH=./zbench
out=$(mktemp -d /tmp/zbench-warm.XXXXXX)
trap 'rm -rf "$out"' EXIT
. tests/check.inc

$ZBENCH image build images/debian12-zfs.json >/dev/null || { echo "warm: 0 passed, 1 failed"; exit 1; }
snaps="$(dirname "$(dirname "$($ZBENCH image path images/debian12-zfs.json | tail -n1)")")/snapshots"

cat >"$out/twice.json" <<'JSON'
{
  "zbench": 1,
  "name": "warm-twice",
  "base": {
    "vm": { "memory": "1G", "cpus": 2 },
    "disks": [ { "name": "d0", "size": "128M" }, { "name": "d1", "size": "128M", "bus": "nvme" },
               { "name": "d2", "size": "128M", "bus": "virtio-scsi" } ],
    "pool": { "vdevs": [ { "type": "stripe", "disks": ["d0", "d1", "d2"] } ], "properties": { "ashift": 12 } },
    "datasets": [ { "name": "bench", "properties": { "recordsize": "16k" } } ],
    "module_params": { "zfs": { "zfs_txg_timeout": 7 } },
    "workload": { "target": "bench", "rw": "randread", "bs": "4k", "size": "4M", "runtime": "1s", "time_based": true }
  },
  "repeats": 2
}
JSON
# the snapshot first (one cell), so that both counted cells restore the same file
jq '.repeats = 1' "$out/twice.json" >"$out/first.json"
$ZBENCH run --warm -o "$out/first" "$out/first.json" >/dev/null 2>"$out/first.log"
# the snapshots there now, each by name and SHA-256 (a test running beside this one may add
# snapshots of other VM shapes, which must not count as a change)
snapfiles=$(ls "$snaps"/*.snap 2>/dev/null)
hashes() { [ -z "$snapfiles" ] || sha256sum $snapfiles 2>&1; }
before=$(hashes)
$ZBENCH run --warm -o "$out/twice" "$out/twice.json" >/dev/null 2>"$out/twice.log"
after=$(hashes)
cells="$out/twice/cells.jsonl"

check "1. both cells ok and restored" \
	[ "$(jq -r '"\(.outcome) \(.boot)"' "$cells" 2>/dev/null | sort -u)" = "ok restored" ]
effective() { # the configuration part of a record's effective: properties that have a source
	jq -c --argjson n "$1" 'select(.repeat == $n) | .effective
		| { module_params, zfs_version, kernel, disks: (.disks | map_values(del(.dev))),
		    pool: (.pool | map_values(select(.source != "-"))),
		    target: (.target | map_values(select(.source != "-"))) }' "$cells"
}
e0=$(effective 0) e1=$(effective 1)
check "1. the same effective configuration twice" [ -n "$e0" ] && [ "$e0" = "$e1" ]
check "1. zfs_txg_timeout set after the restore" \
	[ "$(jq -r '.effective.module_params.zfs.zfs_txg_timeout' "$cells" | sort -u)" = 7 ]
check "1. nvme and virtio-scsi disks hot-plugged" \
	[ "$(jq -r '.effective.disks | [.d1.dev, .d2.dev] | map(. != null) | all' "$cells" | sort -u)" = true ]

witness() { grep -ho 'woken from a warm snapshot: .*' "$out"/twice/cells/*/console.log | tr -d '\r'; }
check "2. one witness line per cell" [ "$(witness | wc -l)" = 2 ]
check "2. the same boot id (the same memory)" \
	[ "$(witness | sed 's/.*boot_id \([^,]*\),.*/\1/' | sort -u | wc -l)" = 1 ]
check "2. a different random UUID per cell (reseeded)" \
	[ "$(witness | sed 's/.*random uuid \([^,]*\),.*/\1/' | sort -u | wc -l)" = 2 ]
check "2. no pool before the job" \
	[ "$(witness | sed 's/.*pools at start: //' | sort -u)" = none ]
check "2. the snapshot file unchanged by the cells" [ "$before" = "$after" ]

cat >"$out/cold.json" <<'JSON'
{
  "zbench": 1,
  "name": "warm-cold",
  "base": {
    "vm": { "memory": "1G", "cpus": 2 },
    "disks": [ { "name": "d0", "size": "128M" } ],
    "pool": { "vdevs": [ { "type": "stripe", "disks": ["d0"] } ] },
    "datasets": [ { "name": "bench" } ],
    "workload": { "target": "bench", "rw": "randread", "bs": "4k", "size": "4M", "runtime": "1s", "time_based": true }
  },
  "cases": [ { "name": "kargs", "set": { "vm.kernel_args": "zbench.test=1" } } ]
}
JSON
$ZBENCH run --warm -o "$out/cold" "$out/cold.json" >/dev/null 2>"$out/cold.log"
reasons=$(jq -r '"\(.outcome) \(.boot): \(.boot_reason)"' "$out/cold/cells.jsonl" | sort)
# (a SATA disk's reason is tests/golden/vm/warm-cold's: the default image has no SATA driver, and
# a run refuses such a cell before it boots)
check "3. kernel_args boot cold, saying why" [ "$reasons" = "ok cold: vm.kernel_args change the kernel command line" ]
jq '.cases = [.cases[0] | .set = {}]' "$out/cold.json" >"$out/flag.json"
$ZBENCH run --warm --cold -o "$out/flag" "$out/flag.json" >/dev/null 2>"$out/flag.log"
check "3. --cold boots cold" \
	[ "$(jq -r '"\(.outcome) \(.boot) \(.boot_reason)"' "$out/flag/cells.jsonl")" = "ok cold --cold" ]

echo "warm: $passed passed, $failed failed"
[ "$failed" = 0 ]
