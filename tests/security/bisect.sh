#!/bin/sh
# `zbench bisect`'s output directory read back (docs/security.md, "Bisect state"): bisect.json
# is untrusted input. Only marks and builds of commits that the repository itself lists between
# the ends are taken from it, and only when it names the same inputs; anything else is refused
# before a clone, a build or a VM. A complete, valid state answers without building anything
# (the resume path, no VM). Also: a ref that looks like an option, ends not in order, a planted
# symlink for the checkout or the state. Prints "bisect: N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
. tests/check.inc
ZBENCH=${ZBENCH:-./zbench}
tmp=$(mktemp -d /tmp/zbench-sec-bisect.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
matrix=matrices/ab-aggregation.json
# A recipe whose root cannot be built (its mirror refuses connections) and a cache of our own:
# should a refusal here ever fail, bisect goes on to build, and that must fail in seconds
# rather than debootstrap for minutes; `timeout` bounds it anyway.
recipe=$tmp/recipe.json
jq '.mirror = "http://127.0.0.1:9/debian"' images/debian12-zfs-src.json >"$recipe"
export ZBENCH_CACHE_DIR="$tmp/cache"

repo=$tmp/repo
mkdir -p "$repo"
g() { git -C "$repo" -c user.name=t -c user.email=t@invalid "$@"; }
g init -q
for i in 0 1 2 3 4; do
	echo "$i" >"$repo/f"
	g add f && g commit -qm "c$i"
done
c() { g rev-parse "HEAD~$1"; }
good=$(c 4) bad=$(c 0)

# the inputs hash bisect computes (builder/cli/cmd_bisect.c, inputs_hash()): a state of these inputs
inputs=$(printf 'zbench bisect 1\ngood %s\nbad %s\ngate %s\nmatrix %s\nrecipe %s\n' "$good" "$bad" \
	'write_bw < -20%' "$(sha256sum <"$matrix" | cut -d' ' -f1)" \
	"$(sha256sum <"$recipe" | cut -d' ' -f1)" | sha256sum | cut -d' ' -f1)

# STATE_JSON OUT: write OUT/bisect.json
state() { mkdir -p "$2" && printf '%s\n' "$1" >"$2/bisect.json"; }
# OUT [ARGS...]: bisect into OUT (stdout OUT.out, stderr OUT.err); its exit status
run() {
	o=$1
	shift
	timeout 120 "$ZBENCH" bisect --repo "$repo" --good HEAD~4 --bad HEAD --metric write_bw \
		--threshold -20% -i "$recipe" -o "$o" "$@" "$matrix" >"$o.out" 2>"$o.err"
}
head='"zbench_bisect": 1, "inputs": "'$inputs'", "good": "'$good'", "bad": "'$bad'"'

# a complete state: c3 good, c2 good, c1 bad -> the first bad commit is c1, no test, no build
state "{$head, \"marks\": {\"$(c 3)\": \"good\", \"$(c 2)\": \"good\", \"$(c 1)\": \"bad\"}, \"built\": []}" "$tmp/ok"
run "$tmp/ok"
check "a complete state answers from the state alone (exit 0, the commit on stdout)" \
	[ $? -eq 0 -a "$(cat "$tmp/ok.out")" = "$(c 1)" ]
check "...without building or running (no build, no step)" \
	[ -z "$(ls "$tmp/ok/steps")" ] && ! grep -q "build [0-9]" "$tmp/ok.err"
check "...result.json says so" \
	[ "$(jq -r '"\(.status) \(.first_bad) \(.tests) \(.builds)"' "$tmp/ok/result.json")" = "found $(c 1) 3 0" ]

# every commit between the ends skipped: the first bad one is one of them or the bad end (exit 1)
state "{$head, \"marks\": {\"$(c 3)\": \"skip\", \"$(c 2)\": \"skip\", \"$(c 1)\": \"skip\"}, \"built\": []}" "$tmp/amb"
run "$tmp/amb"
check "only skipped commits left: exit 1, ambiguous, the 4 suspects listed, nothing built" \
	[ $? -eq 1 -a "$(jq -r '"\(.status) \(.candidates | length) \(.builds)"' "$tmp/amb/result.json")" = "ambiguous 4 0" ]

# NAME|STATE|MESSAGE: each refused with exit 2 and the message, before the clone
while IFS='|' read -r name st msg; do
	o=$tmp/$name
	state "$st" "$o"
	run "$o"
	rc=$?
	check "$name: refused (exit 2, '$msg'), nothing cloned" \
		[ "$rc" -eq 2 -a ! -e "$o/src" ] && grep -q "bisect.json'.*$msg" "$o.err"
done <<EOF
not-json|{"zbench_bisect": 1,|line
array|[]|not a JSON object
version|{"zbench_bisect": 2}|is not 1
other-inputs|{"zbench_bisect": 1, "inputs": "0000", "good": "$good", "bad": "$bad", "marks": {}, "built": []}|other inputs
other-ends|{"zbench_bisect": 1, "inputs": "$inputs", "good": "$(c 3)", "bad": "$bad", "marks": {}, "built": []}|ends
foreign-commit|{$head, "marks": {"0123456789012345678901234567890123456789": "bad"}, "built": []}|not a commit between
path-as-commit|{$head, "marks": {"../../../../etc/passwd": "bad"}, "built": []}|not a commit between
end-marked|{$head, "marks": {"$good": "bad"}, "built": []}|not a commit between
verdict|{$head, "marks": {"$(c 2)": "rm -rf /"}, "built": []}|not "good"
duplicate-key|{$head, "marks": {"$(c 2)": "bad", "$(c 2)": "good"}, "built": []}|duplicate
built-twice|{$head, "marks": {}, "built": ["$(c 2)", "$(c 2)"]}|twice
built-foreign|{$head, "marks": {}, "built": ["/etc/shadow"]}|not a commit
EOF

# a NUL byte in the state
mkdir -p "$tmp/nul" && printf '{"zbench_bisect": 1}\0{}' >"$tmp/nul/bisect.json"
run "$tmp/nul"
check "a state with a NUL byte is refused" [ $? -eq 2 ] && grep -q "NUL" "$tmp/nul.err"

# a symlink planted as the state or as the checkout
mkdir -p "$tmp/lnk" && ln -s "$tmp/ok/bisect.json" "$tmp/lnk/bisect.json"
run "$tmp/lnk"
check "bisect.json as a symlink is not followed (exit 2)" [ $? -eq 2 ] && grep -qi "symlink\|loop" "$tmp/lnk.err"
mkdir -p "$tmp/srclnk" "$tmp/elsewhere" && cp "$tmp/ok/bisect.json" "$tmp/srclnk/" &&
	ln -s "$tmp/elsewhere" "$tmp/srclnk/src"
run "$tmp/srclnk"
check "src as a symlink is refused (exit 2), nothing written through it" \
	[ $? -eq 2 -a -z "$(ls -A "$tmp/elsewhere")" ] && grep -q "not a directory" "$tmp/srclnk.err"

# refs: an option-looking ref, ends out of order
timeout 120 "$ZBENCH" bisect --repo "$repo" --good=--output=/tmp/x --bad HEAD --metric write_bw --threshold -20% \
	-o "$tmp/opt" "$matrix" >/dev/null 2>"$tmp/opt.err"
check "a ref that looks like an option is refused (exit 2)" [ $? -eq 2 ] && grep -q "not a commit name" "$tmp/opt.err"
timeout 120 "$ZBENCH" bisect --repo "$repo" --good HEAD --bad HEAD~4 --metric write_bw --threshold -20% \
	-o "$tmp/rev" "$matrix" >/dev/null 2>"$tmp/rev.err"
check "--good after --bad is refused (exit 2)" [ $? -eq 2 ] && grep -q "not an ancestor" "$tmp/rev.err"
timeout 120 "$ZBENCH" bisect --repo "$repo" --good HEAD~4 --bad HEAD --metric no_such --threshold -20% \
	-o "$tmp/met" "$matrix" >/dev/null 2>"$tmp/met.err"
check "an unknown metric is refused (exit 2)" [ $? -eq 2 ] && grep -q "unknown metric" "$tmp/met.err"

echo "bisect: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
