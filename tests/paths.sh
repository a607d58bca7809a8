#!/bin/sh
# Nothing stale: every repository path that a comment (C, shell, the Makefile) or a doc (*.md)
# names must exist. A path with a folder of ours (builder/vm/disk.c, vm/disk.h, docs/disks.md,
# matrices/quick.json) must be that file or folder; a bare source name (disk.c, cmd_*.c, disk.h,
# run-unit.sh) must be some file's name; an upper-case part is a placeholder (images/NAME.json).
# Names of other projects' files (fio's, OpenZFS's, QEMU's) are listed below with their project.
# Then the check is shown to fail on a copy of the tree whose comment names a moved file.
# Prints "paths: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
. tests/check.inc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check_paths ROOT: 0 if every path named in ROOT's comments and docs exists; each stale one
# printed as FILE:LINE: PATH
check_paths() {
	python3 - "$1" <<'PY'
import glob, os, re, subprocess, sys
os.chdir(sys.argv[1])
# other projects' files that our comments and docs name, and whose they are
FOREIGN = {
    "backend.c": "fio", "io_u.c": "fio", "filesetup.c": "fio",
    "vdev_queue.c": "OpenZFS", "arc.c": "OpenZFS", "miscdevice.h": "Linux",
    "docs/interop/qcow2.txt": "QEMU", "utils.h": "crun",
}
files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], capture_output=True,
                       text=True).stdout.split()
files = [f for f in files if os.path.exists(f)]
have = set(files)
names = {os.path.basename(f) for f in files}
for f in files:
    d = os.path.dirname(f)
    while d:
        have.add(d)
        d = os.path.dirname(d)
tops = {f.split("/")[0] for f in files if "/" in f}
stages = {d.split("/")[1] for d in have if d.startswith("builder/") and d.count("/") == 1}

def exists(p):
    """True or False for a path of ours; None for a path that is not the repository's."""
    if p in FOREIGN or glob.glob("/usr/include/" + p) or glob.glob("/usr/include/*/" + p):
        return True
    if re.search(r"[A-Z]{3,}", p) or "<" in p:
        return True  # a placeholder: images/NAME.json, seedNNN
    head = p.split("/")[0]
    if "/" not in p:
        return any(glob.fnmatch.fnmatch(n, p) for n in names)
    for base in ("", "builder/", "guest/"):
        if (base + head) in have and (base == "" and head in tops or base == "builder/" and
                                      head in stages or base == "guest/" and head == "engine"):
            q = base + p
            return bool(glob.glob(q)) if "*" in q else q in have
    return None

def comments(path, text):
    """(line number, comment text) of a source file; every line of a doc."""
    if path.endswith(".md"):
        return enumerate(text.split("\n"), 1)
    out = []
    if path.endswith((".c", ".h")):
        for m in re.finditer(r"/\*.*?\*/|//[^\n]*", text, re.S):
            first = text.count("\n", 0, m.start()) + 1
            out += [(first + i, l) for i, l in enumerate(m.group(0).split("\n"))]
        return out
    for n, line in enumerate(text.split("\n"), 1):
        m = re.search(r"(^|\s)#(?!!)(.*)", line)
        if m:
            out.append((n, m.group(2)))
    return out

scan = [f for f in files
        if (f.endswith((".c", ".h", ".md", ".sh")) or os.path.basename(f) == "Makefile")
        and not f.startswith(("tests/golden/", "tests/fuzz/corpus/", "build/"))]
tok = re.compile(r"(?<![\w./$~-])((?:[\w.-]+/)*[\w*.-]+\.(?:c|h|sh|md|json|py|inc|txt))(?![\w/])")
bad = []
for f in scan:
    for n, line in comments(f, open(f, errors="replace").read()):
        for m in tok.finditer(line):
            p = m.group(1).rstrip(".")
            if "/" not in p and not p.endswith((".c", ".h", ".sh")):
                continue  # report.md, cells.jsonl: a run's files, not ours
            if p.startswith(("_", ".")):
                continue  # a suffix (_int.h)
            if exists(p) is False:
                bad.append(f"{f}:{n}: {p}")
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

check "every path a comment or a doc names exists (a stale one is printed as FILE:LINE: PATH)" \
	check_paths .

# check_map ROOT: docs/architecture.md names every source of builder/ and guest/ (by path, by
# name, or by a pattern such as builder/cli/cmd_*.c), and each of its tables has its |---| line
# right under its header
check_map() {
	python3 - "$1" <<'PY'
import fnmatch, glob, os, re, sys
os.chdir(sys.argv[1])
doc = open("docs/architecture.md").read()
words = set(re.findall(r"[\w./*-]+\.(?:c|sh)\b", doc))
bad = []
for f in sorted(glob.glob("builder/*/*.[c]") + glob.glob("builder/*/*.sh") + glob.glob("guest/*.c")):
    if not any(w == os.path.basename(f) or fnmatch.fnmatch(f, w) for w in words):
        bad.append(f"docs/architecture.md does not name {f}")
lines = doc.split("\n")
for i, l in enumerate(lines[:-1]):
    if l.startswith("|") and not lines[i - 1].startswith("|") and not re.match(r"\|[-| ]+\|$", lines[i + 1]):
        bad.append(f"docs/architecture.md:{i + 2}: a table row above the |---| line")
if bad:
    print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
check "docs/architecture.md names every source file and its tables are well formed" check_map .

# The same check must fail on a copy whose comment and doc name files that moved.
mkdir "$tmp/t"
git ls-files -co --exclude-standard | grep -v '^build/' | tar -cf - -T - 2>/dev/null | tar -xf - -C "$tmp/t"
printf '/* the table is builder/report/metrics.h */\n' >>"$tmp/t/builder/core/log.c"
printf 'See builder/vm/disk_bus.c.\n' >>"$tmp/t/docs/disks.md"
check_stale() {
	(cd "$tmp/t" && git init -q . && git add -A) >/dev/null 2>&1
	check_paths "$tmp/t" >"$tmp/out" && return 1
	grep -q 'builder/core/log.c:[0-9]*: builder/report/metrics.h' "$tmp/out" &&
		grep -q 'docs/disks.md:[0-9]*: builder/vm/disk_bus.c' "$tmp/out"
}
check "a comment and a doc naming moved files fail" check_stale
grep -v 'builder/run/devices.c' docs/architecture.md | awk '/^\|---\|---\|$/ && !x {getline l; print l; x=1} {print}' >"$tmp/t/docs/architecture.md"
map_fails() {
	check_map "$tmp/t" >"$tmp/out" && return 1
	grep -q 'does not name builder/run/devices.c' "$tmp/out" && grep -q 'a table row above' "$tmp/out"
}
check "a file missing from docs/architecture.md and a row above a table's |---| fail" map_fails

echo "paths: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
