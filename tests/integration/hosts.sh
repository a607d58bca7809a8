#!/bin/sh
# Integration test: zbench run --hosts (docs/scale-out.md). Two "hosts" that are distinct libvirt
# connections on this machine, two embedded drivers with roots of their own, one cell at a time
# each, run the 4-cell throttled matrix of parallel.sh: every cell ok and recorded once, both
# hosts used, each record names its host, the manifest lists the hosts, and the cell set is the
# matrix's. Then the refusals: a host that cannot be connected stops the run before any cell
# runs, naming the URI and libvirt's message; an unknown URI scheme and N=0 are refused before
# anything is created. Prints "hosts: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
ZBENCH=./zbench
MATRIX=tests/integration/parallel.json
out=$(mktemp -d /tmp/zbench-hosts.XXXXXX)
. tests/check.inc

$ZBENCH image build images/debian12-zfs.json >/dev/null || { echo "hosts: 0 passed, 1 failed"; exit 1; }
h1="qemu:///embed?root=$out/h1" h2="qemu:///embed?root=$out/h2"
start=$(date +%s)
$ZBENCH run --hosts "$h1,$h2" -o "$out/run" "$MATRIX" >/dev/null 2>"$out/run.log" &
pid=$!
most=0
while kill -0 "$pid" 2>/dev/null; do
	n=$(pgrep -f "qemu-system.*$out/run/cells" | wc -l)
	[ "$n" -gt "$most" ] && most=$n
	sleep 1
done
wait "$pid"
rc=$?
echo "  4 cells on 2 hosts: $(( $(date +%s) - start ))s, exit status $rc"
check "zbench run --hosts exits 0" [ "$rc" -eq 0 ]
check "4 ok records, each cell once" \
	[ "$(jq -r .outcome "$out/run/cells.jsonl" | grep -c '^ok$')" -eq 4 -a "$(jq -r .cell "$out/run/cells.jsonl" | sort -u | wc -l)" -eq 4 ]
check "the cell set is the matrix's" \
	[ "$(jq -r .cell "$out/run/cells.jsonl" | sort)" = "$($ZBENCH matrix check "$MATRIX" | awk 'NR > 1 { print $2 }' | sort)" ]
check "every record names its host, and both hosts ran cells" \
	[ "$(jq -r .host "$out/run/cells.jsonl" | sort -u)" = "$(printf '%s\n%s\n' "$h1" "$h2" | sort)" ]
check "the backend is libvirt (implied by --hosts)" \
	[ "$(jq -r .backend "$out/run/manifest.json" "$out/run/cells.jsonl" | sort -u)" = libvirt ]
check "the manifest lists the hosts with their slots, complete, 4 of 4 ok" \
	[ "$(jq -c '[.status, .cells_ok, [.hosts[] | [.uri, .slots]]]' "$out/run/manifest.json")" = "[\"complete\",4,[[\"$h1\",1],[\"$h2\",1]]]" ]
check "two VMs ran at once (one per host)" [ "$most" -ge 2 ]
check "each host's own embedded root holds its domains' logs" \
	[ "$(ls "$out"/h1/log/qemu/*.log "$out"/h2/log/qemu/*.log 2>/dev/null | wc -l)" -eq 4 ]
check "no QEMU process left running for the run" [ -z "$(pgrep -f "qemu-system.*$out/run/" 2>/dev/null)" ]

# Resuming the finished run: embedded roots are a connection a manifest (a file) may not choose
# (docs/libvirt.md, "URIs from files"), so the same hosts are given again; nothing left to run.
$ZBENCH run --resume "$out/run" >/dev/null 2>"$out/resume-refused.log"
rc=$?
check "--resume without --hosts: the manifest's embedded roots refused, exit 2" \
	[ "$rc" -eq 2 -a "$(grep -c 'embedded driver writes under its root' "$out/resume-refused.log")" -eq 1 ]
$ZBENCH run --resume "$out/run" --hosts "$h1,$h2" >/dev/null 2>"$out/resume.log"
rc=$?
check "--resume of the finished run: the hosts kept, no cell run again, exit 0" \
	[ "$rc" -eq 0 -a "$(wc -l < "$out/run/cells.jsonl")" -eq 4 -a "$(jq -r '.hosts | length' "$out/run/manifest.json")" -eq 2 ]

# One host answers, the other cannot be connected: nothing runs, the error names the URI.
bad="qemu+unix:///system?socket=$out/no-such.sock"
$ZBENCH run --hosts "qemu:///embed?root=$out/h3,$bad" -o "$out/unreachable" "$MATRIX" >/dev/null 2>"$out/unreachable.log"
rc=$?
check "an unreachable host: exit 2, the URI and libvirt's reason named, no cell ran" \
	[ "$rc" -eq 2 -a ! -s "$out/unreachable/cells.jsonl" -a -z "$(ls "$out/unreachable/cells" 2>/dev/null)" ] &&
	grep -q "connecting to '$bad': .*no-such.sock" "$out/unreachable.log"
check "the failed run says why in its manifest" \
	[ "$(jq -r .status "$out/unreachable/manifest.json")" = failed ]
$ZBENCH run --hosts "xen:///system" -o "$out/scheme" "$MATRIX" >/dev/null 2>"$out/scheme.log"
check "an unknown URI scheme: exit 2, nothing created" \
	[ $? -eq 2 -a ! -e "$out/scheme" ] && grep -q "unknown URI scheme 'xen'" "$out/scheme.log"
$ZBENCH run --hosts "$h1=0" -o "$out/zero" "$MATRIX" >/dev/null 2>"$out/zero.log"
check "N=0: exit 2, nothing created" \
	[ $? -eq 2 -a ! -e "$out/zero" ] && grep -q "1 to 64, got 0" "$out/zero.log"

echo "hosts: $passed passed, $failed failed"
if [ "$failed" -eq 0 ]; then rm -rf "$out"; else echo "  kept: $out"; cat "$out/run.log" | tail -20; fi
[ "$failed" -eq 0 ]
