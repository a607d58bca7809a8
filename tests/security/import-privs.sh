#!/bin/sh
# `zbench image import` runs nothing of QEMU's as root on someone else's qcow2 (docs/security.md,
# "Imported images", the sandbox): qemu-img and libguestfs's QEMU run as the unprivileged QEMU user
# (zbench-qemu), with no supplementary groups, NoNewPrivs, no capabilities, in a PID namespace of
# their own, in a private directory; the user's file (mode 0600, root's) reaches them as a copy
# made from a descriptor; what they leave running dies with the sandbox; nothing is written
# outside the import's own directories, which are gone afterwards. No VM boots: libguestfs is
# pointed at a stand-in QEMU (LIBGUESTFS_HV) that records who it runs as, tries to read the user's
# file and to write where it must not, starts a process meant to outlive it, and fails; qemu-img
# is a wrapper (first on PATH) that records who it runs as. The libguestfs appliance is an empty
# stand-in too ($ZBENCH_GUESTFS_APPLIANCE), so no supermin build runs. A backing file naming a
# host file is refused before any of it runs. Prints "import-privs: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
ZBENCH=${ZBENCH:-$(pwd)/zbench}
. tests/check.inc
if [ "$(id -u)" -ne 0 ] || ! id zbench-qemu >/dev/null 2>&1 || ! command -v qemu-img >/dev/null; then
	# not root: the sandbox is zbench's own user, nothing to drop
	echo "import-privs: needs root, the zbench-qemu user and qemu-img (builder/install-deps.sh); skipped"
	echo "import-privs: 0 passed, 0 failed"
	exit 0
fi
t=$(mktemp -d /tmp/zbench-sec-import.XXXXXX)
quid=$(id -u zbench-qemu)
real_qemu_img=$(command -v qemu-img)
mark="31$$"

# Records the stand-ins write: a directory only they (and we) write to, outside everything else.
mkdir -m 0755 "$t/bin" && mkdir -m 0777 "$t/rec" && mkdir -m 0755 "$t/appliance" &&
	: >"$t/appliance/README.fixed" && : >"$t/appliance/kernel" && : >"$t/appliance/initrd" &&
	: >"$t/appliance/root" || exit 1
chmod 0755 "$t"
# creds: "uid=U nnp=N groups=[G] cap=C" of the process that runs it
creds='creds() { awk -v uid="$(id -u)" '"'"'/^NoNewPrivs:/ { n = $2 } /^CapEff:/ { c = $2 }
	/^Groups:/ { sub(/^Groups:[ \t]*/, ""); sub(/[ \t]*$/, ""); g = $0 }
	END { printf "uid=%s nnp=%s groups=[%s] cap=%s ", uid, n, g, c }'"'"' /proc/self/status; }'
cat >"$t/bin/qemu-img" <<EOF
#!/bin/sh
$creds
creds >>$t/rec/qemu-img.log
exec $real_qemu_img "\$@"
EOF
cat >"$t/bin/qemu-hv" <<EOF
#!/bin/sh
$creds
# libguestfs's QEMU, as the sandbox runs it
{
	creds
	printf 'pidns=%s cwd=%s tmpdir=%s home=%s' "\$(readlink /proc/self/ns/pid)" "\$(pwd)" "\$TMPDIR" "\$HOME"
	echo
} >>$t/rec/hv.log
# (touch, not a redirection: a failed redirection of a builtin ends sh)
cat $t/src/clean.qcow2 >/dev/null 2>&1 && echo "read the user's file" >>$t/rec/escapes
touch $t/src/planted 2>/dev/null && echo "wrote beside the user's file" >>$t/rec/escapes
touch $t/cache/planted 2>/dev/null && echo "wrote into the cache" >>$t/rec/escapes
touch /etc/zbench-planted-$$ 2>/dev/null && echo "wrote into /etc" >>$t/rec/escapes
echo tried >>$t/rec/tried
# a process meant to outlive the import
setsid sh -c 'exec sleep $mark' </dev/null >/dev/null 2>&1 &
# "hang": wait here (libguestfs waits for us) until zbench is killed
[ -e $t/rec/hang ] && exec sleep 1$mark
exit 1
EOF
chmod 0755 "$t/bin/qemu-img" "$t/bin/qemu-hv"

# The user's files: root's, mode 0600, in a directory only root may enter.
mkdir -m 0700 "$t/src" "$t/cache" || exit 1
qemu-img create -q -f qcow2 "$t/src/clean.qcow2" 64M && chmod 0600 "$t/src/clean.qcow2" || exit 1
printf 'SECRET-%s\n' "$$" >"$t/src/secret"
qemu-img create -q -f qcow2 -b "$t/src/secret" -F raw "$t/src/back.qcow2" 64M || exit 1
sha_before=$(sha256sum "$t/src/clean.qcow2")

run_import() { # FILE: the import, with the stand-ins
	env PATH="$t/bin:$PATH" LIBGUESTFS_BACKEND=direct LIBGUESTFS_HV="$t/bin/qemu-hv" \
		ZBENCH_GUESTFS_APPLIANCE="$t/appliance" \
		timeout 300 "$ZBENCH" image import --cache-dir "$t/cache" "$1"
}

run_import "$t/src/back.qcow2" >"$t/back.out" 2>"$t/back.err"
rc=$?
check "backing file naming a host file: refused (exit 2)" [ "$rc" -eq 2 ]
check "backing file: refused by the header check, before the sandbox" \
	sh -c "grep -q 'it has a backing file' '$t/back.err' && ! grep -q 'sandbox\|libguestfs' '$t/back.err'"
check "backing file: no qemu-img and no QEMU ran on it" \
	sh -c "[ ! -e '$t/rec/qemu-img.log' ] && [ ! -e '$t/rec/hv.log' ]"

run_import "$t/src/clean.qcow2" >"$t/clean.out" 2>"$t/clean.err"
rc=$?
sleep 1
check "the stand-in QEMU fails the import (exit $rc, not 0), with libguestfs's error" \
	sh -c "[ $rc -ne 0 ] && grep -q 'libguestfs' '$t/clean.err'"
check "qemu-img ran (QEMU's second opinion on the header)" [ -s "$t/rec/qemu-img.log" ]
check "qemu-img never ran as root (uid $quid, NoNewPrivs 1, no groups, no capabilities)" \
	sh -c "[ -s '$t/rec/qemu-img.log' ] &&
		! grep -v '^uid=$quid nnp=1 groups=\[\] cap=0000000000000000 ' '$t/rec/qemu-img.log' | grep -q ."
check "libguestfs started its QEMU" [ -s "$t/rec/hv.log" ]
check "libguestfs's QEMU ran as zbench-qemu (uid $quid) with NoNewPrivs 1" \
	sh -c "[ -s '$t/rec/hv.log' ] && ! grep -v '^uid=$quid nnp=1 ' '$t/rec/hv.log' | grep -q ."
check "libguestfs's QEMU had no supplementary groups and no capabilities" \
	sh -c "[ -s '$t/rec/hv.log' ] && ! grep -v ' groups=\[\] cap=0000000000000000 ' '$t/rec/hv.log' | grep -q ."
check "libguestfs's QEMU ran in a PID namespace of its own" \
	sh -c "[ -s '$t/rec/hv.log' ] && ! grep -qF 'pidns=$(readlink /proc/self/ns/pid) ' '$t/rec/hv.log'"
check "libguestfs's QEMU worked in a private directory (cwd, TMPDIR, HOME under /var/tmp/zbench-sandbox.*)" \
	sh -c "[ -s '$t/rec/hv.log' ] && ! grep -v 'cwd=/var/tmp/zbench-sandbox\.[^/ ]* tmpdir=/var/tmp/zbench-sandbox\.[^/ ]*/tmp home=/var/tmp/zbench-sandbox\.' '$t/rec/hv.log' | grep -q ."
check "the sandbox could not read the user's file, nor write beside it, into the cache or /etc" \
	sh -c "[ -s '$t/rec/tried' ] && [ ! -e '$t/rec/escapes' ] && [ ! -e /etc/zbench-planted-$$ ]"
check "what the sandbox left running died with it" \
	sh -c "[ -s '$t/rec/tried' ] && ! pgrep -x -f 'sleep $mark' >/dev/null"
check "the user's file is unchanged" sh -c "[ \"\$(sha256sum '$t/src/clean.qcow2')\" = '$sha_before' ]"
sbdir=$(sed -n 's/.* cwd=\([^ ]*\) .*/\1/p' "$t/rec/hv.log" 2>/dev/null | head -1)
check "nothing is left: no cache entry (its lock only), no sandbox directory ($sbdir)" \
	sh -c "[ -n '$sbdir' ] && [ ! -e '$sbdir' ] &&
		[ -z \"\$(ls '$t/cache/images' 2>/dev/null | grep -v '\.lock\$')\" ]"

# zbench killed in the middle of an import (SIGKILL: no clean-up of its own): the sandbox and
# everything in it die with it
: >"$t/rec/hang"
rm -f "$t/rec/hv.log" "$t/rec/tried"
env PATH="$t/bin:$PATH" LIBGUESTFS_BACKEND=direct LIBGUESTFS_HV="$t/bin/qemu-hv" \
	ZBENCH_GUESTFS_APPLIANCE="$t/appliance" \
	"$ZBENCH" image import --cache-dir "$t/cache" "$t/src/clean.qcow2" >"$t/kill.out" 2>"$t/kill.err" &
zpid=$!
for i in $(seq 1 100); do pgrep -x -f "sleep 1$mark" >/dev/null && break; sleep 0.1; done
check "zbench killed mid-import: its stand-in QEMU was running" \
	sh -c "pgrep -x -f 'sleep 1$mark' >/dev/null"
kill -KILL $zpid 2>/dev/null
wait $zpid 2>/dev/null
gone() { for i in $(seq 1 30); do pgrep -x -f "sleep 1$mark" >/dev/null || return 0; sleep 0.1; done; return 1; }
check "  and the sandbox died with zbench (nothing of it left running)" gone
# its directory stays (zbench had no chance to remove it); the next import removes it
killdir=$(sed -n 's/.* cwd=\([^ ]*\) .*/\1/p' "$t/rec/hv.log" 2>/dev/null | head -1)
rm -f "$t/rec/hang"
[ -d "$killdir" ] && touch -c -d '-2 minutes' "$killdir" # a sweep takes none younger than a minute
run_import "$t/src/clean.qcow2" >/dev/null 2>&1
check "  and the next import removed what it left in /var/tmp ($killdir)" \
	sh -c "[ -n '$killdir' ] && [ ! -e '$killdir' ]"

pkill_mark=$(pgrep -x -f "sleep 1?$mark")
[ -n "$pkill_mark" ] && kill $pkill_mark 2>/dev/null
rm -f "/etc/zbench-planted-$$"
echo "import-privs: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$t"; else echo "  kept: $t"; fi
[ "$failed" -eq 0 ]
