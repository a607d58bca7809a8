#!/bin/sh
# Install what zbench needs on a Debian 12 host, and nothing that is already there.
#
# The Debian mirror is taken from the host's own apt configuration (so a local mirror or proxy
# the user set up is honoured); we only add the 'contrib' component and bookworm-backports
# beside it. Usage: install-deps.sh [--check]   (--check lists what is missing, installs nothing)
set -eu

PKGS="build-essential pkg-config libjansson-dev libssl-dev libblkid-dev
qemu-system-x86 qemu-utils debootstrap xz-utils zstd cpio kmod
fio jq gnuplot-nox clang libclang-rt-14-dev libaio-dev liburing-dev libzstd-dev"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing="$missing $p"
done

if [ "${1:-}" = "--check" ]; then
	[ -z "$missing" ] && { echo "all host packages present"; exit 0; }
	echo "missing:$missing"; exit 1
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
	missing="$missing"  # force an update below
	updated=no
fi

if [ -n "$missing" ] || [ "${updated:-yes}" = no ]; then
	$SUDO apt-get update -q
fi
if [ -n "$missing" ]; then
	echo "install-deps: installing$missing"
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
fi
echo "install-deps: host packages ready"
