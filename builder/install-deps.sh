#!/bin/sh
# Install what zbench needs on a Debian 12 host, and nothing that is already there.
#
# The Debian mirror is taken from the host's own apt configuration (so a local mirror or proxy
# the user set up is honoured); we only add the 'contrib' component and bookworm-backports
# beside it. Usage: install-deps.sh [--check] [--slurm]   (--check lists what is missing,
# installs nothing)
#
# --slurm adds Slurm (slurm-wlm: slurmctld, slurmd, the client commands) and munge, for
# tests/integration/slurm.sh (make integration-slow), which starts both with a configuration of
# its own; a cluster's nodes have their own Slurm (docs/scale-out.md). Debian's packages start no
# daemon here (no systemd), and nothing else needs them.
#
# libguestfs (the cloud flavor's qcow2, docs/images.md) boots a small appliance built by
# supermin from the host's own kernel: a container without /boot/vmlinuz-* needs
# linux-image-amd64 (nothing runs it on the host). genisoimage writes the per-cell NoCloud seed.
#
# fio-examples: fio's own job files, which tests/fio-examples.sh converts or refuses one by one.
# strace and valgrind: tests/engine-vs-fio-short.sh (make golden) counts our engine's system calls
# and instructions per I/O against fio's (docs/engine.md, "Cost per I/O against fio").
#
# openssh-server: tests/integration/hosts-ssh.sh runs cells on a libvirt daemon reached over a
# real ssh connection (an sshd of the test's own on 127.0.0.1; nothing listens otherwise).
#
# QEMU never runs as root: when zbench runs as root, the qemu backend starts QEMU as the system
# user zbench-qemu (docs/security.md), created here with no home and no shell, in group kvm
# (for /dev/kvm) where that group exists.
#
# QEMU comes from bookworm-backports (10.x), not bookworm (7.2): under 7.2's TCG the backports
# 6.12 kernel (images/debian12-bpo-zfs23.json) double-faults at boot, and an A/B comparison of
# two images is only fair if both ran under the same QEMU (docs/images.md).
set -eu

PKGS="build-essential pkg-config libjansson-dev libssl-dev libblkid-dev
debootstrap xz-utils zstd cpio kmod
fio fio-examples jq strace valgrind python3-yaml python3-jsonschema libsqlite3-dev sqlite3 chromium gnuplot-nox clang libclang-rt-14-dev libaio-dev liburing-dev libzstd-dev
libvirt-dev libvirt-daemon-driver-qemu libvirt-daemon-system libvirt-clients libxml2-utils
libguestfs-dev libguestfs-tools genisoimage
openssh-server openssh-client
nbdkit nbdkit-plugin-dev libnbd-bin"
QEMU_PKGS="qemu-system-x86 qemu-system-data qemu-utils"
QEMU_MIN="1:10~"	# Debian's epoch; '~' lets 10.0~rc1 count
QEMU_USER=zbench-qemu

installed() {
	dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

qemu_version() {
	dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null || true
}

check=no
for a in "$@"; do
	case $a in
	--check) check=yes ;;
	--slurm) PKGS="$PKGS slurm-wlm munge" ;;
	*) echo "install-deps: unknown option '$a' (--check, --slurm)" >&2; exit 2 ;;
	esac
done

missing=""
for p in $PKGS; do
	installed "$p" || missing="$missing $p"
done
# libguestfs (image import) boots its appliance on the host's own kernel from /boot (supermin):
# a container has none, so Debian's generic kernel package is installed for it.
if ! ls /boot/vmlinuz-* >/dev/null 2>&1 && ! installed linux-image-amd64; then
	missing="$missing linux-image-amd64"
fi
qemu_missing=""
for p in $QEMU_PKGS; do
	if ! installed "$p" ||
		! dpkg --compare-versions "$(dpkg-query -W -f='${Version}' "$p")" ge "$QEMU_MIN"; then
		qemu_missing="$qemu_missing $p"
	fi
done

user_missing=""
getent passwd "$QEMU_USER" >/dev/null || user_missing=yes

if [ "$check" = yes ]; then
	[ -z "$missing$qemu_missing$user_missing" ] && { echo "all host packages present"; exit 0; }
	[ -n "$missing" ] && echo "missing:$missing"
	[ -n "$qemu_missing" ] && echo "missing or older than QEMU 10 (need bookworm-backports):$qemu_missing"
	[ -n "$user_missing" ] && echo "missing: the system user $QEMU_USER (QEMU runs as it)"
	exit 1
fi

if [ "$(id -u)" != 0 ]; then
	SUDO=sudo
else
	SUDO=
fi

# The first deb822 or one-line Debian entry on the host tells us which mirror to use.
mirror_uri() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk '/^URIs:/ {u=$2} /^Suites:/ && / bookworm( |$)/ && u !~ /security/ {print u; exit}' "$f"
	done
	[ -r /etc/apt/sources.list ] &&
		awk '$1=="deb" && $3=="bookworm" {print $2; exit}' /etc/apt/sources.list
	true
}

list=/etc/apt/sources.list.d/zbench.sources
if [ ! -e "$list" ]; then
	uri=$(mirror_uri | head -n1)
	if [ -z "$uri" ]; then
		echo "install-deps: no Debian bookworm entry in /etc/apt/sources.list*: add one first" >&2
		exit 1
	fi
	echo "install-deps: adding contrib and bookworm-backports from $uri to $list"
	$SUDO tee "$list" >/dev/null <<EOT
# Added by zbench (builder/install-deps.sh): contrib holds zfs-dkms, backports the newer OpenZFS.
Types: deb
URIs: $uri
Suites: bookworm bookworm-updates
Components: contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $uri
Suites: bookworm-backports
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOT
	updated=no
fi

# Images that build OpenZFS from Debian's source package (images/debian12-zfs-src.json) fetch it
# with 'apt-get source zfs-linux': that needs a deb-src entry for bookworm's contrib. A file of
# its own, so a host whose zbench.sources predates it gets it too.
src_list=/etc/apt/sources.list.d/zbench-src.sources
if [ ! -e "$src_list" ]; then
	uri=$(mirror_uri | head -n1)
	if [ -z "$uri" ]; then
		echo "install-deps: no Debian bookworm entry in /etc/apt/sources.list*: add one first" >&2
		exit 1
	fi
	echo "install-deps: adding bookworm's source packages (deb-src) from $uri to $src_list"
	$SUDO tee "$src_list" >/dev/null <<EOT
# Added by zbench (builder/install-deps.sh): 'apt-get source zfs-linux' for OpenZFS built from
# Debian's source package (docs/images.md).
Types: deb-src
URIs: $uri
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOT
	updated=no
fi

if [ -n "$missing$qemu_missing" ] || [ "${updated:-yes}" = no ]; then
	$SUDO apt-get update -q
fi
if [ -n "$missing" ]; then
	echo "install-deps: installing$missing"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
fi
if [ -n "$qemu_missing" ]; then
	echo "install-deps: installing QEMU from bookworm-backports ($QEMU_PKGS)"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
		-t bookworm-backports $QEMU_PKGS
fi
if [ -n "$user_missing" ]; then
	echo "install-deps: creating the system user $QEMU_USER (QEMU runs as it, never as root)"
	$SUDO useradd --system --user-group --no-create-home --home-dir /nonexistent \
		--shell /usr/sbin/nologin --comment "zbench QEMU processes" "$QEMU_USER"
fi
if getent group kvm >/dev/null && ! id -nG "$QEMU_USER" | tr ' ' '\n' | grep -qx kvm; then
	$SUDO usermod -a -G kvm "$QEMU_USER"
fi
v=$(qemu_version)
if ! dpkg --compare-versions "$v" ge "$QEMU_MIN"; then
	echo "install-deps: qemu-system-x86 is '${v:-not installed}', zbench needs >= 10" \
		"(bookworm-backports): is bookworm-backports in apt's sources?" >&2
	exit 1
fi
echo "install-deps: host packages ready (QEMU $v)"
