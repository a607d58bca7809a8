#!/bin/sh
# The gate's error rates on this machine (issue 29 item 3, docs/compare.md "Error rates").
# Each trial is one fresh interleaved run of MATRIX (default bench/ab-planted.json) with three
# sides (its "sides", docs/compare.md "Sides that differ"): A, B the same configuration as A, and
# C with PLANT set in every cell (default: the matrix's side C, its disk throttled 10% lower). REPEATS repeats (default 8: 6 is the
# fewest pairs the permutation test can call different at 0.05, 2/2^6 = 0.031, and one stalled
# VM then leaves a trial undecided; 8 tolerate one, docs/compare.md), then two comparisons of the same run, each with GATE (default
# 'write_iops < -5%', the timing tier) and COUNT_GATE (default 'disk_flushes > 5%', the count
# tier; empty: none):
#   A/A      `zbench compare --sides AB`: every failed gate is a false positive;
#   planted  `zbench compare --sides AC`: a failed timing gate is a detection.
# Prints, per kind and gate, failed / passed / undecided; the false positives' one-sided 95%
# upper bound and the detections' 95% lower bound (Clopper-Pearson); the planted size measured
# (the planted side's mean against A's, over all trials); per trial the pairs, seconds and load.
#   TRIALS=40 bench/error-rates.sh [DIR]               (each trial boots 3 x REPEATS VMs)
#   PLANT='{"disks[0].model_params.rpm": 6480}'        another plant for side C
#   PLANT=none                                         A/A only (sides A and B)
#   MAX_MINUTES=55                                     start no trial after 55 minutes
#   TRIALS=0 bench/error-rates.sh DIR                  no trial: the summary of DIR/trials.tsv
#                                                      again (say, two lanes' files put together)
set -u
cd "$(dirname "$0")/.."
dir=${1:-runs/error-rates-$(date -u +%Y%m%dT%H%M%S)}
trials=${TRIALS:-40}
repeats=${REPEATS:-8}
matrix=${MATRIX:-bench/ab-planted.json}
gate=${GATE:-write_iops < -5%}
count_gate=${COUNT_GATE-disk_flushes > 5%}
plant=${PLANT:-}
metric=${gate%% *}
mkdir -p "$dir"
# the trial's matrix: MATRIX with REPEATS, and PLANT as side C's set (none: sides A and B only)
case "$plant" in
none) jq --argjson r "$repeats" '.repeats = $r | .sides = .sides[0:2]' "$matrix" ;;
'') jq --argjson r "$repeats" '.repeats = $r' "$matrix" ;;
*) jq --argjson r "$repeats" --argjson p "$plant" '.repeats = $r | .sides[2].set = $p' "$matrix" ;;
esac >"$dir/matrix.json" || exit 2
./zbench matrix check "$dir/matrix.json" >"$dir/matrix.txt" || exit 2
kinds="aa:AB"
[ "$plant" = none ] || kinds="aa:AB planted:AC"
[ "$trials" = 0 ] || : >"$dir/trials.tsv"
start=$(date +%s)
for t in $(seq 1 "$trials"); do
	d="$dir/t$t"
	t0=$(date +%s)
	# MAX_MINUTES: no trial starts after that many minutes (a VM slot's budget)
	if [ -n "${MAX_MINUTES:-}" ] && [ $((t0 - start)) -ge $((MAX_MINUTES * 60)) ]; then
		echo "MAX_MINUTES=$MAX_MINUTES spent: $((t - 1)) trials"
		break
	fi
	load0=$(cut -d' ' -f1 /proc/loadavg)
	./zbench run -o "$d" "$dir/matrix.json" >/dev/null 2>"$d.log"
	secs=$(($(date +%s) - t0))
	for k in $kinds; do
		kind=${k%%:*} sides=${k#*:}
		./zbench compare --sides "$sides" --fail-if "$gate" \
			${count_gate:+--fail-if "$count_gate"} --json -o "$d/compare-$sides" "$d" \
			>"$d-$sides.json" 2>>"$d.log"
		rc=$?
		row=$(jq -r --arg m "$metric" '
			[.verdicts.rows[] | select(.metric == $m)][0] as $r |
			[([.verdicts.rows[] | select(.gate) | .pairs // empty] | max // 0),
			 ([.gates[] | select(.metric == $m) | .verdict][0] // "-"),
			 ([.gates[] | select(.metric != $m) | .verdict][0] // "-"),
			 ($r.change_pct // "nan"), ($r.mean_a // "nan"), ($r.mean_b // "nan"),
			 ($r.mde_pct // "nan")] | @tsv' "$d-$sides.json" 2>/dev/null)
		[ -n "$row" ] || row="0	error	error	nan	nan	nan	nan"
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$kind" "$rc" "$secs" "$load0" "$row" \
			>>"$dir/trials.tsv"
		echo "trial $t $kind: exit $rc, ${secs}s, load $load0: $row"
	done
done
# trials.tsv: trial kind exit seconds load pairs timing-verdict count-verdict change% mean_a
# mean_b mde%
awk -F'\t' -v gate="$gate" -v cgate="$count_gate" '
	# Clopper-Pearson one-sided 95% bounds of k/n, by bisection on the binomial tail
	function tail_ge(k, n, p,   s, i, c, j) {  # P(X >= k)
		s = 0
		for (i = k; i <= n; i++) {
			c = 1; for (j = 0; j < i; j++) c = c * (n - j) / (j + 1)
			s += c * p ^ i * (1 - p) ^ (n - i)
		}
		return s
	}
	function upper(k, n,   lo, hi, p, i) {  # the p at which P(X <= k) = 0.05
		if (k >= n) return 1
		lo = 0; hi = 1
		for (i = 0; i < 60; i++) { p = (lo + hi) / 2; if (1 - tail_ge(k + 1, n, p) > 0.05) lo = p; else hi = p }
		return hi
	}
	function lower(k, n,   lo, hi, p, i) {  # the p at which P(X >= k) = 0.05
		if (k <= 0) return 0
		lo = 0; hi = 1
		for (i = 0; i < 60; i++) { p = (lo + hi) / 2; if (tail_ge(k, n, p) < 0.05) lo = p; else hi = p }
		return lo
	}
	{
		n[$2]++; tv[$2, $7]++; cv[$2, $8]++; secs[$2] += $4; pairs[$2] += $6
		if ($5 > lmax) lmax = $5; if (lmin == "" || $5 < lmin) lmin = $5
		if ($10 + 0 > 0 && $11 + 0 > 0) { sa[$2] += $10; sb[$2] += $11; lr[$2] += log($11 / $10); m[$2]++ }
		if ($12 != "nan") { mde[$2] += $12; mn[$2]++ }
	}
	END {
		for (k in n) {
			f = tv[k, "failed"] + 0
			printf "%s: %d trials, %.1f pairs and %.0f s a run (shared by the kinds), load %s-%s\n", k, n[k], pairs[k] / n[k], secs[k] / n[k], lmin, lmax
			printf "  %s: %d failed, %d passed, %d undecided, %d errors", gate, f, tv[k, "passed"], tv[k, "undecided"], n[k] - f - tv[k, "passed"] - tv[k, "undecided"]
			if (k == "aa") printf " -> false positives %d/%d, 95%% upper bound %.1f%%\n", f, n[k], 100 * upper(f, n[k])
			else printf " -> detected %d/%d = %.1f%%, 95%% lower bound %.1f%%\n", f, n[k], 100 * f / n[k], 100 * lower(f, n[k])
			if (cgate != "") {
				c = cv[k, "failed"] + 0
				printf "  %s: %d failed, %d passed, %d undecided", cgate, c, cv[k, "passed"], cv[k, "undecided"]
				printf " (failed: 95%% upper bound %.1f%%)\n", 100 * upper(c, n[k])
			}
			if (m[k]) printf "  %s: B against A over the trials: pooled means %+.2f%%, geometric mean of the trials %+.2f%%; mean MDE %.1f%%\n", \
				"'"$metric"'", 100 * (sb[k] / sa[k] - 1), 100 * (exp(lr[k] / m[k]) - 1), mn[k] ? mde[k] / mn[k] : 0
		}
	}' "$dir/trials.tsv"
echo "gates '$gate'${count_gate:+, '$count_gate'}; $dir/matrix.txt: the sides; $dir/trials.tsv: trial, kind, exit, seconds, load, pairs, verdicts, change %, means, MDE %"
