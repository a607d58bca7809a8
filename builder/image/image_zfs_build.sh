#!/bin/sh
# Build and install OpenZFS inside an image root (run in a chroot by builder/image/image_zfs_src.c).
#
#   image_zfs_build.sh KVER JOBS [CONFIGURE_OPTION...]
#
# The source tree is bind-mounted at /usr/src/zbench-zfs and kept between builds (the cache's
# zfs-build/<identity>/tree): configure runs only when the tree has never been configured or its
# kernel or options changed, and make rebuilds only what changed since the last build. ccache
# (its directory bind-mounted at /var/cache/zbench-ccache) catches what make cannot (a file that
# a patch touched and the next build restored). Only what the appliance uses is built: the
# kernel modules, the libraries zpool and zfs link, zpool, zfs, zvol_id and the udev rules
# (libzpool, zdb, ztest, zed and the test suite are not).
set -eu

kver=$1
jobs=$2
shift 2

tree=/usr/src/zbench-zfs
export CCACHE_DIR=/var/cache/zbench-ccache
export CCACHE_BASEDIR=$tree
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-4G}
if [ -d /usr/lib/ccache ]; then
	PATH=/usr/lib/ccache:$PATH
fi
export PATH
cd "$tree"

# Debian splits a kernel's headers: the flavour's directory (the build directory: .config,
# generated headers, Module.symvers) has a Makefile that includes the common source directory's,
# which holds include/linux. configure greps some headers in the source directory directly
# (miscdevice.h for /dev/zfs's minor), so name both.
obj=/usr/src/linux-headers-$kver
src=$(sed -n 's|^include \(/usr/src/[^ ]*\)/Makefile$|\1|p' "$obj/Makefile" | head -n 1)
if [ -z "$src" ] || [ ! -d "$src/include/linux" ]; then
	src=$obj
fi

stamp=.zbench-configured
want="kver=$kver linux=$src options=$*"
if [ ! -f Makefile ] || [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
	echo "zfs-build: configure ($want)"
	rm -f "$stamp"
	# Debian's patches change configure.ac and config/*.m4 (dh_autoreconf regenerates them).
	if [ ! -x configure ] || [ -d debian/patches ]; then
		autoreconf -fi
	fi
	./configure --prefix=/usr --sysconfdir=/etc --with-config=all \
		--with-linux="$src" --with-linux-obj="$obj" \
		--with-udevdir=/lib/udev --with-udevruledir=/lib/udev/rules.d \
		--disable-pyzfs --disable-sysvinit --disable-systemd "$@"
	echo "$want" >"$stamp"
fi

echo "zfs-build: modules"
make -j"$jobs" -C module
echo "zfs-build: libraries"
for d in libavl libicp libshare libspl libtpool libzstd libefi libnvpair libzutil libunicode \
	libuutil libzfs_core libzfs; do
	[ -d "lib/$d" ] && make -j"$jobs" -C "lib/$d"
done
echo "zfs-build: commands"
for d in cmd/zpool cmd/zfs cmd/zvol_id udev; do
	make -j"$jobs" -C "$d"
done

echo "zfs-build: install"
make -C module modules_install
for d in lib/libnvpair lib/libuutil lib/libzfs_core lib/libzfs cmd/zpool cmd/zfs cmd/zvol_id udev; do
	make -C "$d" install
done
ldconfig
depmod -a "$kver"
if command -v ccache >/dev/null; then
	ccache -s | sed 's/^/zfs-build: ccache: /' || true
fi
modinfo -k "$kver" -F version zfs
