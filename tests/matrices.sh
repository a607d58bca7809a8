#!/bin/sh
# Every study file under matrices/ (the seeds' full and CI variants, quick.json, ...) must load
# and expand without booting anything: `zbench matrix check` on each; every seed's findings
# ledger (matrices/seedNNN.ledger.json) must load against them, and every seed has one. Prints
# "matrices: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
ZBENCH=${ZBENCH:-./zbench}
passed=0 failed=0
for f in matrices/*.json; do
	case "$f" in *.ledger.json) continue ;; esac
	if out=$("$ZBENCH" matrix check "$f" 2>&1); then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $f"
		echo "$out" | sed 's/^/    /'
	fi
done
# What each would cost, before it runs: every estimate prints, and no cell writes more than its
# disks hold; a full-scale seed matrix says what machine it needs.
for f in matrices/*.json; do
	case "$f" in *.ledger.json) continue ;; esac
	if out=$("$ZBENCH" matrix check --estimate "$f" 2>&1) && ! echo "$out" | grep -q "do not fit"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $f: zbench matrix check --estimate"
		echo "$out" | sed 's/^/    /'
	fi
done
for f in matrices/seed00?-*.json; do
	case "$f" in *-ci.json | *-medium.json | *-ab.json) continue ;; esac
	if "$ZBENCH" matrix check --estimate "$f" | grep -q "the matrix says it needs"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $f: a full-scale matrix states the machine it needs (\"machine\")"
	fi
done
for f in matrices/*.ledger.json; do
	if out=$("$ZBENCH" matrix ledger "$f" 2>&1); then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $f"
		echo "$out" | sed 's/^/    /'
	fi
done
# Each seed has a full study, a CI-scale variant, a medium one and a findings ledger.
for n in 000 001 002 003 004; do
	if [ ! -f matrices/seed$n.ledger.json ]; then
		failed=$((failed + 1))
		echo "FAIL no matrices/seed$n.ledger.json"
	fi
	for v in "" -ci -medium; do
		if ! ls matrices/seed$n-*$v.json >/dev/null 2>&1; then
			failed=$((failed + 1))
			echo "FAIL no matrices/seed$n-*$v.json"
		fi
	done
done
# A medium variant runs in at most an hour on the reference machine (issue 33, item 4): its
# estimate, one run at a time, says so.
for f in matrices/seed00?-*-medium.json; do
	line=$("$ZBENCH" matrix check --estimate "$f" | head -1)
	mins=$(echo "$line" | sed -n 's/.*about \([0-9.]*\) \(s\|min\|h\) one at a time.*/\1 \2/p' |
		awk '{ print $2 == "h" ? $1 * 60 : $2 == "s" ? $1 / 60 : $1 }')
	if [ -n "$mins" ] && awk -v m="$mins" 'BEGIN { exit !(m <= 60) }'; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $f: a medium variant must estimate at most 60 min: $line"
	fi
done
# A study says what it is in one line; why it is built so is docs/seeds-notes.md's.
for f in matrices/*.json; do
	d=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("description", ""))' "$f")
	if [ "${#d}" -le 160 ] && [ "$(printf '%s' "$d" | wc -l)" -eq 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $f: its description is ${#d} characters; keep one line (at most 160) and put the reasoning in docs/seeds-notes.md"
	fi
done
echo "matrices: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
