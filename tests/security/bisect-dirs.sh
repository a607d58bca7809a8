#!/bin/sh
# `zbench bisect -o DIR` and a DIR/src someone else left (docs/security.md, "Bisect
# directories"): bisect reuses only the checkout it created itself: recorded in its state
# (device and inode), owned by the caller, mode 0700. Anything else is refused before git runs
# in it (a planted clean filter would run as root on `git status`). No VM, no build: each state
# here is complete, so a bisect that gets past the checkout answers from it.
# Prints "bisect-dirs: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/check.inc
ZBENCH=${ZBENCH:-./zbench}
t=$(mktemp -d /tmp/zbench-sec-bisect-dirs.XXXXXX)
chmod 755 "$t"
trap 'rm -rf "$t"' EXIT
matrix=matrices/ab-aggregation.json
recipe=$t/recipe.json
jq '.mirror = "http://127.0.0.1:9/debian"' images/debian12-zfs-src.json >"$recipe"
export ZBENCH_CACHE_DIR="$t/cache"
mkdir -m 1777 "$t/m"
pwned() { ls "$t"/m/pwned-* >/dev/null 2>&1; }

repo=$t/repo
mkdir -p "$repo"
g() { git -C "$repo" -c user.name=t -c user.email=t@invalid "$@"; }
g init -q
for i in 0 1 2 3 4; do
	echo "$i" >"$repo/f" && g add f && g commit -qm "c$i"
done
c() { g rev-parse "HEAD~$1"; }
good=$(c 4) bad=$(c 0)
inputs=$(printf 'zbench bisect 1\ngood %s\nbad %s\ngate %s\nmatrix %s\nrecipe %s\n' "$good" "$bad" \
	'write_bw < -20%' "$(sha256sum <"$matrix" | cut -d' ' -f1)" \
	"$(sha256sum <"$recipe" | cut -d' ' -f1)" | sha256sum | cut -d' ' -f1)
# DIR [EXTRA_JSON]: a complete state in DIR (c1 is the first bad commit)
state() {
	mkdir -p "$1" && jq -n --arg i "$inputs" --arg g "$good" --arg b "$bad" --arg c3 "$(c 3)" \
		--arg c2 "$(c 2)" --arg c1 "$(c 1)" --argjson x "${2:-{\}}" \
		'{zbench_bisect: 1, inputs: $i, good: $g, bad: $b,
		  marks: {($c3): "good", ($c2): "good", ($c1): "bad"}, built: []} + $x' >"$1/bisect.json"
}
run() {
	o=$1
	timeout 120 "$ZBENCH" bisect --repo "$repo" --good HEAD~4 --bad HEAD --metric write_bw \
		--threshold -20% -i "$recipe" -o "$o" "$matrix" >"$o.out" 2>"$o.err"
}
# DIR/src: a clone at the good end whose configuration runs a marker on `git status`
hostile_src() {
	git clone -q -n "$repo" "$1/src" && git -C "$1/src" checkout -q --detach "$good" &&
		echo '* filter=pwn' >"$1/src/.git/info/attributes" &&
		printf '[filter "pwn"]\n\tclean = sh -c "id >%s/m/pwned-clean; cat"\n' "$t" >>"$1/src/.git/config" &&
		touch -d 2031-01-01 "$1/src/f"
}

# a bisect makes its own checkout: mode 0700, recorded in the state; run again, it is reused
state "$t/own"
run "$t/own"
check "a new bisect answers (exit 0)" [ $? -eq 0 ]
check "...its checkout is mode 0700" [ "$(stat -c %a "$t/own/src")" = 700 ]
check "...and recorded in its state" \
	[ "$(jq -r '.src.ino' "$t/own/bisect.json")" = "$(stat -c %i "$t/own/src")" ]
run "$t/own"
check "run again, the recorded checkout is reused (exit 0)" [ $? -eq 0 ]

# somebody else's src (owned by nobody), with a filter: refused, git never runs in it
state "$t/other"
hostile_src "$t/other" && chown -R nobody "$t/other/src"
run "$t/other"
check "a src owned by someone else is refused (exit 2)" [ $? -eq 2 ]
check "...without running git in it (no marker)" eval '! pwned'
check "...the message says why" grep -q "src'.*not the checkout this bisect made" "$t/other.err"

# root's own src, mode 0700, but not recorded in the state
state "$t/unrec"
hostile_src "$t/unrec" && chmod 700 "$t/unrec/src"
run "$t/unrec"
check "a src the state does not record is refused (exit 2)" [ $? -eq 2 ]
# recorded (its own device and inode planted in the state), but mode 0755
state "$t/mode"
hostile_src "$t/mode" && chmod 755 "$t/mode/src"
state "$t/mode" "{\"src\": {\"dev\": $(stat -c %d "$t/mode/src"), \"ino\": $(stat -c %i "$t/mode/src")}}"
run "$t/mode"
check "a recorded src of mode 0755 is refused (exit 2)" [ $? -eq 2 ]
check "none of them ran the filter" eval '! pwned'

echo "bisect-dirs: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
