#!/bin/sh
# The include lines of builder/ against the floors (docs/architecture.md, "Includes"): HOST_DIRS
# in the Makefile lists the host's folders from the ground up, and a file may include a header
# of its own folder (written bare), of a folder listed before its own, or of guest/ (written with
# the folder: "vm/disk.h", "guest/units.h"). A climb (a header of a folder listed after the
# file's) fails unless docs/architecture.md names it, on a line "- `FILE` -> `HEADER`: why"
# under "Climbs"; a named climb that no longer happens fails too, so the list stays true. Guest
# sources may include nothing of builder/. Then the check is shown to fail: on a copy of the
# tree with one climb, one bare cross-folder include and one folder missing from HOST_DIRS.
# Prints "includes: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
. tests/check.inc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check_tree ROOT: 0 if ROOT's includes keep to the floors; each offence on stdout
check_tree() {
	python3 - "$1" <<'PY'
import os, re, sys
root = sys.argv[1]
mk = open(os.path.join(root, "Makefile")).read()
m = re.search(r"^HOST_DIRS\s*=\s*(.*)$", mk, re.M)
floors = [d.split("/", 1)[1] for d in m.group(1).split()]
rank = {d: i for i, d in enumerate(floors)}
doc = open(os.path.join(root, "docs/architecture.md")).read()
sec = re.search(r"^#+ Climbs\n(.*?)(?=^#)", doc, re.M | re.S)
allowed = set(re.findall(r"^- `([^`]+)` -> `([^`]+)`", sec.group(1) if sec else "", re.M))
seen, bad = set(), []
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
for d in sorted(os.listdir(os.path.join(root, "builder"))):
    if not os.path.isdir(os.path.join(root, "builder", d)):
        continue
    if d not in rank:
        bad.append(f"builder/{d}/ is not in the Makefile's HOST_DIRS (which floor is it?)")
        continue
    for f in sorted(os.listdir(os.path.join(root, "builder", d))):
        if not f.endswith((".c", ".h")):
            continue
        path = f"builder/{d}/{f}"
        for h in inc.findall(open(os.path.join(root, path)).read()):
            if "/" not in h:
                if not os.path.exists(os.path.join(root, "builder", d, h)):
                    bad.append(f'{path}: "{h}" is another folder\'s: write it with its folder')
                continue
            top = h.split("/")[0]
            if top == "guest":
                continue
            if top not in rank or ".." in h:
                bad.append(f'{path}: "{h}" is not a header of a builder/ folder')
            elif rank[top] > rank[d]:
                if (path, h) in allowed:
                    seen.add((path, h))
                else:
                    bad.append(f'{path}: "{h}" climbs from {d}/ up to {top}/ '
                               "(docs/architecture.md, \"Climbs\")")
for path, h in sorted(allowed - seen):
    bad.append(f"docs/architecture.md names the climb {path} -> {h}, which no longer happens")
for dirpath, _, files in os.walk(os.path.join(root, "guest")):
    for f in files:
        if f.endswith((".c", ".h")):
            p = os.path.join(dirpath, f)
            for h in inc.findall(open(p).read()):
                if h.split("/")[0] in rank:
                    bad.append(f'{os.path.relpath(p, root)}: "{h}": the guest includes nothing of builder/')
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}

check "builder/'s includes keep to the floors of HOST_DIRS" check_tree .

# The same check must fail on a tree that breaks each rule.
mkdir -p "$tmp/t/docs"
cp Makefile "$tmp/t/" && cp docs/architecture.md "$tmp/t/docs/" && cp -r builder guest "$tmp/t/"
fails_with() { # WHAT PATTERN: the broken copy fails, naming PATTERN
	check_tree "$tmp/t" >"$tmp/out" && return 1
	grep -q "$1" "$tmp/out" || { cat "$tmp/out"; return 1; }
}
printf '#include "run/channel.h"\n' >>"$tmp/t/builder/vm/vm.c"
check "a climb fails (vm/ including run/)" fails_with 'builder/vm/vm.c: "run/channel.h" climbs'
cp builder/vm/vm.c "$tmp/t/builder/vm/vm.c"
printf '#include "util.h"\n' >>"$tmp/t/builder/vm/vm.c"
check "an include without its folder fails" fails_with 'builder/vm/vm.c: "util.h" is another folder'
cp builder/vm/vm.c "$tmp/t/builder/vm/vm.c"
mkdir "$tmp/t/builder/attic"
check "a folder outside HOST_DIRS fails" fails_with 'builder/attic/ is not in'
rmdir "$tmp/t/builder/attic"
printf '\n- `builder/core/log.c` -> `cli/commands.h`: none\n' >"$tmp/climb"
awk -v f="$tmp/climb" '{print} /^#+ Climbs$/ {while ((getline l <f) > 0) print l}' \
	docs/architecture.md >"$tmp/t/docs/architecture.md"
check "a named climb that does not happen fails" fails_with 'names the climb builder/core/log.c'
cp docs/architecture.md "$tmp/t/docs/"
check "the restored copy passes" check_tree "$tmp/t"

echo "includes: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
