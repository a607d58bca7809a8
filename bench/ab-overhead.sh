#!/bin/sh
# Cell overhead of two zbench builds, measured interleaved on the same machine (issue 7):
#   bench/ab-overhead.sh BEFORE_DIR AFTER_DIR [PAIRS]
# Each DIR is a built zbench tree (its ./zbench and guest binaries; each build gets its own
# appliance from the shared image cache). PAIRS times (default 5), one bench/overhead.json cell
# with BEFORE's build, then one with AFTER's, so both see the same load; prints the median of
# every phase for both, the whole cell and the whole cell less the workload step. Timings on a
# shared machine drift over minutes: only figures from one run of this script compare.
set -eu
before=$(cd "$1" && pwd) after=$(cd "$2" && pwd) pairs=${3:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d /tmp/zbench-ab.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
jq '.repeats = 1' "$here/bench/overhead.json" > "$tmp/one.json"

median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
for v in before after; do
	dir=$(eval echo "\$$v")
	(cd "$dir" && ./zbench image build images/debian12-zfs.json >/dev/null 2>&1) || {
		echo "ab-overhead: $dir: the image does not build" >&2; exit 1; }
done
for i in $(seq 1 "$pairs"); do
	for v in before after; do
		dir=$(eval echo "\$$v")
		(cd "$dir" && ./zbench run -o "$tmp/$v-$i" "$tmp/one.json" >/dev/null 2>"$tmp/$v-$i.log") || {
			echo "ab-overhead: $v run $i failed:" >&2; tail -5 "$tmp/$v-$i.log" >&2; exit 1; }
		cat "$tmp/$v-$i/cells.jsonl" >> "$tmp/$v.jsonl"
	done
done

# Each phase lasts from its start to the next phase's start (as in bench/cell-overhead.sh).
phases() {
	jq -r '.phases | to_entries | sort_by(.value) as $p
		| range(0; ($p | length) - 1) as $i
		| "\($p[$i].key) \($p[$i + 1].value - $p[$i].value)"' "$1"
	jq -r '"whole_cell \(.wall_seconds)", "cell_less_workload_step \(.wall_seconds - (.phases.result - .phases.workload))"' "$1"
}
for v in before after; do
	phases "$tmp/$v.jsonl" > "$tmp/$v.ph"
done
printf '%-28s %8s %8s\n' "phase (median, s)" before after
for name in $(awk '{print $1}' "$tmp/before.ph" | awk '!seen[$0]++'); do
	b=$(awk -v n="$name" '$1 == n {print $2}' "$tmp/before.ph" | median)
	a=$(awk -v n="$name" '$1 == n {print $2}' "$tmp/after.ph" | median)
	printf '%-28s %8.3f %8.3f\n' "$name" "$b" "${a:-0}"
done
echo "pairs: $pairs, interleaved; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
