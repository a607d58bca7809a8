#!/bin/sh
# Integration test: the cloud flavor (docs/images.md). Builds or reuses
# images/debian12-zfs-cloud.json (a qcow2 booted through the Debian kernel's own initramfs-tools
# initrd into systemd and cloud-init, zbench-agent as a service), runs one short cell
# (tests/integration/cloud.json) and checks its record, then validates the cell's generated
# user-data with `cloud-init schema` run from the image's own root (chroot, in a private mount
# namespace: nothing is installed on the host, nothing written into the cached root).
# Prints "cloud: N passed, N failed". ZBENCH_IT_ACCEL (default auto) is passed as --accel.
set -u
cd "$(dirname "$0")/../.." || exit 1
ZBENCH=./zbench
RECIPE=images/debian12-zfs-cloud.json
ACCEL=${ZBENCH_IT_ACCEL:-auto}
out=$(mktemp -d /tmp/zbench-cloud.XXXXXX)
passed=0 failed=0

check() { # check "what" command...
	what=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "  ok   $what"
	else failed=$((failed + 1)); echo "  FAIL $what"; fi
}

start=$(date +%s)
$ZBENCH image build $RECIPE >"$out/build.log" 2>&1 || {
	tail -20 "$out/build.log"; echo "cloud: 0 passed, 1 failed"; exit 1; }
echo "  image build (or cache hit) took $(( $(date +%s) - start ))s"
img=$($ZBENCH image path $RECIPE)
root=$(jq -r '.recipe.root_hash' "$img/manifest.json")
root="$(dirname "$(dirname "$img")")/roots/$root/root"
check "the image is a qcow2 with its kernel and initrd beside it" \
	[ "$(qemu-img info --output=json "$img/disk.qcow2" | jq -r .format)" = qcow2 \
	  -a -s "$img/initrd.img" -a "$(jq -r .flavor "$img/manifest.json")" = cloud ]

start=$(date +%s)
$ZBENCH run --accel "$ACCEL" -o "$out/run" tests/integration/cloud.json >/dev/null 2>"$out/run.err"
rc=$?
echo "  run took $(( $(date +%s) - start ))s, exit status $rc"
cells="$out/run/cells.jsonl"
check "zbench run exits 0" [ "$rc" -eq 0 ]
check "the cell is ok" [ "$(jq -r .outcome "$cells" 2>/dev/null)" = ok ]
check "the record and the manifest say flavor cloud" \
	[ "$(jq -r .flavor "$cells" 2>/dev/null)$(jq -r .flavor "$out/run/manifest.json")" = cloudcloud ]
check "the guest ran the image's OpenZFS (the manifest's zfsutils version)" \
	[ -n "$(jq -r '.effective.zfs_version | tostring' "$cells" 2>/dev/null |
		grep -F "$(jq -r .zfs_version "$img/manifest.json" | cut -d- -f1)")" ]
check "the guest ran the image's kernel" \
	[ "$(jq -r '.guest.kernel' "$cells" 2>/dev/null | awk '{print $1}' | sed 's/^Linux //')" != "" \
	  -a -n "$(jq -r '.guest.kernel' "$cells" | grep -F "$(jq -r .kernel_version "$img/manifest.json")")" ]
check "the pool config reached the guest (ashift 12, recordsize 8k, zfs_txg_timeout 7)" \
	[ "$(jq -r '[.effective.pool.ashift.value, .effective.target.recordsize.value,
		(.effective.module_params.zfs.zfs_txg_timeout | tostring)] | join(" ")' "$cells" 2>/dev/null)" = "12 8192 7" ]
check "no udev watch on the pool's disks (systemd's udevd had set them; the agent drops them)" \
	[ "$(jq -r '[.effective.disks[].udev_watch] | unique | map(tostring) | join(",")' "$cells" 2>/dev/null)" = false ]
check "the console shows the conventional boot (initramfs-tools, systemd, cloud-init, the unit)" \
	grep -q 'Begin: Loading essential drivers\|Begin: Mounting root file system' "$out"/run/cells/*/console.log
check "  ... systemd and cloud-init ran" \
	sh -c "grep -q 'systemd' $out/run/cells/*/console.log && grep -q 'cloud-init' $out/run/cells/*/console.log"
check "the overlay and the seed were removed, user-data and meta-data kept" \
	[ -z "$(ls "$out"/run/cells/*/root.qcow2 "$out"/run/cells/*/seed.iso 2>/dev/null)" \
	  -a -s "$(ls "$out"/run/cells/*/user-data | head -n1)" ]
check "meta-data's instance-id is the cell id" \
	[ "$(awk '/^instance-id:/ {print $2}' "$out"/run/cells/*/meta-data)" = "$(jq -r .cell "$cells")" ]

# Every generated user-data through the image's own cloud-init (no cloud-init on the host).
n=0 bad=0
for ud in "$out"/run/cells/*/user-data; do
	[ -e "$ud" ] || continue
	n=$((n + 1))
	unshare -m sh -c 'mount --bind "$1" "$2/mnt" && chroot "$2" cloud-init schema --config-file /mnt/user-data' \
		sh "$(dirname "$ud")" "$root" >"$out/schema.log" 2>&1 || { bad=$((bad + 1)); cat "$out/schema.log"; }
done
check "every user-data ($n) passes cloud-init schema" [ "$n" -gt 0 -a "$bad" -eq 0 ]
# The check can fail: a key cloud-init does not know must be rejected.
printf '#cloud-config\nhostname: [not, a, string]\n' > "$out/bad-user-data"
mkdir -p "$out/bad" && mv "$out/bad-user-data" "$out/bad/user-data"
check "cloud-init schema rejects a bad user-data (the check can fail)" \
	sh -c '! unshare -m sh -c "mount --bind \"\$1\" \"\$2/mnt\" && chroot \"\$2\" cloud-init schema --config-file /mnt/user-data" sh "$1" "$2" >/dev/null 2>&1' \
	sh "$out/bad" "$root"

echo "cloud: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  run directory kept: $out"; fi
[ "$failed" -eq 0 ]
