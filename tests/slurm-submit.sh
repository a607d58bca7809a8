#!/bin/sh
# `zbench slurm` without a Slurm (tests/integration/slurm.sh runs a real one, in make
# integration-slow): what --dry-run would submit, what is refused before anything is queued, and
# the job script's own refusals, run with the variables Slurm would set. Boots nothing.
# Prints "slurm-submit: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
ZBENCH=${ZBENCH:-./zbench}
. tests/check.inc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
m=tests/integration/resume.json   # 4 cells, unthrottled disks
p=tests/integration/parallel.json # 4 cells, throttled disks

"$ZBENCH" slurm -n 2 --max-at-once 1 -p bench -t 30 --dry-run -o "$tmp/r" "$m" \
	>"$tmp/dry.out" 2>"$tmp/dry.err"
check "--dry-run: exit 0, three sbatch commands" [ $? -eq 0 -a "$(grep -c '^sbatch ' "$tmp/dry.out")" -eq 3 ]
check "... the same in RUNS/slurm/sbatch.txt" cmp -s "$tmp/dry.out" "$tmp/r/slurm/sbatch.txt"
check "... job.sh is the repository's script, executable" \
	cmp -s builder/cli/slurm_job.sh "$tmp/r/slurm/job.sh" && [ -x "$tmp/r/slurm/job.sh" ]
img=$(sed -n 1p "$tmp/dry.out") task=$(sed -n 2p "$tmp/dry.out") merge=$(sed -n 3p "$tmp/dry.out")
hash=${img##* }
check "image job: exclusive, builds the recipe, names the hash" \
	sh -c 'case $1 in *" --exclusive "*"/job.sh image "*"/images/debian12-zfs.json "[0-9a-f]*) exit 0;; esac; exit 1' - "$img"
check "array: 1-2%1, requeue, after the image, partition, time, resume.json" \
	sh -c 'case $1 in *--partition=bench*--array=1-2%1" --requeue --time=30 --dependency=afterok:IMAGEJOB "*" task "*" 2 "*/tests/integration/resume.json*) exit 0;; esac; exit 1' - "$task"
check "merge: afterany on the array" \
	sh -c 'case $1 in *"--dependency=afterany:ARRAYJOB "*" merge "*" 2") exit 0;; esac; exit 1' - "$merge"
check "the shards' cells printed (3 + 1)" grep -q "4 cells x 1 repeats in 2 shards: 3 1" "$tmp/dry.err"
"$ZBENCH" slurm -n 2 --one-per-node --no-image-job --dry-run -o "$tmp/r2" "$m" >"$tmp/dry2.out" 2>/dev/null
check "--one-per-node: the array is --exclusive; --no-image-job: two jobs, no afterok" \
	[ "$(grep -c '^sbatch ' "$tmp/dry2.out")" -eq 2 ] &&
	grep -q -- '--array=1-2 --requeue --exclusive ' "$tmp/dry2.out" && ! grep -q afterok "$tmp/dry2.out"
"$ZBENCH" slurm -n 4 --dry-run -o "$tmp/r3" "$p" >/dev/null 2>&1
check "throttled disks: tasks may share a node" [ $? -eq 0 ]
"$ZBENCH" slurm -n 1 --dry-run -o "$tmp/r4" "$m" >/dev/null 2>&1
check "one task: no other to share its node" [ $? -eq 0 ]

# refusals: exit 2, nothing created
refused() { # NAME PATTERN ARGS...
	name=$1 pat=$2
	shift 2
	"$ZBENCH" slurm --dry-run -o "$tmp/$name" "$@" >/dev/null 2>"$tmp/$name.err"
	[ $? -eq 2 ] && [ ! -e "$tmp/$name" ] && grep -q -- "$pat" "$tmp/$name.err"
}
check "no -n: refused" refused non "--shards (-n) is required" "$m"
check "-n 0: refused" refused n0 "wants 1 to" -n 0 "$m"
check "-n 5 of 4 cells: refused" refused n5 "5 shards of 4 cells" -n 5 "$m"
check "unthrottled disks, tasks may share a node: refused" \
	refused share "may share a node.*disk 'd0' of cell .* is not throttled" -n 2 "$m"
check "a matrix of several images: refused" refused imgs "compares several images" -n 2 \
	matrices/seed001-pr6566-ab.json
check "--accel other: refused" refused acc "--accel 'xen': expected one of auto|kvm|tcg" -n 2 --accel xen "$m"
jq '.image = "../images/debian12-zfs.json"' "$m" >"$tmp/climb.json"
check "a matrix's recipe with '..': refused" refused climb "must be a relative path" -n 2 \
	--max-at-once 1 "$tmp/climb.json"
jq '.image = "images/debian12-zfs-src.json"' "$m" >"$tmp/src.json"
check "a matrix's recipe whose build runs code: refused" refused src "whose build runs code" \
	-n 2 --max-at-once 1 "$tmp/src.json"
"$ZBENCH" slurm -n 2 --max-at-once 1 --dry-run -i images/debian12-zfs-src.json -o "$tmp/src-i" \
	"$tmp/src.json" >/dev/null 2>&1
check "... the same recipe given with -i: submitted" [ $? -eq 0 ]
mkdir "$tmp/exists"
"$ZBENCH" slurm -n 2 --max-at-once 1 --dry-run -o "$tmp/exists" "$m" >/dev/null 2>"$tmp/exists.err"
check "an -o that exists: refused" [ $? -eq 2 ] && grep -q "exists" "$tmp/exists.err"

# sbatch refusing the second job: the first is cancelled (stand-ins for sbatch and scancel that
# write down how they were called)
mkdir "$tmp/bin"
cat >"$tmp/bin/sbatch" <<EOF
#!/bin/sh
n=\$(( \$(cat "$tmp/calls" 2>/dev/null || echo 0) + 1 ))
echo \$n >"$tmp/calls"
[ \$n -eq 2 ] && { echo "sbatch: error: Batch job submission failed: Invalid partition name specified" >&2; exit 1; }
echo \$((40 + n))
EOF
printf '#!/bin/sh\necho "$*" >>"%s/scancel.args"\n' "$tmp" >"$tmp/bin/scancel"
chmod +x "$tmp/bin/sbatch" "$tmp/bin/scancel"
PATH="$tmp/bin:$PATH" "$ZBENCH" slurm -n 2 --max-at-once 1 -o "$tmp/half" "$m" >/dev/null 2>"$tmp/half.err"
check "sbatch refusing the array: exit 2, said" \
	[ $? -eq 2 ] && grep -q "sbatch refused the array job" "$tmp/half.err"
check "... the image job (41) already queued is cancelled" [ "$(cat "$tmp/scancel.args")" = 41 ]

# the job script, with what Slurm sets
job="$tmp/r/slurm/job.sh"
zb=$(pwd)/zbench
arr() { # MIN MAX COUNT ID CMD...
	a=$1 b=$2 c=$3 i=$4
	shift 4
	SLURM_ARRAY_TASK_MIN=$a SLURM_ARRAY_TASK_MAX=$b SLURM_ARRAY_TASK_COUNT=$c SLURM_ARRAY_TASK_ID=$i "$@"
}
arr 1 3 3 1 "$job" task "$zb" "$tmp/j" 2 "$m" "$tmp/j" images/debian12-zfs.json "$hash" 2>"$tmp/j1.err"
check "task of an array of 3 for 2 shards: exit 2, the --array to use" \
	[ $? -eq 2 ] && grep -q "this array has 3 tasks (1-3), the run has 2 shards: submit it with --array=1-2" "$tmp/j1.err"
env -u SLURM_ARRAY_TASK_ID "$job" task "$zb" "$tmp/j" 2 "$m" "$tmp/j" images/debian12-zfs.json "$hash" 2>"$tmp/j2.err"
check "task outside an array: exit 2" [ $? -eq 2 ] && grep -q "not an array task" "$tmp/j2.err"
mkdir "$tmp/empty"
arr 1 2 2 1 "$job" task "$zb" "$tmp/j" 2 "$m" "$tmp/empty" images/debian12-zfs.json "$hash" 2>"$tmp/j3.err"
check "a node without the image: exit 2, naming node, image and cache, nothing built" \
	[ $? -eq 2 -a -z "$(ls "$tmp/empty")" ] &&
	grep -q "node $(hostname) has no image $hash of 'images/debian12-zfs.json' in '$tmp/empty'" "$tmp/j3.err"
"$job" merge "$zb" "$tmp/j" 2 2>"$tmp/j4.err"
check "merge without any shard: exit 2" [ $? -eq 2 ] && grep -q "no shard of 2 has a run" "$tmp/j4.err"
"$job" bogus 2>"$tmp/j5.err"
check "job.sh of another kind: exit 2" [ $? -eq 2 ] && grep -q "image, task or merge" "$tmp/j5.err"
check "nothing ran: no shard directory" [ ! -e "$tmp/j" ]

echo "slurm-submit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
