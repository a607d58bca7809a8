#!/bin/sh
# fio's own example job files (Debian's fio-examples package) through `zbench matrix check`:
# each one either converts (exit 0, its cells listed) or is refused with FILE:LINE:COL naming an
# option or a job section that really is on that line of the file (exit 2). Anything else (a
# crash, a message without a position, a position that names the wrong line) fails. Prints
# "fio-examples: N passed, N failed" and the converted/refused counts.
set -u
cd "$(dirname "$0")/.."
ZBENCH=${ZBENCH:-./zbench}
EX=${FIO_EXAMPLES:-/usr/share/doc/fio/examples}
passed=0 failed=0 converted=0 refused=0
fail() {
	failed=$((failed + 1))
	echo "  FAIL $1"
	[ -n "${2:-}" ] && echo "$2" | sed 's/^/    /'
}
if ! ls "$EX"/*.fio >/dev/null 2>&1; then
	echo "fio-examples: no job files in $EX (apt-get install fio-examples; builder/install-deps.sh does)"
	echo "fio-examples: 0 passed, 1 failed"
	exit 1
fi
for f in "$EX"/*.fio; do
	out=$("$ZBENCH" matrix check "$f" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		if echo "$out" | grep -q "^$f: [0-9]* cells*$"; then
			converted=$((converted + 1)) passed=$((passed + 1))
		else
			fail "$f: exit 0 without its cells" "$out"
		fi
		continue
	fi
	[ $rc -eq 2 ] || { fail "$f: exit $rc" "$out"; continue; }
	# zbench: FILE:LINE:COL: option 'NAME': ...   or   job 'NAME' ...   or   'include': ...
	rest=${out#"zbench: $f:"}
	[ "$rest" != "$out" ] || { fail "$f: refused without its position" "$out"; continue; }
	line=${rest%%:*}
	case $line in '' | *[!0-9]*) fail "$f: no line number" "$out"; continue ;; esac
	text=$(sed -n "${line}p" "$f")
	what=$(echo "$rest" | sed -n "s/^[0-9]*:[0-9]*: \(option\|job\) '\([^']*\)'.*/\1 \2/p;s/^[0-9]*:[0-9]*: '\(include\)'.*/option \1/p" | head -n1)
	kind=${what%% *} name=${what#* }
	case $kind in
	option) echo "$text" | grep -Eq "^[[:space:]]*$name([[:space:]]*=|[[:space:]]*$)|^[[:space:]]*include[[:space:]]" ;;
	job) [ "$(echo "$text" | tr -d ' \t\r')" = "[$name]" ] ;;
	*) false ;;
	esac || { fail "$f: the message does not name what is on line $line ('$text')" "$out"; continue; }
	refused=$((refused + 1)) passed=$((passed + 1))
done
# both outcomes must occur: a converter that refused everything would pass the loop above
[ "$converted" -ge 5 ] || fail "only $converted example(s) converted (want at least 5)"
[ "$refused" -ge 5 ] || fail "only $refused example(s) refused (want at least 5)"
echo "fio-examples: $converted converted, $refused refused with the option and line named"
echo "fio-examples: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
