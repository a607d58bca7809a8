#!/bin/sh
# The gate's error rates on this machine (issue 29 item 3, docs/compare.md "Error rates"):
# TRIALS A/A comparisons, each a fresh interleaved run of one image named twice
# (-i images/debian12-zfs.json -i ./images/debian12-zfs.json) of bench/ab-gate.json (2 repeats),
# gated by `zbench compare --adaptive` with GATE (default 'write_iops < -5%', the timing tier)
# and COUNT_GATE (default 'disk_flushes > 5%', the count tier; empty: none) until it decides or
# MAX_REPEATS / MAX_MINUTES run out. Every failed gate is a false positive: the script prints
# the count, its 95% upper bound (Clopper-Pearson; 3/n with none: the rule of three), the
# undecided ones, each gate's verdicts over the trials, and per trial the repeats and minutes it
# took, with the load average.
#   TRIALS=40 vmslot bench/error-rates.sh [DIR]      (each trial boots 4 or more VMs)
# Planted regressions (a disk 10% slower on side B) need a run whose sides differ in their
# disks, which `zbench run -i A -i B` (the sides differ in the image only) cannot make yet: not
# measured (docs/compare.md says so).
set -u
cd "$(dirname "$0")/.."
dir=${1:-runs/error-rates-$(date -u +%Y%m%dT%H%M%S)}
trials=${TRIALS:-40}
gate=${GATE:-write_iops < -5%}
count_gate=${COUNT_GATE-disk_flushes > 5%}
img=images/debian12-zfs.json
mkdir -p "$dir"
: >"$dir/trials.tsv"
for t in $(seq 1 "$trials"); do
	d="$dir/aa-$t"
	t0=$(date +%s)
	load0=$(cut -d' ' -f1 /proc/loadavg)
	./zbench run -i "$img" -i "./$img" -o "$d" bench/ab-gate.json >/dev/null 2>"$d.log"
	./zbench compare --adaptive --fail-if "$gate" ${count_gate:+--fail-if "$count_gate"} \
		--max-repeats "${MAX_REPEATS:-12}" --max-minutes "${MAX_MINUTES:-30}" --json "$d" \
		>"$d.json" 2>>"$d.log"
	rc=$?
	reps=$(jq -r '[.verdicts.rows[] | select(.gate) | .pairs // empty] | max // 0' "$d.json" 2>/dev/null)
	verdicts=$(jq -r '[.gates[] | "\(.metric)=\(.verdict)"] | join(" ")' "$d.json" 2>/dev/null)
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$rc" "${reps:-?}" "$(( ($(date +%s) - t0) / 60 ))" \
		"$load0" "$verdicts" >>"$dir/trials.tsv"
	echo "trial $t: exit $rc, $reps pairs, $(( ($(date +%s) - t0) ))s, load $load0: $verdicts"
done
awk -F'\t' '{ n++; fp += $2 == 3; und += $2 == 4; pass += $2 == 0; err += $2 != 0 && $2 != 3 && $2 != 4 }
	END {
		# Clopper-Pearson 95% upper bound of fp/n by bisection on the binomial tail
		lo = 0; hi = 1
		for (i = 0; i < 60; i++) {
			p = (lo + hi) / 2; tail = 0
			for (k = 0; k <= fp; k++) {
				c = 1; for (j = 0; j < k; j++) c = c * (n - j) / (j + 1)
				tail += c * p ^ k * (1 - p) ^ (n - k)
			}
			if (tail > 0.05) lo = p; else hi = p
		}
		printf "A/A trials %d: %d false positives (95%% upper bound %.1f%%), %d passed, %d undecided, %d errors\n",
			n, fp, 100 * hi, pass, und, err
	}' "$dir/trials.tsv"
cut -f6 "$dir/trials.tsv" | tr ' ' '\n' | sort | uniq -c | sed 's/^/  /'
echo "gates '$gate'${count_gate:+, '$count_gate'}; trials in $dir/trials.tsv (trial, exit, pairs, minutes, load at start, verdicts)"
