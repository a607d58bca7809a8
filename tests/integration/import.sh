#!/bin/sh
# Integration test of `zbench image import` (docs/images.md, "Importing a cloud image") on two
# stand-ins for users' cloud images (tests/integration/import-fixtures.sh, cached):
#   1. a Debian 12 image with systemd, cloud-init and zfs-dkms: imported into a private cache;
#      the manifest says kernel 6.1.0-*-amd64, OpenZFS 2.1.11, the agent's SHA-256; the disk in
#      the cache holds the agent, the engine and the enabled unit (read back with guestfish);
#      a second import is a cache hit that starts no libguestfs
#      and one short cell boots it (tests/integration/cloud.json, -i FILE.qcow2)
#   2. an image without ZFS: refused, exit status 1, one line naming the file and the module;
#      nothing is left in the cache
#   3. neither source file changed (SHA-256 before and after)
# Three libguestfs launches and one cloud cell: 2-5 minutes under TCG (fixtures cached).
# Prints "import: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
ZBENCH=./zbench
export LIBGUESTFS_BACKEND=${LIBGUESTFS_BACKEND:-direct}
[ -e /dev/kvm ] && export LIBGUESTFS_BACKEND_SETTINGS=${LIBGUESTFS_BACKEND_SETTINGS:-force_tcg}
out=$(mktemp -d /var/tmp/zbench-import.XXXXXX)
trap 'rm -rf "$out"' EXIT
cache="$out/cache"
passed=0 failed=0

check() { # check "what" command...
	what=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "  ok   $what"
	else failed=$((failed + 1)); echo "  FAIL $what"; fi
}

fx=$(tests/integration/import-fixtures.sh) || { echo "import: 0 passed, 1 failed"; exit 1; }
zfs="$fx/zfs.qcow2" nozfs="$fx/nozfs.qcow2"
full=$($ZBENCH image path images/debian12-zfs.json)
kver=$(jq -r .kernel_version "$full/manifest.json")
zfs_sha=$(sha256sum "$zfs" | cut -c1-64)
nozfs_sha=$(sha256sum "$nozfs" | cut -c1-64)
agent_sha=$(sha256sum guest/zbench-agent | cut -c1-64)
unit_sha=$(sha256sum guest/zbench-agent.service | cut -c1-64)

# ---- 1. an image with ZFS ------------------------------------------------------------------
t0=$(date +%s)
$ZBENCH image import --cache-dir "$cache" "$zfs" >"$out/import1.out" 2>"$out/import1.err"
rc=$?
t_import=$(($(date +%s) - t0))
sed 's/^/    /' "$out/import1.err"
check "import succeeds" [ "$rc" -eq 0 ]
dir=$($ZBENCH image path --cache-dir "$cache" "$zfs" 2>/dev/null)
m="$dir/manifest.json"
check "image path finds it in the cache" [ -f "$m" ]
check "flavor cloud, imported" [ "$(jq -r '"\(.flavor) \(.imported)"' "$m")" = "cloud true" ]
check "kernel $kver" [ "$(jq -r .kernel_version "$m")" = "$kver" ]
check "OpenZFS 2.1.11 (the module's modinfo version)" \
	[ "$(jq -r .openzfs_version "$m")" = 2.1.11 ]
check "the module is the DKMS one" \
	[ "$(jq -r .zfs.module "$m")" = "/lib/modules/$kver/updates/dkms/zfs.ko" ]
check "OS: debian 12, root by UUID" \
	sh -c 'jq -r "\"\\(.os.distro) \\(.os.version) \\(.boot.cmdline)\"" "$1" |
		grep -qE "^debian 12\.[0-9]+ root=UUID=[-0-9a-f]{36} ro$"' - "$m"
check "source: path and SHA-256" \
	[ "$(jq -r '"\(.source.path) \(.source.sha256)"' "$m")" = "$(realpath "$zfs") $zfs_sha" ]
check "the agent's SHA-256" \
	[ "$(jq -r '.injected["/usr/local/sbin/zbench-agent"].sha256' "$m")" = "$agent_sha" ]
check "the unit's SHA-256" \
	[ "$(jq -r '.injected["/etc/systemd/system/zbench-agent.service"].sha256' "$m")" = "$unit_sha" ]
check "kernel, initrd and disk beside the manifest" \
	[ -s "$dir/$(jq -r .boot.kernel "$m")" -a -s "$dir/initrd.img" -a -s "$dir/disk.qcow2" ]
check "the disk is a self-contained copy (no backing file)" \
	[ "$(qemu-img info --output=json "$dir/disk.qcow2" | jq -r '."backing-filename" // "none"')" = none ]
# Read the injected files back from the cached disk, independently of zbench.
guestfish --ro -a "$dir/disk.qcow2" -i <<'EOF' >"$out/fish.out" 2>&1
checksum sha256 /usr/local/sbin/zbench-agent
readlink /etc/systemd/system/multi-user.target.wants/zbench-agent.service
is-file /usr/bin/zbench-engine
readlink /etc/systemd/system/zfs-load-module.service
EOF
check "guestfish reads the agent back from the disk" \
	[ "$(sed -n 1p "$out/fish.out")" = "$agent_sha" ]
check "zbench-agent.service enabled, engine there, zfs-load-module masked" \
	[ "$(sed -n 2,4p "$out/fish.out" | tr '\n' ' ')" = \
	"/etc/systemd/system/zbench-agent.service true /dev/null " ]

t1=$(date +%s)
$ZBENCH image import --cache-dir "$cache" "$zfs" >/dev/null 2>"$out/import2.err"
rc=$?
t2=$(date +%s)
t_hit=$((t2 - t1))
check "second import: a cache hit" \
	sh -c '[ "$1" -eq 0 ] && grep -q "imported before: $2 (cached)" "$3"' - "$rc" "$dir" \
	"$out/import2.err"
check "  which starts no libguestfs" sh -c '! grep -q libguestfs "$1"' - "$out/import2.err"
check "image list shows it as imported" \
	sh -c '$1 image list --cache-dir "$2" | grep -q "^$3  zfs.qcow2 *imported "' - \
	"$ZBENCH" "$cache" "$(basename "$dir" | cut -c1-12)"

# ---- 1b. a cell on the imported image ------------------------------------------------------
# `zbench run -i FILE.qcow2` finds the import in the cache (no second libguestfs launch) and
# boots it as a cloud image: the image's own kernel and initrd, systemd, the injected unit.
$ZBENCH run --cache-dir "$cache" -i "$zfs" -o "$out/run" tests/integration/cloud.json \
	>"$out/run.out" 2>"$out/run.err"
rc=$?
t_run=$(($(date +%s) - t2))
tail -n 3 "$out/run.err" | sed 's/^/    /'
rec="$out/run/cells.jsonl"
check "a cell on the imported image: ok" \
	[ "$rc" -eq 0 -a "$(jq -r .outcome "$rec" 2>/dev/null)" = ok ]
check "  flavor cloud, the imported image, its kernel $kver" \
	[ "$(jq -r '"\(.flavor) \(.image)"' "$rec" 2>/dev/null)" = "cloud $(basename "$dir")" -a \
	  "$(jq -r .guest.kernel "$rec" 2>/dev/null | grep -c -F "$kver")" -eq 1 ]
check "  the pool config reached the guest (ashift 12, recordsize 8k)" \
	[ "$(jq -r '"\(.effective.pool.ashift.value) \(.effective.target.recordsize.value)"' \
		"$rec" 2>/dev/null)" = "12 8192" ]
check "  the run used the cached import (no libguestfs)" sh -c '! grep -q libguestfs "$1"' - \
	"$out/run.err"

# ---- 2. an image without ZFS ---------------------------------------------------------------
t2=$(date +%s)
$ZBENCH image import --cache-dir "$cache" "$nozfs" >/dev/null 2>"$out/refused.err"
rc=$?
t3=$(date +%s)
msg=$(grep '^zbench: ' "$out/refused.err")
echo "    $msg"
check "no ZFS: refused with status 2 (an input error)" [ "$rc" -eq 2 ]
check "  in one line naming the file, the module and the kernel" \
	sh -c 'echo "$1" | grep -qx "zbench: importing '\''$2'\'': no ZFS kernel module (zfs.ko) for its kernel $3 under /lib/modules/$3: .*"' \
	- "$msg" "$nozfs" "$kver"
check "  the error is a single line" [ "$(grep -c '^zbench: ' "$out/refused.err")" -eq 1 ]
check "  nothing left in the cache" \
	[ "$(ls "$cache/images" | grep -v '\.lock$' | wc -l)" -eq 1 ]

# ---- 3. the sources are untouched -----------------------------------------------------------
check "zfs.qcow2 unchanged" [ "$(sha256sum "$zfs" | cut -c1-64)" = "$zfs_sha" ]
check "nozfs.qcow2 unchanged" [ "$(sha256sum "$nozfs" | cut -c1-64)" = "$nozfs_sha" ]

echo "  times: import $t_import s, cache hit $t_hit s, cell $t_run s, refusal $((t3 - t2)) s"
echo "import: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
