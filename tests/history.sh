#!/bin/sh
# zbench history (docs/history.md) without booting: synthetic runs made from the fixture of
# tests/golden/compare-gate/tiers-fail/a (10 repeats of one cell, with count metrics), each with
# its own start time; a step in read IOPS planted at the 6th of 10 runs. Checks: add and show,
# the change point found where it was planted and not in a flat series, duplicates and runs that
# are not ours refused, a database that is not ours, corrupt, or locked refused with nothing
# changed, and a kill during `history add` leaving the whole run or none of it.
# Prints "history: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
. tests/check.inc
ZBENCH=${ZBENCH:-./zbench}
case $ZBENCH in /*) ;; *) ZBENCH=$(pwd)/$ZBENCH ;; esac
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
db=$tmp/h.db

python3 - tests/golden/compare-gate/tiers-fail/a "$tmp" <<'PY'
import json, os, sys
src, out = sys.argv[1], sys.argv[2]
man = json.load(open(os.path.join(src, "manifest.json")))
recs = [json.loads(l) for l in open(os.path.join(src, "cells.jsonl"))]
def write(name, started, read_f, flush_f=1.0, status="complete", n=None):
    d = os.path.join(out, name)
    os.makedirs(d)
    m = dict(man, started=started, status=status)
    json.dump(m, open(os.path.join(d, "manifest.json"), "w"))
    with open(os.path.join(d, "cells.jsonl"), "w") as f:
        for r in recs[:n]:
            r = json.loads(json.dumps(r))
            for j in r["fio"]["jobs"]:
                j["read"]["iops"] *= read_f
            for disk in r["telemetry_summary"]["disks"].values():
                disk["counts"]["flushes"] = int(disk["counts"]["flushes"] * flush_f)
            f.write(json.dumps(r) + "\n")
noise = [0.01, -0.02, 0.015, 0.0, -0.01, 0.02, -0.015, 0.005, 0.01, -0.005]
for i in range(10):
    write("run%02d" % i, 1790000000 + 86400 * i, (1 + noise[i]) * (0.8 if i >= 5 else 1.0))
write("running", 1790999999, 1.0, status="running")
write("big", 1791000000, 1.0)
os.makedirs(os.path.join(out, "nostart"))
json.dump({"status": "complete"}, open(os.path.join(out, "nostart", "manifest.json"), "w"))
open(os.path.join(out, "nostart", "cells.jsonl"), "w").write(open(os.path.join(src, "cells.jsonl")).read())
PY

count() { sqlite3 "$db" "$1"; }
runs=""
for i in 0 1 2 3 4 5 6 7 8 9; do runs="$runs $tmp/run0$i"; done
check "history add of 10 runs" sh -c "'$ZBENCH' history add --db '$db' $runs >'$tmp/add.out' 2>&1"
check "10 runs, 250 results each" [ "$(count 'SELECT count(*) FROM runs')" = 10 -a \
	"$(count 'SELECT count(*) FROM results')" = 2500 ]
check "the same run again is refused (2), nothing added" sh -c \
	"'$ZBENCH' history add --db '$db' '$tmp/run03' >/dev/null 2>'$tmp/dup.err'; [ \$? -eq 2 ] && grep -q 'already in history' '$tmp/dup.err' && [ \"\$(sqlite3 '$db' 'SELECT count(*) FROM results')\" = 2500 ]"
check "a run still running is refused" sh -c \
	"! '$ZBENCH' history add --db '$db' '$tmp/running' 2>'$tmp/e' && grep -q 'still running' '$tmp/e'"
check "a run without a start time is refused" sh -c \
	"! '$ZBENCH' history add --db '$db' '$tmp/nostart' 2>'$tmp/e' && grep -q 'no start time' '$tmp/e'"
ln -s "$tmp/run00/cells.jsonl" "$tmp/nostart/link.jsonl"
mkdir "$tmp/symlinked" && cp "$tmp/run00/manifest.json" "$tmp/symlinked/" && ln -s "$tmp/run00/cells.jsonl" "$tmp/symlinked/cells.jsonl"
check "cells.jsonl through a symlink is refused (as every reader refuses it)" sh -c \
	"! '$ZBENCH' history add --db '$db' '$tmp/symlinked' 2>/dev/null"

"$ZBENCH" history show --db "$db" --metric read_iops -o "$tmp/page" >"$tmp/show.out" 2>&1
check "history show exits 0" [ $? -eq 0 ]
check "the planted step is found before the 6th run" grep -q "change point before run 6 of 10" "$tmp/show.out"
check "it is marked on the 6th run's line" sh -c "grep -n '<- change' '$tmp/show.out' | grep -q 'run05'"
"$ZBENCH" history show --db "$db" --metric write_iops >"$tmp/flat.out" 2>&1
check "a flat metric has no change point" sh -c "grep -q 'no change point' '$tmp/flat.out' && ! grep -q 'change point before' '$tmp/flat.out'"
check "a count metric over time" sh -c "'$ZBENCH' history show --db '$db' --metric disk_flushes --cell cccc000000000009 | grep -q 'no change point'"
check "the page has a plot and the change marked" sh -c "grep -q '<svg' '$tmp/page/history.html' && grep -q 'class=\"change\"' '$tmp/page/history.html'"
# the page in a real browser (Debian's chromium, headless): the plot is drawn, the change as
# a red line; the flat metric's page has no red at all (the check can fail)
"$ZBENCH" history show --db "$db" --metric write_iops -o "$tmp/flat" >/dev/null 2>&1
shot() { # HTML PNG
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$tmp/chromium" --window-size=800,900 --screenshot="$2" "file://$1" \
		>/dev/null 2>&1 && [ -s "$2" ]
}
check "chromium renders the page (install-deps installs chromium)" shot "$tmp/page/history.html" "$tmp/page.png"
check "chromium renders the flat page" shot "$tmp/flat/history.html" "$tmp/flat.png"
colors=$(python3 tests/png-colors.py "$tmp/page.png" dd0000 3366cc 2>&1 | tr '\n' ' ')
flat=$(python3 tests/png-colors.py "$tmp/flat.png" dd0000 3366cc 2>&1 | tr '\n' ' ')
check "the browser drew the series (blue) and the change (red): $colors" sh -c \
	"set -- $colors; [ \"\${1:-0}\" -gt 100 ] && [ \"\${2:-0}\" -gt 100 ]"
check "no red on the flat page: $flat" sh -c "set -- $flat; [ \"\${1:-1}\" -eq 0 ] && [ \"\${2:-0}\" -gt 100 ]"
check "an unknown metric is an error (2)" sh -c "'$ZBENCH' history show --db '$db' --metric nosuch >/dev/null 2>&1; [ \$? -eq 2 ]"

# databases that are not ours: refused, left byte for byte as they were
sqlite3 "$tmp/other.db" "CREATE TABLE t (x); INSERT INTO t VALUES (1);"
sum=$(sha256sum <"$tmp/other.db")
check "another program's SQLite file is refused, unchanged" sh -c \
	"! '$ZBENCH' history add --db '$tmp/other.db' '$tmp/run00' 2>'$tmp/e' && grep -q 'not a zbench history' '$tmp/e' && [ \"\$(sha256sum <'$tmp/other.db')\" = '$sum' ]"
head -c 8192 /dev/urandom >"$tmp/garbage.db"
sum=$(sha256sum <"$tmp/garbage.db")
check "a file that is no database is refused, unchanged" sh -c \
	"! '$ZBENCH' history show --db '$tmp/garbage.db' --metric read_iops 2>'$tmp/e' && grep -q 'not an SQLite database, or a corrupt one' '$tmp/e' && [ \"\$(sha256sum <'$tmp/garbage.db')\" = '$sum' ]"
cp "$db" "$tmp/corrupt.db"
size=$(stat -c %s "$tmp/corrupt.db")
dd if=/dev/urandom of="$tmp/corrupt.db" bs=4096 seek=$((size / 4096 / 2)) count=2 conv=notrunc 2>/dev/null
sum=$(sha256sum <"$tmp/corrupt.db")
check "a damaged history is refused, unchanged" sh -c \
	"! '$ZBENCH' history add --db '$tmp/corrupt.db' '$tmp/big' 2>'$tmp/e' && grep -qi 'corrupt' '$tmp/e' && [ \"\$(sha256sum <'$tmp/corrupt.db')\" = '$sum' ]"
ln -s "$db" "$tmp/link.db"
check "a history through a symlink is refused" sh -c "! '$ZBENCH' history show --db '$tmp/link.db' --metric read_iops >/dev/null 2>&1"

# locked by another writer (a write transaction held for 8 s): refused after the timeout
python3 -c 'import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").close(); time.sleep(8); c.execute("ROLLBACK")' "$db" "$tmp/locked" &
lock=$!
while [ ! -e "$tmp/locked" ]; do sleep 0.1; done
"$ZBENCH" history add --db "$db" "$tmp/big" >/dev/null 2>"$tmp/e"
rc=$?
check "a history locked by another writer: a clear error (2)" sh -c "[ $rc -eq 2 ] && grep -q 'locked by another writer' '$tmp/e'"
wait $lock
check "nothing lost or added while locked" [ "$(count 'SELECT count(*) FROM results')" = 2500 ]

# a kill during add: the test hook pauses after 120 of 250 results, inside the transaction
ZBENCH_TEST_HISTORY_PAUSE_AFTER=120 "$ZBENCH" history add --db "$db" "$tmp/big" >/dev/null 2>"$tmp/kill.err" &
pid=$!
i=0
while ! grep -q paused "$tmp/kill.err" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
check "killed with 120 of 250 results in its transaction" grep -q "paused after 120" "$tmp/kill.err"
check "after the kill: none of the run, the 10 before whole, the file intact" sh -c \
	"[ \"\$(sqlite3 '$db' 'SELECT count(*) FROM runs')\" = 10 ] && [ \"\$(sqlite3 '$db' 'SELECT count(*) FROM results')\" = 2500 ] && [ \"\$(sqlite3 '$db' 'PRAGMA integrity_check')\" = ok ]"
check "the same run added again after the kill: all of it" sh -c \
	"'$ZBENCH' history add --db '$db' '$tmp/big' >/dev/null 2>&1 && [ \"\$(sqlite3 '$db' 'SELECT count(*) FROM results')\" = 2750 ]"
# and kills at arbitrary moments, without the hook: the run is all there or not there
sqlite3 "$db" "DELETE FROM results WHERE run = (SELECT id FROM runs WHERE dir LIKE '%big'); DELETE FROM runs WHERE dir LIKE '%big'"
ok=1
for ms in 1 3 5 8 12 20 40; do
	"$ZBENCH" history add --db "$db" "$tmp/big" >/dev/null 2>&1 &
	pid=$!
	sleep "0.$(printf %03d $ms)"
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	n=$(count "SELECT count(*) FROM results r JOIN runs u ON u.id = r.run WHERE u.dir LIKE '%big'")
	case $n in 0 | 250) ;; *) ok=0 ;; esac
	[ "$n" = 250 ] && sqlite3 "$db" "DELETE FROM results WHERE run = (SELECT id FROM runs WHERE dir LIKE '%big'); DELETE FROM runs WHERE dir LIKE '%big'"
done
check "kills at 1 to 40 ms: each left 0 or 250 of the run's results" [ $ok -eq 1 ]
check "integrity after the kills" [ "$(count 'PRAGMA integrity_check')" = ok ]

echo "history: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
