#!/bin/sh
# -j 1 against -j 2 on the same 4-cell throttled matrix, in one run: wall times and the ratio.
set -eu
cd "$(dirname "$0")/.."
make -s all >/dev/null
tmp=$(mktemp -d /tmp/zbench-pbench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
for j in 1 2; do
	start=$(date +%s.%N)
	./zbench run -j "$j" -o "$tmp/j$j" tests/integration/parallel.json >/dev/null 2>&1
	end=$(date +%s.%N)
	awk -v a="$start" -v b="$end" -v j="$j" 'BEGIN {printf "-j %d: %.1f s\n", j, b - a}' | tee -a "$tmp/times"
	echo "  ok cells: $(jq -r .outcome "$tmp/j$j/cells.jsonl" | grep -c '^ok$') of 4"
done
awk '/^-j 1/ {a = $3} /^-j 2/ {b = $3} END {printf "speed-up -j 2 over -j 1: %.2fx (cores: %s)\n", a / b, "'"$(nproc)"'"}' "$tmp/times"
