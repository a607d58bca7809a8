#!/bin/sh
# Integration test: --hosts over a real remote transport (docs/scale-out.md). An sshd of the
# test's own, bound to 127.0.0.1 on a free port with keys made here, and the system libvirtd
# (started here if none runs, stopped again at the end if the test started it); zbench reaches
# the daemon as qemu+ssh://root@127.0.0.1:PORT/system, exactly as it would another machine (the
# libvirt client runs ssh, ssh runs virt-ssh-helper on the far side, which talks to the daemon's
# socket), beside a local embedded slot. Both "hosts" are this machine, so --shared-paths holds.
# The image is a copy of the cached one in a scratch folder (the daemon's QEMU runs as
# libvirt-qemu, which cannot enter root's cache, and the daemon chowns what it opens). A 2-cell
# slice of parallel.json, one slot each: every cell ok, both hosts used and named in the
# records, no domain left on the daemon, and the daemon saw the ssh connection.
# Prints "hosts-ssh: N passed, N failed" (or skips when sshd or libvirtd is missing).
set -u
cd "$(dirname "$0")/../.." || exit 1
ZBENCH=$(pwd)/zbench
for p in /usr/sbin/sshd ssh ssh-keygen libvirtd virt-ssh-helper; do
	if ! command -v "$p" >/dev/null 2>&1; then
		echo "hosts-ssh: skipped (needs $p: builder/install-deps.sh installs it)"
		exit 0
	fi
done
img=$($ZBENCH image path images/debian12-zfs.json 2>/dev/null) || {
	echo "hosts-ssh: 0 passed, 1 failed (no cached image: zbench image build images/debian12-zfs.json)"; exit 1; }
S=$(mktemp -d /tmp/zbench-hosts-ssh.XXXXXX)
chmod 755 "$S"
passed=0 failed=0 sshd_pid= started_libvirtd= started_virtlogd=
check() {
	what=$1; shift
	if "$@"; then passed=$((passed + 1)); echo "  ok   $what"
	else failed=$((failed + 1)); echo "  FAIL $what"; fi
}
stop_all() {
	[ -n "$sshd_pid" ] && kill "$sshd_pid" 2>/dev/null
	[ -n "$started_libvirtd" ] && kill "$started_libvirtd" 2>/dev/null
	[ -n "$started_virtlogd" ] && kill "$started_virtlogd" 2>/dev/null
	sshd_pid= started_libvirtd= started_virtlogd=
}
trap stop_all EXIT
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

# The system daemon: the one running, else one of ours (and virtlogd, its stdio handler).
if ! alive "$(cat /run/virtlogd.pid 2>/dev/null)"; then
	virtlogd -d && sleep 0.5 && started_virtlogd=$(cat /run/virtlogd.pid 2>/dev/null)
fi
if ! alive "$(cat /run/libvirtd.pid 2>/dev/null)"; then
	libvirtd -d && started_libvirtd=yes
	for i in $(seq 50); do
		[ -S /run/libvirt/libvirt-sock ] && alive "$(cat /run/libvirtd.pid 2>/dev/null)" && break
		sleep 0.2
	done
	started_libvirtd=$(cat /run/libvirtd.pid 2>/dev/null)
fi
check "a system libvirtd is up" alive "$(cat /run/libvirtd.pid 2>/dev/null)"

# sshd on 127.0.0.1, a port nobody listens on, keys and known_hosts of the test's own. The
# client side is ssh with a config file of ours: libvirt runs "ssh" from PATH, so a two-line
# wrapper first in PATH gives it -F (no change to root's ~/.ssh).
port=
for p in $(seq 22022 22122); do
	if ! ss -ltn "sport = :$p" 2>/dev/null | grep -q LISTEN; then port=$p; break; fi
done
mkdir -p "$S/bin" /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$S/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$S/client_key"
cp "$S/client_key.pub" "$S/authorized_keys"
cat > "$S/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $port
HostKey $S/host_key
AuthorizedKeysFile $S/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile $S/sshd.pid
EOF
printf '127.0.0.1 %s\n' "$(cut -d' ' -f1,2 "$S/host_key.pub")" | sed "s/^127.0.0.1/[127.0.0.1]:$port/" > "$S/known_hosts"
cat > "$S/ssh_config" <<EOF
Host 127.0.0.1
	IdentityFile $S/client_key
	IdentitiesOnly yes
	UserKnownHostsFile $S/known_hosts
	StrictHostKeyChecking yes
	BatchMode yes
EOF
printf '#!/bin/sh\nexec /usr/bin/ssh -F %s "$@"\n' "$S/ssh_config" > "$S/bin/ssh"
chmod 755 "$S/bin/ssh"
/usr/sbin/sshd -f "$S/sshd_config" -E "$S/sshd.log"
for i in $(seq 50); do [ -s "$S/sshd.pid" ] && break; sleep 0.1; done
sshd_pid=$(cat "$S/sshd.pid" 2>/dev/null)
check "an sshd of our own listens on 127.0.0.1:$port" alive "$sshd_pid"

h1="qemu+ssh://root@127.0.0.1:$port/system?no_tty=1" h2="qemu:///embed?root=$S/e1"
check "virsh reaches the system daemon over ssh" \
	env PATH="$S/bin:$PATH" virsh -q -c "$h1" uri

mkdir -p "$S/cache/images"
cp -a "$img" "$S/cache/images/"
jq '.name = "hosts-ssh" | .axes[0].values |= .[:2]' tests/integration/parallel.json > "$S/m.json"
start=$(date +%s)
env PATH="$S/bin:$PATH" "$ZBENCH" run --accel tcg --cache-dir "$S/cache" --hosts "$h1,$h2" \
	--shared-paths -o "$S/run" "$S/m.json" >/dev/null 2>"$S/run.log"
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
	grep -q 'Accepted publickey for root' "$S/sshd.log"
check "no zbench domain left on the daemon" \
	[ -z "$(env PATH="$S/bin:$PATH" virsh -q -c "$h1" list --all --name 2>/dev/null | grep zbench)" ]
stop_all

echo "hosts-ssh: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$S"; else echo "  kept: $S"; tail -5 "$S/run.log"; fi
[ "$failed" -eq 0 ]
