#!/bin/sh
# Hostile run directories (docs/security.md, "Run directories"). A run directory is data someone
# else made: `zbench report`, `compare` and `merge` must neither run what it says (gnuplot
# injection through axis values), nor write or link where its symlinks point, nor give up on the
# whole run because of one oversized or broken record.
#
#   tests/security/rundir.sh        ZBENCH=/path/to/zbench to test another binary
#
# Every check builds its run directories with jq under a temporary directory and runs the real
# ./zbench on them; no VM boots. Prints "rundir: N passed, N failed".
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ZBENCH=${ZBENCH:-$root/zbench}
case "$ZBENCH" in /*) ;; *) ZBENCH=$(pwd)/$ZBENCH ;; esac

for tool in jq gnuplot awk; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "rundir: '$tool' is missing (builder/install-deps.sh installs it)" >&2
		exit 2
	fi
done
if [ ! -x "$ZBENCH" ]; then
	echo "rundir: $ZBENCH is missing: build it first (make zbench)" >&2
	exit 2
fi

T=$(mktemp -d /tmp/zbench-sec-rundir-XXXXXX)
[ -n "${KEEP:-}" ] || trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
passed=0
failed=0

pass() {
	passed=$((passed + 1))
	echo "ok   $1"
}

# fail NAME [FILE]: FILE's content (the command's output) is shown indented
fail() {
	failed=$((failed + 1))
	echo "FAIL $1"
	if [ -n "${2:-}" ] && [ -f "$2" ]; then
		head -c 4000 "$2" | sed 's/^/    /'
	fi
}

# A string that carries the marker ZQM<n> and every character a quoting mistake trips on:
# gnuplot's quotes and comment, Markdown's table bar, HTML's tags, a newline, a terminal's
# escape sequence.
hostile() {
	printf "ZQM%s'\"\\\\\`;)#@|<i>x</i>&\n]]>\033[31my" "$1"
}

# fio-shaped result with IOPS, bandwidth and latencies for both directions
fio_json() {
	jq -cn --argjson r "$1" --argjson w "$2" '{"fio version": "zbench-engine-0.1.0", jobs: [{
		jobname: "x",
		read: {iops: $r, bw: ($r * 4), clat_ns: {N: 100, mean: 1e6, percentile: {"99.000000": 4e6}}},
		write: {iops: $w, bw: ($w * 4), clat_ns: {N: 100, mean: 2e6, percentile: {"99.000000": 8e6}}}
	}]}'
}

# mkrun DIR AXES_JSON CASES_JSON: a run directory whose manifest and records carry hostile
# strings everywhere a string goes. Two axes: $AX1 (numeric in the records: numjobs 1 and 4,
# with the manifest's values given by the caller) and $AX2 (categorical: two hostile values).
mkrun() {
	dir=$1
	mkdir -p "$dir/cells"
	jq -n --argjson axes "$2" --argjson cases "$3" \
		--arg s1 "$(hostile 1)" --arg s2 "$(hostile 2)" --arg s3 "$(hostile 3)" \
		--arg s4 "$(hostile 4)" --arg s5 "$(hostile 5)" --arg s6 "$(hostile 6)" \
		--arg ax1 "$AX1" --arg ax2 "$AX2" --arg v1 "$V1" --arg v2 "$V2" '{
		zbench: $s1, status: $s2, started: 1790000000, finished: 1790000100,
		accel: $s3, backend: $s4,
		host: {hostname: $s5, kernel: $s6, machine: $s1, qemu: $s2, cpus: 2},
		image: {hash: $s3, recipe: $s4, manifest: {kernel_version: $s5}},
		matrix: {path: $s6, sha256: $s1, content: {
			name: $s2, description: $s3, axes: $axes, cases: $cases,
			expect: [
				{claim: $s4, metric: "read_iops", note: $s5,
				 compare: {lhs: {($ax2): $v1}, rhs: {($ax2): $v2}, op: ">"}},
				{claim: $s6, metric: "read_iops",
				 ranking: {axis: $ax1, order: "increasing"}},
				{claim: $s1, metric: "read_iops", peak: {axis: $ax2, at: $v1}}
			],
			reference: [{source: $s2, metric: "read_iops", note: $s3,
				values: [{match: {($ax1): 1, ($ax2): $v1}, value: 90},
					 {match: {($ax1): 4, ($ax2): $v1}, value: 300}]}]
		}}}' >"$dir/manifest.json"
	: >"$dir/cells.jsonl"
	i=0
	for nj in 1 4; do
		for bs in "$V1" "$V2"; do
			case "$bs" in "$V1") w=1 ;; *) w=2 ;; esac
			for rep in 0 1; do
				jq -cn --arg ax1 "$AX1" --arg ax2 "$AX2" --argjson nj "$nj" \
					--arg bs "$bs" --argjson i "$i" --argjson rep "$rep" \
					--argjson fio "$(fio_json $((nj * 100 * w + rep)) $((nj * 50)))" \
					--arg s "$(hostile "1$i")" --arg case "$CASE" '{
					cell: ("c0000000000000" + ($i | tostring)), index: $i,
					repeat: $rep, attempt: 1, outcome: "ok",
					summary: ("case=" + $case + "," + $ax1 + "=" + ($nj | tostring) +
						  "," + $ax2 + "=" + $bs),
					config: {workload: {numjobs: $nj, bs: $bs}, case_note: $s},
					dir: ("00" + ($i | tostring) + "-r" + ($rep | tostring)),
					effective: {zfs_version: $s, kernel: $s}, guest: {kernel: $s},
					fio: $fio}' >>"$dir/cells.jsonl"
			done
			i=$((i + 1))
		done
	done
	# one failed cell: every text a failure section shows is hostile
	jq -cn --arg s "$(hostile 9)" --arg ax1 "$AX1" '{
		cell: "cfffffffffffffff", index: 9, repeat: 0, attempt: 1, outcome: "panic",
		summary: $s, detail: $s, console_tail: $s, dir: $s,
		error: {step: $s, message: $s, output: $s},
		config: {workload: {numjobs: 2, bs: $s}}}' >>"$dir/cells.jsonl"
}

# the axes' names and values, the case's name: hostile, or plain where a check needs file names
hostile_names() {
	AX1=$(hostile A)
	AX2=$(hostile B)
	V1=$(hostile V1)
	V2=$(hostile V2)
	CASE=$(hostile C)
}
plain_names() {
	AX1=threads
	AX2=bs
	V1=4k
	V2=64k
	CASE=stripe
}
hostile_names
axes_default() {
	jq -cn --arg ax1 "$AX1" --arg ax2 "$AX2" --arg v1 "$V1" --arg v2 "$V2" --arg bad "$1" '[
		{name: $ax1, path: "workload.numjobs", values: [1, $bad, 4]},
		{name: $ax2, path: "workload.bs", values: [$v1, $v2]}]'
}
cases_default=$(jq -cn --arg c "$CASE" '[{name: $c, set: {}}]')

# ---- 1. gnuplot injection through a numeric axis's values (issue 12, finding 1) -------------
inj="9); system('touch $T/pwned'); set xtics (9"
mkrun "$T/inj" "$(axes_default "$inj")" '[]'
cp -r "$T/inj" "$T/inj-b"
"$ZBENCH" report -o "$T/inj-out" "$T/inj" >"$T/log" 2>&1
if [ -e "$T/pwned" ]; then
	fail "report: a manifest's axis value ran a command through gnuplot" "$T/log"
	rm -f "$T/pwned"
elif ! ls "$T/inj-out/report-plots/"*.svg >/dev/null 2>&1; then
	fail "report: no plots were drawn, so the injection was not exercised" "$T/log"
else
	pass "report: an axis value with gnuplot code is only a label"
fi
"$ZBENCH" compare -o "$T/inj-cmp" "$T/inj" "$T/inj-b" >"$T/log" 2>&1
if [ -e "$T/pwned" ]; then
	fail "compare: a manifest's axis value ran a command through gnuplot" "$T/log"
	rm -f "$T/pwned"
elif ! ls "$T/inj-cmp/compare-plots/"*.svg >/dev/null 2>&1; then
	fail "compare: no plots were drawn, so the injection was not exercised" "$T/log"
else
	pass "compare: an axis value with gnuplot code is only a label"
fi

# ---- 2. no record text outside a gnuplot string literal -------------------------------------
# A gnuplot in front of the real one keeps every script it is given; a small tokenizer (gnuplot's
# rules: '' inside '...', backslash escapes inside "...", # starts a comment, a trailing
# backslash joins lines) then checks that every ZQM marker sits inside a string literal.
real_gnuplot=$(command -v gnuplot)
mkdir -p "$T/bin" "$T/scripts"
cat >"$T/bin/gnuplot" <<EOF
#!/bin/sh
for a in "\$@"; do
	case "\$a" in *.gp) cp "\$a" "$T/scripts/\$\$-\$(basename "\$a")" ;; esac
done
exec "$real_gnuplot" "\$@"
EOF
chmod +x "$T/bin/gnuplot"
mkrun "$T/mark" "$(axes_default "$(hostile N)")" "$cases_default"
cp -r "$T/mark" "$T/mark-b"
PATH="$T/bin:$PATH" "$ZBENCH" report -o "$T/mark-out" --junit "$T/mark-out/junit.xml" \
	"$T/mark" >"$T/log-report" 2>&1
rc_report=$?
PATH="$T/bin:$PATH" "$ZBENCH" compare -o "$T/mark-cmp" "$T/mark" "$T/mark-b" \
	>"$T/log-compare" 2>&1
rc_compare=$?
scan_scripts() {
	LC_ALL=C awk '
	function scan(line, file, lineno,    i, n, c, st, out, inside) {
		st = 0; out = ""; inside = ""; n = length(line)
		for (i = 1; i <= n; i++) {
			c = substr(line, i, 1)
			if (st == 0) {
				if (c == "\047") st = 1
				else if (c == "\"") st = 2
				else if (c == "#") { out = out substr(line, i); break }
				else out = out c
			} else if (st == 1) {
				if (c == "\047" && substr(line, i + 1, 1) == "\047") { inside = inside c; i++ }
				else if (c == "\047") { st = 0; out = out " " }
				else inside = inside c
			} else {
				if (c == "\\") { i++; inside = inside substr(line, i, 1) }
				else if (c == "\"") { st = 0; out = out " " }
				else inside = inside c
			}
		}
		if (st != 0) out = out inside
		if (index(out, "ZQM")) {
			printf "%s:%d: record text outside a string: %s\n", file, lineno, line
			bad++
		}
		tmp = inside
		while ((p = index(tmp, "ZQM")) > 0) { good++; tmp = substr(tmp, p + 3) }
	}
	FNR == 1 { files++ }
	{
		line = $0; start = FNR
		while (line ~ /\\$/ && (getline more) > 0)
			line = substr(line, 1, length(line) - 1) more
		scan(line, FILENAME, start)
	}
	END {
		printf "%d scripts, %d markers inside strings, %d lines with record text outside\n",
			files, good, bad
		exit (bad > 0 || files == 0 || good == 0)
	}' "$T"/scripts/*.gp
}
if ! ls "$T"/scripts/*.gp >/dev/null 2>&1; then
	cat "$T/log-report" "$T/log-compare" >"$T/log"
	fail "gnuplot scripts: report and compare drew no plot (exit $rc_report, $rc_compare)" "$T/log"
elif scan_scripts >"$T/log" 2>&1; then
	pass "gnuplot scripts: record text only inside string literals ($(tail -1 "$T/log"))"
else
	fail "gnuplot scripts: record text outside a string literal" "$T/log"
fi

# Markdown: a table row keeps its columns (no | or newline from a record breaks it)
check_md_tables() {
	LC_ALL=C awk '
	function bars(s,    n, i, c) {
		n = 0
		for (i = 1; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (c == "\\") { i++; continue }
			if (c == "|") n++
		}
		return n
	}
	/^\|/ { n = bars($0); if (!intable) { want = n; intable = 1; rows++ }
		else if (n != want) { printf "%s:%d: %d bars, the header has %d\n", FILENAME, FNR, n, want; bad++ }
		next }
	intable && !/^$/ { printf "%s:%d: a table ends without a blank line\n", FILENAME, FNR; bad++ }
	{ intable = 0 }
	END { exit (bad > 0 || rows == 0) }' "$@"
}
if [ ! -f "$T/mark-out/report.md" ] || [ ! -f "$T/mark-cmp/compare.md" ]; then
	cat "$T/log-report" "$T/log-compare" >"$T/log"
	fail "markdown: no report.md or compare.md was written" "$T/log"
elif check_md_tables "$T/mark-out/report.md" "$T/mark-cmp/compare.md" >"$T/log" 2>&1; then
	pass "markdown: record text keeps every table row in its columns"
else
	fail "markdown: record text breaks a table" "$T/log"
fi
if grep -l '<i>x' "$T/mark-out/report.html" "$T/mark-cmp/compare.html" \
	"$T/mark-out/junit.xml" >"$T/log" 2>&1; then
	fail "html/xml: record text reaches the markup unescaped" "$T/log"
elif ! grep -q 'ZQM' "$T/mark-out/report.html"; then
	fail "html/xml: no record text in report.html at all" "$T/log-report"
else
	pass "html/xml: record text is escaped"
fi

# escape sequences from records reach neither the documents nor the terminal; a broken line
# with one is named on stderr without it
cp -r "$T/mark" "$T/esc-seq"
printf '{"cell": \033[31m red\n' >>"$T/esc-seq/cells.jsonl"
"$ZBENCH" report -o "$T/esc-seq-out" "$T/esc-seq" >"$T/log-esc" 2>&1
esc=$(printf '\033')
if grep -l "$esc" "$T/mark-out/report.md" "$T/mark-out/report.html" "$T/mark-out/junit.xml" \
	"$T/mark-cmp/compare.md" "$T/mark-cmp/compare.html" "$T/log-report" "$T/log-compare" \
	"$T/log-esc" >"$T/log" 2>&1; then
	fail "terminal: an escape character from a record reached a document or stderr" "$T/log"
elif ! grep -q "line 10" "$T/log-esc"; then
	fail "terminal: the broken line was not named" "$T/log-esc"
else
	pass "terminal: no escape character from a record in the documents or on stderr"
fi

# ---- 3. writes never follow a symlink planted in the output directory -------------------------
echo precious >"$T/victim"
plain_names
mkrun "$T/tmpl" "$(axes_default 2)" '[]'
cp -r "$T/tmpl" "$T/tmpl-b"
mkdir -p "$T/tmpl-out"
# zbench names its temporaries after its pid: exec keeps the shell's, so plant them under it
sh -c 'for f in report.md report.html junit.xml; do ln -s "$1" "$2/$f.tmp.$$"; done
	exec "$3" report -o "$2" --junit "$2/junit.xml" "$4"' sh \
	"$T/victim" "$T/tmpl-out" "$ZBENCH" "$T/tmpl" >"$T/log" 2>&1
sh -c 'for f in compare.md compare.html; do ln -s "$1" "$2/$f.tmp.$$"; done
	exec "$3" compare -o "$2" "$4" "$5"' sh \
	"$T/victim" "$T/tmpl-out" "$ZBENCH" "$T/tmpl" "$T/tmpl-b" >>"$T/log" 2>&1
if [ "$(cat "$T/victim")" != precious ]; then
	fail "planted temporaries: report or compare wrote through a symlink" "$T/log"
	echo precious >"$T/victim"
elif [ ! -f "$T/tmpl-out/report.md" ] || [ ! -f "$T/tmpl-out/compare.md" ]; then
	fail "planted temporaries: no report was written" "$T/log"
else
	pass "planted temporaries: report, JUnit and compare do not write through them"
fi

# report-plots and compare-plots as symlinks to a directory elsewhere
mkdir -p "$T/elsewhere" "$T/plots-out"
ln -s "$T/elsewhere" "$T/plots-out/report-plots"
ln -s "$T/elsewhere" "$T/plots-out/compare-plots"
"$ZBENCH" report -o "$T/plots-out" "$T/tmpl" >"$T/log" 2>&1
"$ZBENCH" compare -o "$T/plots-out" "$T/tmpl" "$T/tmpl-b" >>"$T/log" 2>&1
if [ -n "$(ls -A "$T/elsewhere")" ]; then
	ls -l "$T/elsewhere" >>"$T/log"
	fail "plot directories: SVGs were written through a symlink" "$T/log"
elif [ ! -f "$T/plots-out/report.md" ] || [ ! -f "$T/plots-out/compare.md" ]; then
	fail "plot directories: no report was written" "$T/log"
else
	pass "plot directories: a symlinked report-plots or compare-plots is not followed"
fi

# report-cells (the cells' pages) as a symlink to a directory elsewhere: refused, not followed;
# and a cell id with ../ in it stays a name inside report-cells
mkdir -p "$T/cells-elsewhere" "$T/cells-out"
ln -s "$T/cells-elsewhere" "$T/cells-out/report-cells"
"$ZBENCH" report -o "$T/cells-out" "$T/tmpl" >"$T/log" 2>&1
rc=$?
if [ -n "$(ls -A "$T/cells-elsewhere")" ]; then
	fail "cell pages: written through a symlinked report-cells" "$T/log"
elif [ "$rc" != 2 ] || ! grep -q "report-cells" "$T/log"; then
	fail "cell pages: a symlinked report-cells was not refused by name (exit $rc)" "$T/log"
else
	pass "cell pages: a symlinked report-cells is refused, not followed"
fi
cp -r "$T/tmpl" "$T/cellesc"
jq -c '.cell = "../../../cellesc"' "$T/tmpl/cells.jsonl" >"$T/cellesc/cells.jsonl"
"$ZBENCH" report -o "$T/cellesc-out/a/b" "$T/cellesc" >"$T/log" 2>&1
if find "$T" -name '*cellesc.*' ! -path '*/report-cells/*' | grep -q .; then
	fail "cell pages: a ../ in a cell id wrote outside report-cells" "$T/log"
elif ! ls "$T/cellesc-out/a/b/report-cells/"*cellesc.md >/dev/null 2>&1; then
	fail "cell pages: no page for the cell" "$T/log"
else
	pass "cell pages: a ../ in a cell id stays a name inside report-cells"
fi

# an axis name with ../ and a planted directory to walk through
esc_axes=$(jq -cn --arg v1 "$V1" --arg v2 "$V2" '[
	{name: "x/../../../escaped", path: "workload.numjobs", values: [1, 4]},
	{name: "bs", path: "workload.bs", values: [$v1, $v2]}]')
AX1="x/../../../escaped"
mkrun "$T/esc" "$esc_axes" '[]'
cp -r "$T/esc" "$T/esc-b"
mkdir -p "$T/e/out/report-plots" "$T/e/out/compare-plots"
for s in iops bw latency; do
	mkdir -p "$T/e/out/report-plots/$s-0-x" "$T/e/out/compare-plots/$s-x"
done
"$ZBENCH" report -o "$T/e/out" "$T/esc" >"$T/log" 2>&1
"$ZBENCH" compare -o "$T/e/out" "$T/esc" "$T/esc-b" >>"$T/log" 2>&1
escaped=
for f in "$T"/e/escaped* "$T"/escaped*; do
	[ -e "$f" ] && escaped="$escaped $f"
done
if [ -n "$escaped" ]; then
	ls -l "$T"/e >>"$T/log"
	fail "axis names: a ../ in an axis name wrote outside the output directory" "$T/log"
elif ! ls "$T/e/out/report-plots/"*.svg >/dev/null 2>&1; then
	fail "axis names: no plot was written at all" "$T/log"
else
	pass "axis names: a ../ in an axis name stays inside the output directory"
fi

# ---- 4. merge never links or copies what a symlink in a shard points at ------------------------
mkdir -p "$T/secret"
echo "not yours" >"$T/secret/secret"
chmod 600 "$T/secret/secret"
mkshard() {
	mkdir -p "$1/cells"
	jq -n '{zbench: "0.1.0", status: "complete", matrix: {sha256: "ab", content: {name: "m"}},
		image: {hash: "cd"}, shard: {index: 1, count: 1}}' >"$1/manifest.json"
	jq -cn --arg d "$2" '{cell: "c1", index: 0, repeat: 0, attempt: 1, outcome: "ok",
		dir: $d}' >"$1/cells.jsonl"
}
mkshard "$T/shard1" 000-c1-r0
ln -s "$T/secret" "$T/shard1/cells/000-c1-r0"
"$ZBENCH" merge -o "$T/merged1" "$T/shard1" >"$T/log" 2>&1
if [ -e "$T/merged1/cells/000-c1-r0/secret" ]; then
	ls -l "$T/merged1/cells/000-c1-r0" >>"$T/log"
	fail "merge: a symlinked cells/<dir> brought in a file from elsewhere" "$T/log"
else
	pass "merge: a symlinked cells/<dir> is refused"
fi
mkshard "$T/shard2" 000-c1-r0
mkdir -p "$T/shard2/cells/000-c1-r0"
ln -s "$T/secret/secret" "$T/shard2/cells/000-c1-r0/console.log"
ln -s "$T/secret" "$T/shard2/cells/000-c1-r0/sub"
"$ZBENCH" merge -o "$T/merged2" "$T/shard2" >"$T/log" 2>&1
if grep -rqs "not yours" "$T/merged2"; then
	fail "merge: a symlinked file in a cell directory was linked or copied" "$T/log"
else
	pass "merge: symlinks inside a cell directory are not followed"
fi
mkshard "$T/shard3" 000-c1-r0
jq -cn '{cell: "from-elsewhere", index: 0, repeat: 0, attempt: 1, outcome: "ok"}' \
	>"$T/secret/records.jsonl"
rm "$T/shard3/cells.jsonl"
ln -s "$T/secret/records.jsonl" "$T/shard3/cells.jsonl"
"$ZBENCH" merge -o "$T/merged3" "$T/shard3" >"$T/log" 2>&1
if grep -qs "from-elsewhere" "$T/merged3/cells.jsonl"; then
	fail "merge: a symlinked cells.jsonl was read" "$T/log"
else
	pass "merge: a symlinked cells.jsonl is not read"
fi

# ---- readers: symlinked or special files in a run directory ----------------------------------
cp -r "$T/tmpl" "$T/rlink"
mv "$T/rlink/cells.jsonl" "$T/rlink-cells.jsonl"
ln -s "$T/rlink-cells.jsonl" "$T/rlink/cells.jsonl"
"$ZBENCH" report -o "$T/rlink-out" "$T/rlink" >"$T/log" 2>&1
rc=$?
if [ "$rc" -ne 2 ] || [ -f "$T/rlink-out/report.md" ]; then
	fail "readers: report read a symlinked cells.jsonl (exit $rc)" "$T/log"
else
	pass "readers: a symlinked cells.jsonl is refused"
fi
cp -r "$T/tmpl" "$T/fifo"
rm "$T/fifo/manifest.json"
mkfifo "$T/fifo/manifest.json"
timeout 20 "$ZBENCH" report -o "$T/fifo-out" "$T/fifo" >"$T/log" 2>&1
rc=$?
if [ "$rc" -eq 124 ]; then
	fail "readers: report hung opening a FIFO manifest.json" "$T/log"
elif [ "$rc" -ne 2 ]; then
	fail "readers: report accepted a FIFO as manifest.json (exit $rc)" "$T/log"
else
	pass "readers: a FIFO manifest.json is refused without blocking"
fi

# resume opens cells.jsonl to cut a torn record and append: never through a symlink
cp -r "$T/tmpl" "$T/resume"
printf 'line 1\nno newline at the end' >"$T/victim-cells"
rm "$T/resume/cells.jsonl"
ln -s "$T/victim-cells" "$T/resume/cells.jsonl"
"$ZBENCH" run --resume "$T/resume" >"$T/log" 2>&1
if [ "$(cat "$T/victim-cells")" != "$(printf 'line 1\nno newline at the end')" ]; then
	fail "resume: a symlinked cells.jsonl was cut or appended to" "$T/log"
elif ! grep -q symlink "$T/log"; then
	fail "resume: a symlinked cells.jsonl was not refused" "$T/log"
else
	pass "resume: a symlinked cells.jsonl is refused, its target untouched"
fi

# ---- 8. an oversized or broken record is skipped with a warning, not fatal --------------------
cp -r "$T/tmpl" "$T/big"
head -n 1 "$T/tmpl/cells.jsonl" >"$T/big/cells.jsonl"
{
	printf '{"cell":"c-huge","pad":"'
	head -c $((65 * 1024 * 1024)) /dev/zero | tr '\0' 'a'
	printf '"}\n{"cell": not json\n'
} >>"$T/big/cells.jsonl"
sed -n '3p' "$T/tmpl/cells.jsonl" >>"$T/big/cells.jsonl"
cp -r "$T/big" "$T/big-b"
jq '.shard = {index: 1, count: 1} | .matrix.sha256 = "ab" | .image.hash = "cd"' \
	"$T/tmpl/manifest.json" >"$T/big/manifest.json"
big_ok() { # LOG: warned about both lines by file and number
	grep -q "cells.jsonl.*line 2" "$1" && grep -q "cells.jsonl.*line 3" "$1"
}
"$ZBENCH" report -o "$T/big-out" "$T/big" >"$T/log" 2>&1
rc=$?
if [ "$rc" -eq 2 ] || ! big_ok "$T/log" || ! grep -q c0000000000000 "$T/big-out/report.md"; then
	fail "oversized record: report failed or did not say which lines it skipped (exit $rc)" \
		"$T/log"
else
	pass "oversized record: report skips it and says so"
fi
"$ZBENCH" compare -o "$T/big-cmp" "$T/big" "$T/big-b" >"$T/log" 2>&1
rc=$?
if [ "$rc" -ne 0 ] || ! big_ok "$T/log"; then
	fail "oversized record: compare failed or did not say which lines it skipped (exit $rc)" \
		"$T/log"
else
	pass "oversized record: compare skips it and says so"
fi
"$ZBENCH" merge -o "$T/big-merged" "$T/big" >"$T/log" 2>&1
rc=$?
if [ "$rc" -eq 2 ] || ! big_ok "$T/log" ||
	[ "$(wc -l <"$T/big-merged/cells.jsonl" 2>/dev/null)" != 2 ]; then
	fail "oversized record: merge failed or did not say which lines it skipped (exit $rc)" \
		"$T/log"
else
	pass "oversized record: merge keeps the good records and says what it skipped"
fi

echo "rundir: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
