#!/bin/sh
# Integration test of the disk buses beyond virtio and NVMe (docs/disks.md): AHCI (sata), USB 2.0
# (usb-ehci) and USB 3 (qemu-xhci) mass storage, which the generic kernel of the images drives.
# One cell on images/debian12-zfs-fio.json (the default image's root), named by the matrix's
# "image" key (no -i): a pool with a SATA log and USB 2.0 + USB 3 cache devices, each under its
# by-id name, none of the disks watched by udevd (docs/disks.md, "Partition links and udev's
# watch"). The refusal of a bus an image's kernel lacks is tests/unit/test_disk_check.c (every
# image here has all six).
# One cell of a 2 s workload: about a minute under TCG. Prints "buses: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
ZBENCH=./zbench
out=$(mktemp -d /tmp/zbench-buses.XXXXXX)
passed=0 failed=0

check() { # check "what" command...
	what=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "  ok   $what"
	else failed=$((failed + 1)); echo "  FAIL $what"; fi
}

$ZBENCH image build images/debian12-zfs-fio.json >/dev/null || { echo "buses: 0 passed, 1 failed"; exit 1; }

cat >"$out/buses.json" <<'JSON'
{
  "zbench": 1,
  "name": "buses",
  "image": "images/debian12-zfs-fio.json",
  "base": {
    "vm": { "memory": "1G", "cpus": 1 },
    "disks": [ { "name": "d0", "size": "128M" },
               { "name": "s0", "size": "128M", "model": "sata-ssd", "bus": "sata" },
               { "name": "u0", "size": "128M", "model": "usb2-stick", "bus": "usb2" },
               { "name": "x0", "size": "128M", "bus": "usb3" } ],
    "pool": { "vdevs": [ { "type": "stripe", "disks": ["d0"] } ],
              "log": [ { "type": "stripe", "disks": ["s0"] } ], "cache": ["u0", "x0"] },
    "datasets": [ { "name": "fs", "properties": { "sync": "always" } } ],
    "workload": { "target": "fs", "rw": "randwrite", "bs": "4k", "size": "16M", "runtime": "2s", "time_based": true }
  }
}
JSON

# ---- one cell on the image the matrix names ----------------------------------------------------
$ZBENCH run -o "$out/run" "$out/buses.json" >/dev/null 2>&1
c="$out/run/cells.jsonl"
st=$(jq -r .effective.zpool_status "$c" 2>/dev/null)
check "cell ok" [ "$(jq -r .outcome "$c" 2>/dev/null)" = ok ]
check "the matrix's image was used" \
	[ "$(jq -r .image.recipe "$out/run/manifest.json")" = images/debian12-zfs-fio.json ]
check "SATA log as ata-QEMU_HARDDISK_zb-s0" \
	sh -c 'echo "$1" | grep -A1 -E "^\s+logs" | grep -q "ata-QEMU_HARDDISK_zb-s0-part1"' - "$st"
check "USB 2.0 and USB 3 cache as usb-QEMU_QEMU_HARDDISK_zb-u0/x0-0:0" \
	[ "$(echo "$st" | grep -A2 -E '^\s+cache' | grep -cE 'usb-QEMU_QEMU_HARDDISK_zb-(u0|x0)-0:0-part1')" -eq 2 ]
check "SATA SSD model non-rotational (AHCI rotation rate), USB rotational" \
	[ "$(jq -r '[.effective.disks.s0.rotational, .effective.disks.u0.rotational, .effective.disks.x0.rotational] | join(",")' "$c")" = "0,1,1" ]
check "no udev watch on any disk (its second partition-table read raced zpool create)" \
	[ "$(jq -r '[.effective.disks[].udev_watch] | unique | map(tostring) | join(",")' "$c")" = false ]
check "the SATA log was written to (sync=always)" \
	[ "$(jq '.telemetry_summary.disks.s0.util_pct > 0' "$c")" = true ]

echo "buses: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; fi
[ "$failed" -eq 0 ]
