#!/bin/sh
# A recipe's OpenZFS source tree from someone else (docs/security.md, "Source trees"): git
# never runs the tree's own configuration. A checkout owned by another user carries a clean and
# a smudge filter selected by its .gitattributes, an fsmonitor, a textconv, hooks, an include
# and a core.hooksPath; each would write a marker as whoever ran it. `zbench image path` (which
# hashes the tree for the image key) must leave no marker and still compute the key from the
# commit and the diff. A `.git` that is a symlink or a file, and objects borrowed through
# alternates, are refused before git runs. The build-time reads (`git archive`, `git apply` in
# an extracted tree that ships a .git) are shown by tests/unit/test_git_tree.c.
# Prints "sources: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/check.inc
ZBENCH=${ZBENCH:-./zbench}
t=$(mktemp -d /tmp/zbench-sec-sources.XXXXXX)
chmod 755 "$t"
trap 'rm -rf "$t"' EXIT
export ZBENCH_CACHE_DIR="$t/cache"

# the payload every hostile command runs: a marker named after the command, and the input back
mkdir -m 1777 "$t/m"
cat >"$t/pwn" <<EOF
#!/bin/sh
id >"$t/m/pwned-\${1:-cmd}"
exec cat
EOF
chmod 755 "$t/pwn"
pwned() { ls "$t"/m/pwned-* >/dev/null 2>&1; }

# REPO: a checkout owned by nobody whose configuration would run $t/pwn everywhere it can
hostile_repo() {
	r=$1
	mkdir -p "$r" && git -C "$r" init -q && echo one >"$r/f" && echo '* filter=pwn diff=pwn' >"$r/.gitattributes" &&
		git -C "$r" add f .gitattributes &&
		git -C "$r" -c user.name=t -c user.email=t@invalid commit -qm c || return 1
	# the same commit, clean and with no hostile configuration (made before the config is)
	git clone -q "$r" "$t/plain" || return 1
	cat >>"$r/.git/config" <<EOF
[filter "pwn"]
	clean = $t/pwn clean
	smudge = $t/pwn smudge
	required = true
[diff "pwn"]
	textconv = $t/pwn textconv
	command = $t/pwn diffcmd
[core]
	fsmonitor = $t/pwn fsmonitor
	pager = $t/pwn pager
[include]
	path = $t/included
EOF
	printf '[core]\n\thooksPath = %s/hooks\n' "$t" >"$t/included"
	mkdir -p "$r/.git/hooks" && for h in post-checkout pre-commit reference-transaction; do
		printf '#!/bin/sh\nid >%s/m/pwned-hook-%s\n' "$t" "$h" >"$r/.git/hooks/$h"
		chmod 755 "$r/.git/hooks/$h"
	done
	# a timestamp git cannot trust: the file must be read (and cleaned) again
	touch -d '2031-01-01' "$r/f"
	chown -R nobody:nogroup "$r"
}
# RECIPE REPO: the shipped source recipe, its zfs_source this checkout
recipe() { jq --arg p "$2" '.zfs_source = {kind: "dir", path: $p}' images/debian12-zfs-src.json >"$1"; }
key() { "$ZBENCH" image path "$1" 2>&1 | sed -n "s/.*' \([0-9a-f]\{12\}\) is not in the cache.*/\1/p"; }

hostile_repo "$t/repo" || { echo "sources: cannot make the fixture"; echo "sources: 0 passed, 1 failed"; exit 1; }
check "fixture: the tree's filter really runs for git as its owner (the attack is real)" \
	sh -c "cd '$t/repo' && setpriv --reuid=nobody --regid=nogroup --clear-groups git diff HEAD >/dev/null 2>&1; [ -e '$t/m/pwned-clean' ]"
rm -f "$t"/m/pwned-*

recipe "$t/r.json" "$t/repo"
"$ZBENCH" image path "$t/r.json" >"$t/out" 2>"$t/err"
check "image path of a hostile tree ran none of its commands (no marker)" eval '! pwned' 
check "...and said nothing of its filters" sh -c "! grep -qi 'filter\|fsmonitor' '$t/err'"
k1=$(key "$t/r.json")
check "...and still computed the key from the commit (the image is merely not built)" [ -n "$k1" ]

# the clean clone of the same commit: the key differs only by the diff
rm -f "$t"/m/pwned-*
recipe "$t/plain.json" "$t/plain"
k0=$(key "$t/plain.json")
check "a clean clone of the same commit has a key" [ -n "$k0" ]
echo two >"$t/repo/f" && chown nobody "$t/repo/f"
k2=$(key "$t/r.json")
check "an uncommitted change is seen (a new key)" [ -n "$k2" -a "$k2" != "$k1" ]
check "...and still runs nothing" eval '! pwned' 
echo one >"$t/repo/f" && chown nobody "$t/repo/f" && touch -d '2031-01-02' "$t/repo/f"
check "...and undone, the key is the first one again (content, not stat data)" [ "$(key "$t/r.json")" = "$k1" ]

# a .git that is not a plain directory, and borrowed objects: refused before git runs
mkdir -p "$t/lnk" && ln -s "$t/repo/.git" "$t/lnk/.git" && cp "$t/plain/f" "$t/lnk/f"
recipe "$t/lnk.json" "$t/lnk"
"$ZBENCH" image path "$t/lnk.json" >/dev/null 2>"$t/lnk.err"
check "a .git symlink is refused, naming it" grep -q "lnk/.git'.*not a directory" "$t/lnk.err"
mkdir -p "$t/wt" && echo "gitdir: $t/repo/.git" >"$t/wt/.git"
recipe "$t/wt.json" "$t/wt"
"$ZBENCH" image path "$t/wt.json" >/dev/null 2>"$t/wt.err"
check "a .git file (a linked worktree) is refused" grep -q "wt/.git'.*not a directory" "$t/wt.err"
git clone -q --shared "$t/plain" "$t/alt" 2>/dev/null
recipe "$t/alt.json" "$t/alt"
"$ZBENCH" image path "$t/alt.json" >/dev/null 2>"$t/alt.err"
check "objects borrowed through alternates are refused" grep -q "alternates" "$t/alt.err"
check "none of them ran a command" eval '! pwned' 

echo "sources: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
