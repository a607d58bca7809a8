#!/bin/sh
# What a pristine VM per cell costs, per phase, against the floor (issues 7 and 17).
#   (a) floor: same kernel, same machine, an initramfs whose /init powers off at once
#   (b) a zbench cell with a 1-second workload (bench/overhead.json), booted cold (--cold)
#   (r) the same cell restored from the warm snapshot (the default)
#   quick.json both ways, as cells per hour (QUICK=0 skips)
#   (c) the same cell on the cloud flavor (images/debian12-zfs-cloud.json): the same kernel
#       booted the conventional way, initramfs-tools, systemd, cloud-init, the agent as a unit
# Prints medians over the runs and the ratios b/a, r/b and c/b. RUNS=N sets the number of floor
# boots and of cells in (b) and (c) (default 5). CLOUD=0 skips (c).
set -eu
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
make -s all >/dev/null
img=$(./zbench image path images/debian12-zfs.json 2>/dev/null | tail -n1) || {
	echo "cell-overhead: build the image first (make image)" >&2; exit 1; }
[ -d "$img" ] || img=$(./zbench image build images/debian12-zfs.json 2>/dev/null | awk '/^dir/ {print $2}')
kernel="$img/vmlinux"
tmp=$(mktemp -d /tmp/zbench-overhead.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }

# (a) the floor
cc -O2 -static -o "$tmp/init" bench/poweroff-init.c
(cd "$tmp" && mkdir -p root/dev && cp init root/init && cd root && find . | cpio -o -H newc --quiet > ../floor.cpio)
for i in $(seq 1 "$RUNS"); do
	start=$(date +%s.%N)
	qemu-system-x86_64 -machine q35,accel=tcg -cpu max -smp 2 -m 1024 -nodefaults -no-user-config \
		-display none -no-reboot -sandbox on -bios /usr/share/qemu/qboot.rom \
		-kernel "$kernel" -initrd "$tmp/floor.cpio" -append "console=ttyS0 panic=-1 loglevel=4" \
		-serial file:"$tmp/floor-console.log" >/dev/null 2>&1
	end=$(date +%s.%N)
	awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f\n", b - a}'
done > "$tmp/floor.txt"
grep -q "init reached" "$tmp/floor-console.log" || { echo "cell-overhead: the floor guest never reached /init" >&2; exit 1; }
floor=$(median < "$tmp/floor.txt")

# (b) cold cells and (r) cells restored from the warm snapshot, RUNS of each. The warm snapshot
# is made before (r) by one cell that is not counted (what making it costs is printed).
jq --argjson n "$RUNS" '.repeats = $n' bench/overhead.json > "$tmp/overhead.json"
jq '.repeats = 1' bench/overhead.json > "$tmp/warmup.json"
runcells() { # NAME MATRIX ZBENCH-OPTIONS...
	name=$1 matrix=$2
	shift 2
	./zbench run "$@" -o "$tmp/$name" "$matrix" >/dev/null 2>"$tmp/$name.log" || {
		echo "cell-overhead: the zbench run '$name' failed:" >&2; tail -5 "$tmp/$name.log" >&2; exit 1; }
}
ph() { jq -r "$1" "$cells" | median; }
phases() { # LABEL: medians per phase of $cells
	label=$1
	printf '%-34s %8s\n' "($label) first console byte" "$(ph '.boot_first_output')"
	printf '%-34s %8s\n' "($label) QEMU start to the agent's hello" "$(ph '.phases.hello')"
	# Each phase lasts from its start to the next phase's start (the agent's steps in the order
	# they ran, then the result and the VM's exit): medians per phase over the cells.
	jq -r '.phases | to_entries | sort_by(.value) as $p
		| range(0; ($p | length) - 1) as $i
		| "\($i) \($p[$i].key) \($p[$i + 1].value - $p[$i].value)"' "$cells" |
		awk '{ key = sprintf("%02d %s", $1, $2); v[key] = v[key] " " $3 }
		     END { for (k in v) print k, v[k] }' | sort |
		while read -r idx name vals; do
			m=$(printf '%s\n' $vals | median)
			printf '    %-30s %8.3f\n' "$name" "$m"
		done
	w=$(ph '.phases.result - .phases.workload')
	printf '%-34s %8.3f\n' "    (workload step, 1 s workload)" "$w"
	printf '%-34s %8s\n' "($label) whole cell" "$(ph '.wall_seconds')"
	echo "    boot: $(jq -r '.boot // "?"' "$cells" | sort | uniq -c | tr -s ' \n' ' ')"
}

printf '%-34s %8s\n' "phase (median of runs)" "seconds"
printf '%-34s %8s\n' "(a) floor: QEMU start to exit" "$floor"
runcells cold "$tmp/overhead.json" --cold
cells="$tmp/cold/cells.jsonl"
phases b
b=$(ph '.wall_seconds')
w=$(ph '.phases.result - .phases.workload')
printf '%-34s %8s\n' "(b) - (a) - workload step" "$(awk -v b="$b" -v f="$floor" -v w="$w" 'BEGIN {printf "%.3f", b - f - w}')"
printf '%-34s %8s\n' "ratio b/a" "$(awk -v b="$b" -v f="$floor" 'BEGIN {printf "%.2f", b / f}')"
runcells warmup "$tmp/warmup.json" --warm
printf '%-34s %8s\n' "making the warm snapshot" "$(jq -r '.boot_restore.snapshot_built_s // 0' "$tmp/warmup/cells.jsonl")"
runcells restored "$tmp/overhead.json" --warm
cells="$tmp/restored/cells.jsonl"
phases r
printf '%-34s %8s\n' "(r) restore (QEMU up, memory in)" "$(ph '.boot_restore.restore_s')"
printf '%-34s %8s\n' "(r) hot-plug and wake" "$(ph '.boot_restore.hotplug_s')"
r=$(ph '.wall_seconds')
printf '%-34s %8s\n' "ratio r/b" "$(awk -v b="$b" -v r="$r" 'BEGIN {printf "%.2f", r / b}')"
echo "accel: $(jq -r .accel "$cells" | sort -u | tr '\n' ' ')  runs: floor $RUNS, cells $(wc -l < "$cells") each way"

# quick.json both ways: wall time of the whole run, as cells per hour
if [ "${QUICK:-1}" = 1 ]; then
	for way in cold restored; do
		opt=--warm; [ "$way" = cold ] && opt=--cold
		start=$(date +%s.%N)
		runcells "quick-$way" matrices/quick.json $opt
		end=$(date +%s.%N)
		n=$(wc -l < "$tmp/quick-$way/cells.jsonl")
		# making a shape's warm snapshot is once per image and VM shape, not once per run: the
		# rate leaves it out and the line says how long it took
		snap=$(jq -s 'map(.boot_restore.snapshot_built_s // 0) | add' "$tmp/quick-$way/cells.jsonl")
		awk -v a="$start" -v b="$end" -v n="$n" -v w="$way" -v s="$snap" -v boots="$(jq -r '.boot' "$tmp/quick-$way/cells.jsonl" | sort | uniq -c | tr -s ' \n' ' ')" \
			'BEGIN {printf "quick.json %-9s %d cells in %.1f s: %.0f cells/hour (boot:%s; making the snapshot: %.1f s, left out of the rate)\n", w, n, b - a - s, n * 3600 / (b - a - s), boots, s}'
	done
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# (c) the same cells on the cloud flavor
[ "${CLOUD:-1}" = 0 ] && exit 0
./zbench image build images/debian12-zfs-cloud.json >"$tmp/cloud-build.log" 2>&1 || {
	echo "cell-overhead: building the cloud image failed:" >&2; tail -5 "$tmp/cloud-build.log" >&2; exit 1; }
./zbench run -i images/debian12-zfs-cloud.json -o "$tmp/cloud" "$tmp/overhead.json" >/dev/null 2>"$tmp/cloud.log" || {
	echo "cell-overhead: the cloud run failed:" >&2; tail -5 "$tmp/cloud.log" >&2; exit 1; }
cells="$tmp/cloud/cells.jsonl"
c=$(ph '.wall_seconds')
printf '%-34s %8s\n' "(c) first console byte" "$(ph '.boot_first_output')"
printf '%-34s %8s\n' "(c) QEMU start to the agent's hello" "$(ph '.phases.hello')"
printf '%-34s %8s\n' "(c) hello to result" "$(ph '.phases.result - .phases.hello')"
printf '%-34s %8s\n' "(c) whole cell (cloud flavor)" "$c"
printf '%-34s %8s\n' "ratio c/b" "$(awk -v b="$b" -v c="$c" 'BEGIN {printf "%.2f", c / b}')"
echo "accel: $(jq -r .accel "$cells" | sort -u | tr '\n' ' ')  flavor: $(jq -r .flavor "$cells" | sort -u)  cells $(wc -l < "$cells")"
