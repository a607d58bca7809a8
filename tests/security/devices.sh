#!/bin/sh
# devices: host block devices named by a matrix (disks[].device) are data, not permission
# (docs/security.md, docs/disks.md "Passthrough"). On real loop devices, `zbench run` must refuse,
# before anything is created or written, a device that:
#   - another process holds open, even non-exclusively (read-write or read-only);
#   - is named twice in one cell (the same path, or another name of the same device);
#   - is not a node of the real /dev (a file or a device node planted in /dev/shm);
#   - would be checked and wiped here while the cell runs on another machine (a remote libvirt
#     URI from the matrix, or --hosts);
#   - two cells running at once (-j, --hosts slots) would share.
# Every run uses a recipe that does not exist: the device checks come first, so a refusal says
# so, and nothing here ever needs, builds or boots an image. Controls show the same runs get past
# the device checks (to the missing recipe) once the hostile condition is gone. The devices'
# bytes (random, where the wipe would write) are compared before and after every run.
set -u
cd "$(dirname "$0")/../.."
ZBENCH=$PWD/zbench
passed=0 failed=0
t=$(mktemp -d /tmp/zbench-sec-devices.XXXXXX)
loops="" holder="" shm="" alias=/dev/zbench-sec-alias.$$

cleanup() {
	[ -n "$holder" ] && kill "$holder" 2>/dev/null && wait "$holder" 2>/dev/null
	for l in $loops; do losetup -d "$l" 2>/dev/null; done
	[ -n "$shm" ] && rm -f $shm
	rm -f "$alias"
	rm -rf "$t"
}
trap cleanup EXIT

check() { # check "what" command...
	what=$1
	shift
	if "$@"; then
		passed=$((passed + 1))
		echo "  ok   $what"
	else
		failed=$((failed + 1))
		echo "  FAIL $what"
	fi
}

if [ "$(id -u)" -ne 0 ] || ! command -v losetup >/dev/null || ! command -v mknod >/dev/null; then
	echo "  skip: needs root, losetup and mknod (real loop devices)"
	echo "devices: 0 passed, 0 failed"
	exit 0
fi

# A loop device over a 64 MiB file with random bytes where a wipe writes (first and last MiB).
new_loop() {
	f=$t/dev$1.img
	truncate -s 64M "$f"
	dd if=/dev/urandom of="$f" bs=1M count=1 conv=notrunc status=none
	dd if=/dev/urandom of="$f" bs=1M count=1 seek=63 conv=notrunc status=none
	losetup -f --show "$f"
}
sum() { sha256sum "$1" | cut -c1-64; }

L1=$(new_loop 1) && L2=$(new_loop 2) || exit 1
loops="$L1 $L2"
S1=$(sum "$L1")
S2=$(sum "$L2")
unchanged() { [ "$(sum "$L1")" = "$S1" ] && [ "$(sum "$L2")" = "$S2" ]; }

# matrix FILE DISKS [TOP-LEVEL...] [CASES]: the disks (a JSON array) all in one stripe
matrix() {
	names=$(printf '%s' "$2" | grep -o '"name": *"[a-z0-9_]*"' | sed 's/.*"\([a-z0-9_]*\)"$/"\1"/' |
		paste -sd, -)
	cat >"$1" <<JSON
{ "zbench": 1, "name": "sec-devices", ${3:-}
  "base": { "vm": { "memory": "1G", "cpus": 1 },
    "disks": $2,
    "pool": { "vdevs": [ { "type": "stripe", "disks": [$names] } ] },
    "datasets": [ { "name": "fs" } ],
    "workload": { "target": "fs", "rw": "randwrite", "bs": "4k", "size": "8M", "runtime": "1s", "time_based": true } }
  ${4:-} }
JSON
}

# run N ARGS...: zbench run with a missing recipe into $t/out-N; stderr in $t/err-N
n=0
run() {
	n=$((n + 1))
	"$ZBENCH" run -i "$t/no-such-recipe.json" -o "$t/out-$n" "$@" >/dev/null 2>"$t/err-$n"
	echo $? >"$t/rc-$n"
}
# refused PATTERN: the last run failed with PATTERN, created nothing and wrote nothing
refused() {
	[ "$(cat "$t/rc-$n")" -ne 0 ] && grep -q -- "$1" "$t/err-$n" && [ ! -e "$t/out-$n" ] &&
		unchanged || {
		sed 's/^/    | /' "$t/err-$n"
		return 1
	}
}
# past_devices: the last run got past the device checks (to the missing recipe), wrote nothing
past_devices() {
	grep -q "no-such-recipe" "$t/err-$n" && unchanged || {
		sed 's/^/    | /' "$t/err-$n"
		return 1
	}
}
hold() { # hold MODE: a shell keeps $L1 open (exec 3<>, 3<) until killed
	rm -f "$t/held"
	sh -c "exec 3$1'$L1'; touch '$t/held'; exec sleep 120" &
	holder=$!
	i=0
	while [ ! -e "$t/held" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}
release() {
	kill "$holder"
	wait "$holder" 2>/dev/null
	holder=""
}

one='[ { "name": "p0", "device": "'$L1'" } ]'
matrix "$t/one.json" "$one"

# ---- 1. a device open in another process, non-exclusively -----------------------------------
hold "<>"
run --allow-device "$L1" "$t/one.json"
check "held open read-write by a shell (exec 3<>): refused, not written" \
	refused "is open in process $holder"
release
hold "<"
run --allow-device "$L1" "$t/one.json"
check "held open read-only by a shell (exec 3<): refused, not written" \
	refused "is open in process $holder"
release
run --allow-device "$L1" "$t/one.json"
check "control: once the shell is gone the device passes the checks" past_devices

# ---- 2. the same device twice in one cell ----------------------------------------------------
matrix "$t/twice.json" '[ { "name": "p0", "device": "'$L1'" }, { "name": "p1", "device": "'$L1'" } ]'
run --allow-device "$L1" "$t/twice.json"
check "the same path twice in a cell: refused" refused "is the same device as disk 'p0'"
ln -s "$L1" "$alias"
matrix "$t/alias.json" '[ { "name": "p0", "device": "'$L1'" }, { "name": "p1", "device": "'$alias'" } ]'
run --allow-device "$L1" --allow-device "$alias" "$t/alias.json"
check "another name (a symlink) of the same device in a cell: refused" \
	refused "is the same device as disk 'p0'"
matrix "$t/two.json" '[ { "name": "p0", "device": "'$L1'" }, { "name": "p1", "device": "'$L2'" } ]'
run --allow-device "$L1" --allow-device "$L2" "$t/two.json"
check "control: two different devices in a cell pass the checks" past_devices

# ---- 3. paths that are not nodes of the real /dev --------------------------------------------
shm="/dev/shm/zbench-sec-file.$$ /dev/shm/zbench-sec-node.$$"
truncate -s 64M "/dev/shm/zbench-sec-file.$$"
matrix "$t/shm-file.json" '[ { "name": "p0", "device": "/dev/shm/zbench-sec-file.'$$'" } ]'
run --allow-device "/dev/shm/zbench-sec-file.$$" "$t/shm-file.json"
check "a tmpfs file in /dev/shm: refused" refused "not a block device node of /dev"
mm=$(stat -c '%t %T' "$L1")
# shellcheck disable=SC2086 # major and minor in hex, two words
mknod "/dev/shm/zbench-sec-node.$$" b $(printf '%d %d' 0x${mm% *} 0x${mm#* })
matrix "$t/shm-node.json" '[ { "name": "p0", "device": "/dev/shm/zbench-sec-node.'$$'" } ]'
run --allow-device "/dev/shm/zbench-sec-node.$$" "$t/shm-node.json"
check "a block device node planted in /dev/shm (an alias of a loop device): refused" \
	refused "not a block device node of /dev"

# ---- 4. a cell on another machine: the checks and the wipe would run here --------------------
matrix "$t/remote.json" "$one" '"backend": "libvirt", "libvirt_uri": "qemu+ssh://zbench-remote.invalid/system",'
run --shared-paths --allow-device "$L1" "$t/remote.json"
check "a remote libvirt_uri in the matrix with a passthrough device: refused before connecting" \
	refused "is on another machine"
run --shared-paths --allow-device "$L1" --hosts qemu+ssh://a.invalid/system,qemu+tcp://b.invalid/system "$t/one.json"
check "--hosts with remote URIs and a passthrough device: refused before connecting" \
	refused "is on another machine"

# ---- 5. parallel cells sharing a device ------------------------------------------------------
cases='"cases": [ { "name": "a", "set": { "workload.bs": "4k" } }, { "name": "b", "set": { "workload.bs": "8k" } } ]'
matrix "$t/shared.json" "$one" "" ", $cases"
run -j 2 --allow-interference --allow-device "$L1" "$t/shared.json"
check "-j 2: two cells on one device refused (even with --allow-interference)" \
	refused "used by more than one cell at a time"
matrix "$t/repeats.json" "$one" '"repeats": 2,'
run -j 2 --allow-interference --allow-device "$L1" "$t/repeats.json"
check "-j 2: repeats of a cell on one device refused" refused "used by more than one cell at a time"
run --allow-device "$L1" "$t/shared.json"
check "control: the same two cells one at a time pass the checks" past_devices
cat >"$t/split.json" <<JSON
{ "zbench": 1, "name": "sec-devices",
  "base": { "vm": { "memory": "1G", "cpus": 1 }, "disks": [ { "name": "p0", "device": "$L1" } ],
    "pool": { "vdevs": [ { "type": "stripe", "disks": ["p0"] } ] }, "datasets": [ { "name": "fs" } ],
    "workload": { "target": "fs", "rw": "randwrite", "bs": "4k", "size": "8M", "runtime": "1s", "time_based": true } },
  "cases": [ { "name": "a", "set": {} }, { "name": "b", "set": { "disks": [ { "name": "p0", "device": "$L2" } ] } } ] }
JSON
run -j 2 --allow-interference --allow-device "$L1" --allow-device "$L2" "$t/split.json"
check "control: -j 2 with a device per cell passes the checks" past_devices

echo "devices: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
