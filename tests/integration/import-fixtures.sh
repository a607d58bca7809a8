#!/bin/sh
# Stand-ins for users' distribution cloud images, for tests/integration/import.sh.
# Usage: import-fixtures.sh   prints the fixture directory, which holds:
#   zfs.qcow2     a Debian 12 image the way a cloud image with ZFS looks: systemd, cloud-init,
#                 the generic 6.1 kernel with its initrd, zfs-dkms 2.1.11 built for it, zfsutils;
#                 one MBR partition, ext4, mounted by its label through /etc/fstab
#   nozfs.qcow2   a small Debian root that libguestfs recognises as Linux (os-release, fstab,
#                 /bin, a kernel and its modules.dep) but with no ZFS module and no zpool/zfs
#
# zfs.qcow2 is made from a COPY of the cached root of images/debian12-zfs-cloud.json (built
# first if missing: minutes; the cache entry itself is never written): the base root with
# systemd, cloud-init and initramfs-tools installed and the initrd made, as a user's cloud image
# has them; the compilers, headers, DKMS sources, docs and the big driver trees (GPU, wireless,
# media, sound) are left out to keep it small. (It once apt-get installed systemd and cloud-init
# into a copy of the base root itself: the cloud flavor's job done twice on a fresh machine.)
# Both images are written by virt-make-fs (libguestfs). They are cached in
# <cache>/test-fixtures/<key>/ where key = SHA-256 of the root's hash and FIXTURE_VERSION (bump
# it when what this script makes changes), so a second run (and CI with a warm cache) costs
# nothing; a cold run takes a few minutes under TCG.
set -eu
FIXTURE_VERSION=2
cd "$(dirname "$0")/../.."
ZBENCH=${ZBENCH:-./zbench}
CACHE=${ZBENCH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/zbench}
export LIBGUESTFS_BACKEND=${LIBGUESTFS_BACKEND:-direct}
[ -e /dev/kvm ] && export LIBGUESTFS_BACKEND_SETTINGS=${LIBGUESTFS_BACKEND_SETTINGS:-force_tcg}

log() { echo "import-fixtures: $*" >&2; }

$ZBENCH image build images/debian12-zfs-cloud.json >/dev/null
img=$($ZBENCH image path images/debian12-zfs-cloud.json)
root_hash=$(jq -r .recipe.root_hash "$img/manifest.json")
root="$CACHE/roots/$root_hash/root"
kver=$(jq -r .kernel_version "$img/manifest.json")
[ -d "$root/boot" ] || { log "no root at '$root'"; exit 1; }

key=$(echo "zbench-import-fixtures $FIXTURE_VERSION $root_hash" | sha256sum | cut -c1-64)
dir="$CACHE/test-fixtures/$key"
mkdir -p "$CACHE/test-fixtures"
exec 9>"$CACHE/test-fixtures/lock"
flock 9
if [ -f "$dir/zfs.qcow2" ] && [ -f "$dir/nozfs.qcow2" ]; then
	echo "$dir"
	exit 0
fi

work=$(mktemp -d /var/tmp/zbench-fixtures.XXXXXX)
trap 'rm -rf "$work"' EXIT
t0=$(date +%s)

# ---- zfs.qcow2 -----------------------------------------------------------------------------
log "copying the cloud flavor's root $root_hash (without compilers, headers, docs, big driver trees)"
mkdir "$work/zfs"
m="lib/modules/$kver/kernel"
tar -C "$root" --numeric-owner -cf - \
	--exclude=./usr/src --exclude=./var/lib/dkms --exclude=./usr/lib/gcc \
	--exclude=./usr/libexec/gcc --exclude=./usr/include --exclude=./usr/share/doc \
	--exclude=./usr/share/man --exclude=./usr/share/locale --exclude='./var/cache/apt/*.bin' \
	--exclude='./var/cache/apt/archives/*.deb' \
	--exclude="./$m/drivers/gpu" --exclude="./$m/drivers/net/wireless" \
	--exclude="./$m/drivers/media" --exclude="./$m/drivers/infiniband" \
	--exclude="./$m/drivers/staging" --exclude="./$m/sound" . |
	tar -C "$work/zfs" --numeric-owner -xf -

rm -f "$work/zfs/usr/sbin/policy-rc.d" "$work/zfs/etc/resolv.conf"
rm -rf "$work/zfs/var/lib/apt/lists/"*
printf 'LABEL=standin-root / ext4 errors=remount-ro 0 1\n' >"$work/zfs/etc/fstab"
echo standin >"$work/zfs/etc/hostname"
log "virt-make-fs zfs.qcow2 ($(du -sm "$work/zfs" | cut -f1) MiB)"
virt-make-fs --format=qcow2 --type=ext4 --partition=mbr --label=standin-root --size=+256M \
	"$work/zfs" "$work/zfs.qcow2"

# ---- nozfs.qcow2 ---------------------------------------------------------------------------
log "a small root without ZFS"
n="$work/nozfs"
mkdir -p "$n/etc" "$n/usr/bin" "$n/usr/sbin" "$n/usr/lib" "$n/boot" "$n/lib/modules/$kver" \
	"$n/root" "$n/tmp" "$n/var" "$n/proc" "$n/sys" "$n/dev"
ln -s usr/bin "$n/bin"
ln -s usr/sbin "$n/sbin"
ln -s usr/lib "$n/lib64"
cp -a "$root/etc/os-release" "$root/etc/debian_version" "$root/etc/passwd" "$root/etc/group" \
	"$n/etc/"
cp -aL "$root/usr/lib/os-release" "$n/usr/lib/os-release"
cp -a "$root/usr/bin/dash" "$root/usr/bin/ls" "$n/usr/bin/"
ln -s dash "$n/usr/bin/sh"
cp -a "$root/boot/vmlinuz-$kver" "$root/boot/config-$kver" "$n/boot/"
grep -v 'zfs\|spl\.ko\|zavl\|znvpair\|zcommon\|zunicode\|zlua\|zzstd\|icp\.ko' \
	"$root/lib/modules/$kver/modules.dep" >"$n/lib/modules/$kver/modules.dep"
printf 'LABEL=nozfs-root / ext4 defaults 0 1\n' >"$n/etc/fstab"
echo nozfs >"$n/etc/hostname"
virt-make-fs --format=qcow2 --type=ext4 --partition=mbr --label=nozfs-root --size=+32M \
	"$n" "$work/nozfs.qcow2"

rm -rf "$dir.tmp"
mkdir "$dir.tmp"
mv "$work/zfs.qcow2" "$work/nozfs.qcow2" "$dir.tmp/"
mv "$dir.tmp" "$dir"
log "made in $(($(date +%s) - t0)) s: $dir"
echo "$dir"
