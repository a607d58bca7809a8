#!/bin/sh
# Integration test: --hosts over a real remote transport (docs/scale-out.md). An sshd of the
# test's own, bound to 127.0.0.1 on a free port with keys made here, and a throw-away user
# (zbench-ssh, home in a scratch folder, removed at the end) that zbench runs as on both ends, as
# a cluster's one benchmark account would: zbench reaches that user's libvirt daemon as
# qemu+ssh://zbench-ssh@127.0.0.1:PORT/session exactly as it would another machine's (the libvirt
# client runs ssh, ssh runs virt-ssh-helper on the far side, which starts and talks to the
# user's daemon), beside a local embedded slot. Both "hosts" are this machine, so
# --shared-paths holds. Not the system daemon: zbench's run directories are 0700 (and root's
# image cache too), which the system daemon's QEMU user (libvirt-qemu) cannot enter unless the
# machine-wide qemu.conf is changed (docs/libvirt.md); the same user on both ends is what
# --shared-paths asks of a real cluster. A 2-cell slice of parallel.json, one slot each: every
# cell ok, both hosts used and named in the records, no domain left on the daemon, sshd saw
# the key. Prints "hosts-ssh: N passed, N failed" (or skips when sshd or libvirtd is missing).
set -u
set -u
cd "$(dirname "$0")/../.." || exit 1
ZBENCH=$(pwd)/zbench
USR=zbench-ssh
for p in /usr/sbin/sshd ssh ssh-keygen libvirtd virt-ssh-helper runuser useradd; do
	if ! command -v "$p" >/dev/null 2>&1; then
		echo "hosts-ssh: skipped (needs $p: builder/install-deps.sh installs it)"
		exit 0
	fi
done
img=$($ZBENCH image path images/debian12-zfs.json 2>/dev/null) || {
	echo "hosts-ssh: 0 passed, 1 failed (no cached image: zbench image build images/debian12-zfs.json)"; exit 1; }
# short: the daemon puts its channel sockets under $HOME/.config, and a socket path has 108 bytes
S=$(mktemp -d /tmp/zbssh.XXXXXX) || exit 1
[ -d "$S" ] || exit 1
chmod 755 "$S"
sshd_pid= made_user=
. tests/check.inc
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
as_user() { runuser -u "$USR" -- env HOME="$S/h" PATH="$S/bin:$PATH" "$@"; }
stop_all() {
	[ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null
	sshd_pid=
	if [ -n "$made_user" ]; then # the user's daemon (started by virt-ssh-helper), then the user
		pkill -u "$USR" 2>/dev/null; sleep 1; pkill -9 -u "$USR" 2>/dev/null
		userdel "$USR" 2>/dev/null
		made_user=
	fi
}
trap stop_all EXIT

# A throw-away user with a shell (sshd runs the helper through it), home in the scratch folder.
if id "$USR" >/dev/null 2>&1; then
	echo "hosts-ssh: 0 passed, 1 failed (the user $USR exists: a previous run left it? userdel $USR)"
	exit 1
fi
# '*': no password, and not locked ('!', which sshd refuses even with a key)
useradd -M -d "$S/h" -s /bin/sh -p '*' "$USR" && made_user=yes
mkdir -p "$S/bin" "$S/h/.config/libvirt" "$S/cache/images" /run/sshd
printf 'stdio_handler = "file"\n' > "$S/h/.config/libvirt/qemu.conf" # no virtlogd

# sshd on 127.0.0.1, a port nobody listens on, keys and known_hosts of the test's own. The
# client side is ssh with a config file of ours: libvirt runs "ssh" from PATH, so a two-line
# wrapper first in PATH gives it -F (nobody's ~/.ssh is touched).
port=
for p in $(seq 22022 22122); do
	if ! ss -ltn "sport = :$p" 2>/dev/null | grep -q LISTEN; then port=$p; break; fi
done
ssh-keygen -q -t ed25519 -N '' -f "$S/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$S/client_key"
cp "$S/client_key.pub" "$S/authorized_keys"
{
	echo "ListenAddress 127.0.0.1"
	echo "Port $port"
	echo "HostKey $S/host_key"
	echo "AuthorizedKeysFile $S/authorized_keys"
	echo "AllowUsers $USR"
	echo "PasswordAuthentication no"
	echo "KbdInteractiveAuthentication no"
	echo "UsePAM no"
	echo "StrictModes no"
	echo "PidFile $S/sshd.pid"
} > "$S/sshd_config"
printf '[127.0.0.1]:%s %s\n' "$port" "$(cut -d' ' -f1,2 "$S/host_key.pub")" > "$S/known_hosts"
{
	echo "Host 127.0.0.1"
	echo "	IdentityFile $S/client_key"
	echo "	IdentitiesOnly yes"
	echo "	UserKnownHostsFile $S/known_hosts"
	echo "	StrictHostKeyChecking yes"
	echo "	BatchMode yes"
} > "$S/ssh_config"
printf '#!/bin/sh\nexec /usr/bin/ssh -F %s "$@"\n' "$S/ssh_config" > "$S/bin/ssh"
chmod 755 "$S/bin/ssh"
cp -a "$img" "$S/cache/images/"
jq '.name = "hosts-ssh" | .axes[0].values |= .[:2]' tests/integration/parallel.json > "$S/m.json"
chown -R "$USR" "$S"
chown root "$S/host_key" "$S/sshd_config"
/usr/sbin/sshd -f "$S/sshd_config" -E "$S/sshd.log"
for i in $(seq 50); do [ -s "$S/sshd.pid" ] && break; sleep 0.1; done
sshd_pid=$(cat "$S/sshd.pid" 2>/dev/null)
check "an sshd of our own listens on 127.0.0.1:$port" alive "$sshd_pid"

h1="qemu+ssh://$USR@127.0.0.1:$port/session" h2="qemu:///embed?root=$S/e1"
check "virsh reaches $USR's daemon over ssh" as_user virsh -q -c "$h1" uri

start=$(date +%s)
as_user "$ZBENCH" run --accel tcg --cache-dir "$S/cache" --hosts "$h1,$h2" --shared-paths \
	-o "$S/run" "$S/m.json" >/dev/null 2>"$S/run.log"
rc=$?
echo "  2 cells on a daemon over ssh and an embedded root: $(( $(date +%s) - start ))s, exit status $rc"
check "zbench run --hosts qemu+ssh://... exits 0" [ "$rc" -eq 0 ]
check "2 ok records, each cell once" \
	[ "$(jq -r .outcome "$S/run/cells.jsonl" | grep -c '^ok$')" -eq 2 -a "$(jq -r .cell "$S/run/cells.jsonl" | sort -u | wc -l)" -eq 2 ]
check "one cell on each host, each record naming its host" \
	[ "$(jq -r .host "$S/run/cells.jsonl" | sort)" = "$(printf '%s\n%s\n' "$h1" "$h2" | sort)" ]
check "the manifest lists both hosts" \
	[ "$(jq -r '[.hosts[].uri] | sort | join(" ")' "$S/run/manifest.json")" = "$(printf '%s\n%s\n' "$h1" "$h2" | sort | tr '\n' ' ' | sed 's/ $//')" ]
check "sshd accepted the client key (the cell went through ssh)" \
	grep -q "Accepted publickey for $USR" "$S/sshd.log"
check "no domain left on the daemon" \
	[ -z "$(as_user virsh -q -c "$h1" list --all --name 2>/dev/null)" ]
stop_all

echo "hosts-ssh: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$S"; else echo "  kept: $S"; grep -v '^\[' "$S/run.log" | tail -5; fi
[ "$failed" -eq 0 ]
