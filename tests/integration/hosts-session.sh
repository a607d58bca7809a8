#!/bin/sh
# Integration test: --hosts with a libvirt daemon as one of the hosts. This machine has no
# systemd and a system daemon would share /etc/libvirt, /run/libvirt and the image cache with
# everything else here (docs/scale-out.md), so the test starts a session libvirtd of its own,
# as the unprivileged user libvirt-qemu (created by libvirt-daemon-system) with every XDG
# directory in a scratch folder, and runs zbench as that user on two hosts of two kinds:
# qemu:///session (the daemon: the channel's stream over libvirt's RPC, AUTODESTROY, the end of
# the VM from domain events) and an embedded root. A 2-cell slice of parallel.json, one slot
# each: every cell ok, both hosts used and named in the records. The image is a copy of the
# cached one in the scratch folder (the user cannot read root's cache); the daemon is stopped
# by its pid at the end. Prints "hosts-session: N passed, N failed" (or skips without the user).
set -u
cd "$(dirname "$0")/../.." || exit 1
ZBENCH=$(pwd)/zbench
USR=libvirt-qemu
if ! id "$USR" >/dev/null 2>&1 || ! command -v runuser >/dev/null || ! command -v libvirtd >/dev/null; then
	echo "hosts-session: skipped (needs the user $USR, runuser and libvirtd)"
	exit 0
fi
img=$($ZBENCH image path images/debian12-zfs.json 2>/dev/null) || {
	echo "hosts-session: 0 passed, 1 failed (no cached image: zbench image build images/debian12-zfs.json)"; exit 1; }
S=$(mktemp -d /tmp/zbench-hosts-session.XXXXXX)
chmod 755 "$S"
daemon=
. tests/check.inc
stop_daemon() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null
	daemon=
}
trap stop_daemon EXIT

mkdir -p "$S/cache/images" "$S/home" "$S/config/libvirt" "$S/runtime" "$S/xcache" "$S/data"
cp -a "$img" "$S/cache/images/"
printf 'stdio_handler = "file"\n' > "$S/config/libvirt/qemu.conf"  # no virtlogd
jq '.name = "hosts-session" | .axes[0].values |= .[:2]' tests/integration/parallel.json > "$S/m.json"
chown -R "$USR" "$S"
chmod 700 "$S/runtime"
as_user() {
	runuser -u "$USR" -- env HOME="$S/home" XDG_CONFIG_HOME="$S/config" \
		XDG_RUNTIME_DIR="$S/runtime" XDG_CACHE_HOME="$S/xcache" XDG_DATA_HOME="$S/data" "$@"
}
as_user libvirtd --timeout 0 >"$S/libvirtd.log" 2>&1 &
for i in $(seq 50); do
	[ -S "$S/runtime/libvirt/libvirt-sock" ] && [ -s "$S/runtime/libvirt/libvirtd.pid" ] && break
	sleep 0.2
done
daemon=$(cat "$S/runtime/libvirt/libvirtd.pid" 2>/dev/null)
check "a session libvirtd of our own is up" [ -n "$daemon" ]

h1="qemu:///session" h2="qemu:///embed?root=$S/e1"
start=$(date +%s)
as_user "$ZBENCH" run --accel tcg --cache-dir "$S/cache" --hosts "$h1,$h2" -o "$S/run" "$S/m.json" \
	>/dev/null 2>"$S/run.log"
rc=$?
echo "  2 cells on a daemon and an embedded root: $(( $(date +%s) - start ))s, exit status $rc"
check "zbench run --hosts exits 0" [ "$rc" -eq 0 ]
check "2 ok records, each cell once" \
	[ "$(jq -r .outcome "$S/run/cells.jsonl" | grep -c '^ok$')" -eq 2 -a "$(jq -r .cell "$S/run/cells.jsonl" | sort -u | wc -l)" -eq 2 ]
check "one cell on each host, each record naming its host" \
	[ "$(jq -r .host "$S/run/cells.jsonl" | sort)" = "$(printf '%s\n%s\n' "$h1" "$h2" | sort)" ]
check "no domain left on the daemon" [ -z "$(as_user virsh -q -c "$h1" list --all --name 2>/dev/null)" ]
stop_daemon

echo "hosts-session: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$S"; else echo "  kept: $S"; tail -5 "$S/run.log"; fi
[ "$failed" -eq 0 ]
